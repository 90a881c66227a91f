/**
 * A long-running subcommand's life: start, run until SIGINT or SIGTERM, stop. A start that fails
 * (or a signal during start) still stops what was started before the error goes up.
 */
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';
import { waitForSignal } from './sandbox.ts';

export interface Runnable {
  start(): Promise<void>;
  /** Stops everything the component started; safe after a failed start. */
  stop(): Promise<void>;
}

export interface RunOptions {
  /** Settles with an error to stop the component and exit with it (a replica that lost its Lease). */
  failure?: Promise<Error>;
  /**
   * How long `stop()` may take to drain in-flight work; past it the run fails with
   * NPL_SHUTDOWN_TIMEOUT so the process exits rather than hang past its grace period.
   */
  stopTimeoutMs?: number;
  /** What ends the run (SIGINT or SIGTERM by default). */
  signal?: Promise<string>;
}

/** `stop()`, bounded by a deadline when one is given. */
async function stopWithin(component: Runnable, timeoutMs: number | undefined, log: Logger): Promise<void> {
  if (timeoutMs === undefined) return component.stop();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new NplError(
            ErrorCodes.SHUTDOWN_TIMEOUT,
            `in-flight work did not drain within ${timeoutMs} ms; exiting without waiting further`,
          ),
        ),
      timeoutMs,
    );
  });
  const started = Date.now();
  try {
    await Promise.race([component.stop(), expired]);
    log.info({ ms: Date.now() - started }, 'stopped; in-flight work drained');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs until a signal (exit 0) or until `failure` settles with an error, which stops the component
 * and goes up (a controller replica that lost its Lease exits this way).
 */
export async function runUntilSignal(
  component: Runnable,
  log: Logger,
  stoppingMessage: string,
  opts: RunOptions = {},
): Promise<number> {
  const stopping = opts.signal ?? waitForSignal();
  const failed = (opts.failure ?? new Promise<Error>(() => {})).then((err): never => {
    throw err;
  });
  try {
    await Promise.race([component.start(), stopping, failed]);
    const sig = await Promise.race([stopping, failed]);
    log.info({ signal: sig }, stoppingMessage);
  } finally {
    await stopWithin(component, opts.stopTimeoutMs, log);
  }
  return 0;
}
