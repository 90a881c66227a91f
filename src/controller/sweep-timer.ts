/**
 * The sweep: a whole pass now and then (the device observed again, everything planned), the
 * level-triggered safety net that repairs what changed on the device by hand. A whole pass costs
 * what the cluster's size does, so a fixed period would make the controller's idle work grow with
 * the cluster; instead the period stretches so that whole passes take at most a share of one core
 * (`SWEEP_CPU_SHARE`): every `everyMs` while they are cheap, less often once they are not. The
 * cost is the process's CPU over the last whole pass and the read of the device before it (which
 * goes on behind the passes: read-behind.ts), measured by the controller. Events and
 * changes never wait for it: they have passes of their own.
 */

/** The share of one core whole passes may take, over time (0.5 %). */
export const SWEEP_CPU_SHARE = 0.005;
/** The period is stretched at most this many times: drift is still repaired within ten periods. */
export const SWEEP_MAX_STRETCH = 10;

/**
 * The wait before the next sweep: `everyMs`, or longer when whole passes cost more than the share
 * (at most SWEEP_MAX_STRETCH periods).
 */
export function nextSweepMs(everyMs: number, wholePassCpuMs: number, share = SWEEP_CPU_SHARE): number {
  const byCost = Number.isFinite(wholePassCpuMs) && wholePassCpuMs > 0 ? wholePassCpuMs / share : 0;
  return Math.min(everyMs * SWEEP_MAX_STRETCH, Math.max(everyMs, Math.round(byCost)));
}

export class SweepTimer {
  private timer: NodeJS.Timeout | undefined;
  private lastCostMs = 0;
  private stopped = true;

  constructor(
    private readonly everyMs: number,
    private readonly sweep: () => void,
  ) {}

  /** The wait the timer arms next (ms). */
  get nextMs(): number {
    return nextSweepMs(this.everyMs, this.lastCostMs);
  }

  start(): void {
    if (this.everyMs <= 0) return;
    this.stopped = false;
    this.arm();
  }

  /**
   * What the last whole pass cost (ms of the process's CPU). A timer armed after a costlier one
   * (a cold start's first pass) is brought forward to what this cost allows; one armed after a
   * cheaper one is kept (the next is spaced further).
   */
  wholePassCost(cpuMs: number): void {
    this.lastCostMs = cpuMs;
    if (this.stopped || this.timer === undefined) return;
    const due = this.armedAt + this.nextMs;
    if (due < this.dueAt) this.arm(Math.max(0, due - Date.now()), this.armedAt);
  }

  private armedAt = 0;
  private dueAt = 0;

  /** Arms the timer `ms` from now; `armedAt`: when the wait it stands for began. */
  private arm(ms = this.nextMs, armedAt = Date.now()): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.armedAt = armedAt;
    this.dueAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.sweep();
      this.arm();
    }, ms);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
