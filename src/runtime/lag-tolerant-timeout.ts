/**
 * A timeout whose verdict waits for the I/O the process already has. A process busy past a
 * deadline (a loaded machine, a long synchronous step) finds the timer and the answer it races
 * due in the same turn of the event loop, and timers run before I/O is read: the answer that came
 * in time would lose. Here the timer only schedules `onTimeout` for after the next poll of I/O
 * (setImmediate), so an answer already waiting is read first; `onTimeout` must ignore a call once
 * the race is settled. The returned timer is cleared (and unref'd) as any other.
 */
export function lagTolerantTimeout(onTimeout: () => void, ms: number): NodeJS.Timeout {
  return setTimeout(() => setImmediate(onTimeout), ms);
}
