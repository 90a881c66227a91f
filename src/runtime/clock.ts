/**
 * Time, injected: production uses the real clock, tests a fake one that never sleeps for real.
 */
import { setTimeout as delay } from 'node:timers/promises';

export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    try {
      await delay(ms, undefined, signal ? { signal } : undefined);
    } catch {
      // aborted: wake up early
    }
  },
};
