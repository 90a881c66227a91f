/**
 * How long the passes take, as the controller's scheduler reads it: the CPU time of a pass's
 * planning and the device's time per apply (moving averages that follow the last few values), and
 * how long the oldest apply in flight has been at the device. A value of its own, tested alone.
 */

/** A moving average that follows the last few values. */
export const ewma = (avg: number, x: number): number => (avg === 0 ? x : 0.7 * avg + 0.3 * x);

export class DeviceTiming {
  /** The planning's CPU time (desired state and diff) of the last passes, ms. */
  planMs = 0;
  /** How long an apply takes (moving average, ms). */
  deviceMs = 0;
  /** When each apply in flight started (performance.now()). */
  private readonly starts = new Map<object, number>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  planned(cpuMs: number): void {
    this.planMs = ewma(this.planMs, cpuMs);
  }

  /** Times one apply: `call` runs it; its time counts once it answers (a failure counts nothing). */
  async apply<T>(call: () => Promise<T>): Promise<T> {
    const id = {};
    const t0 = this.clock();
    this.starts.set(id, t0);
    try {
      const out = await call();
      this.deviceMs = ewma(this.deviceMs, this.clock() - t0);
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
