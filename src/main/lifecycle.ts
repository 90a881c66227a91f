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

export async function runUntilSignal(
  component: Runnable,
  log: Logger,
  stoppingMessage: string,
): Promise<number> {
  const stopping = waitForSignal();
  try {
    await Promise.race([component.start(), stopping]);
  } catch (err) {
    await component.stop();
    throw err;
  }
  const sig = await stopping;
  log.info({ signal: sig }, stoppingMessage);
  await component.stop();
  return 0;
}
