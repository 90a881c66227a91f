/**
 * How long the passes take, as the controller's scheduler reads it: the CPU time of a pass's
 * planning and the device's time per apply (moving averages that follow the last few values), and
 * how long the oldest apply in flight has been at the device. A value of its own, tested alone.
 */

/** A moving average that follows the last few values. */
export const ewma = (avg: number, x: number): number => (avg === 0 ? x : 0.7 * avg + 0.3 * x);

/** The most changes an apply may hold for its time to count as a device call's (deviceMs). */
export const SMALL_BATCH = 8;

export class DeviceTiming {
  /**
   * The planning's CPU time (desired state and diff) of the last passes that planned what changed,
   * ms: what spaces the passes of a stream of changes. A whole pass (a cold start, the sweep, a
   * recovery: everything built and compared) is counted apart (`wholePlanMs`): it is a one-off, and
   * counting it here held every change after it for twice its time, decaying over the next passes.
   */
  planMs = 0;
  /** The planning's CPU time of the last whole passes, ms (moving average). */
  wholePlanMs = 0;
  /**
   * How long an apply of a few changes takes (moving average, ms): about one device call, what
   * paces a stream of single changes. A larger batch (a cold start's hundreds of changes, a drain)
   * is not counted: its seconds are not a call's, and counted they held each change after it for
   * a share of them, decaying over the next passes.
   */
  deviceMs = 0;
  /** When each apply in flight started (performance.now()). */
  private readonly starts = new Map<object, number>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  /** A pass's planning time; `whole`: it built and compared everything. */
  planned(cpuMs: number, whole = false): void {
    if (whole) this.wholePlanMs = ewma(this.wholePlanMs, cpuMs);
    else this.planMs = ewma(this.planMs, cpuMs);
  }

  /**
   * Times one apply of `size` changes: `call` runs it; its time counts once it answers (a failure
   * counts nothing), if the batch is small (SMALL_BATCH changes at most).
   */
  async apply<T>(call: () => Promise<T>, size = 1): Promise<T> {
    const id = {};
    const t0 = this.clock();
    this.starts.set(id, t0);
    try {
      const out = await call();
      if (size <= SMALL_BATCH) this.deviceMs = ewma(this.deviceMs, this.clock() - t0);
      return out;
    } finally {
      this.starts.delete(id);
    }
  }

  /** How long the device has been at the oldest apply in flight (ms; 0 when none). */
  oldestApplyMs(): number {
    let oldest = Infinity;
    for (const t of this.starts.values()) oldest = Math.min(oldest, t);
    return oldest === Infinity ? 0 : this.clock() - oldest;
  }
}
