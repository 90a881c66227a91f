/**
 * A long-running subcommand's life: start, run until SIGINT or SIGTERM, stop. A start that fails
 * (or a signal during start) still stops what was started before the error goes up.
 */
import type { Logger } from '../runtime/logger.ts';
import { waitForSignal } from './sandbox.ts';

export interface Runnable {
  start(): Promise<void>;
  /** Stops everything the component started; safe after a failed start. */
  stop(): Promise<void>;
}

/**
 * Runs until a signal (exit 0) or until `failure` settles with an error, which stops the component
 * and goes up (a controller replica that lost its Lease exits this way).
 */
export async function runUntilSignal(
  component: Runnable,
  log: Logger,
  stoppingMessage: string,
  failure: Promise<Error> = new Promise<Error>(() => {}),
): Promise<number> {
  const stopping = waitForSignal();
  const failed = failure.then((err): never => {
    throw err;
  });
  try {
    await Promise.race([component.start(), stopping, failed]);
    const sig = await Promise.race([stopping, failed]);
    log.info({ signal: sig }, stoppingMessage);
  } finally {
    await component.stop();
  }
  return 0;
}
