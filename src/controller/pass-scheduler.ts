/**
 * When load-balancer passes run: one logical key (the load balancer) with a concurrency, instead of
 * worker-slot keys in the work queue. Bursts of requests coalesce: a pass starts at once when none
 * runs, else no sooner than `spacingMs()` after the last start, and paced further as the slots
 * fill (`paceMs`); a pass queued to start sees every
 * change requested before it starts. Passes overlap up to `slots()` (what the device's apply time
 * covers; at most `maxSlots`); a request while every slot is busy runs one more pass after. A
 * failed pass is retried with capped exponential backoff; a pass may ask to run again after a
 * delay (a pool waiting for its write interval).
 */
import { Backoff, type BackoffOptions } from '../runtime/backoff.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';

export interface PassSchedulerOptions {
  /** One pass; `deferredMs`: run again after this long. */
  pass: () => Promise<{ deferredMs?: number | undefined } | void>;
  /** Passes that may run at once (the adapter's apply concurrency, 1..16). */
  maxSlots: number;
  /** How many slots to use now (the device's apply time over the planning time); at least 1. */
  slots: () => number;
  /** Least time between two starts while a pass runs. */
  spacingMs: () => number;
  /**
   * How long a device call takes (its usual time). With it, starts are paced as passes fill the
   * slots (see `request`), so a burst of single changes does not take every slot for a device
   * call each and leave the next change waiting a whole call for one.
   */
  deviceMs?: () => number;
  backoff: BackoffOptions;
  log: Logger;
  onError?: (err: unknown) => void;
}

export class PassScheduler {
  private running = 0;
  /** A pass is about to start: it will see every change so far. */
  private queued = false;
  /** A request came while every slot was busy: one more pass when one ends. */
  private again = false;
  private lastStart = 0;
  private spacing: NodeJS.Timeout | undefined;
  private later: { at: number; timer: NodeJS.Timeout; retry: boolean } | undefined;
  private readonly backoff: Backoff;
  private stopped = false;
  /** Passes run only once started (the caches synced); a request before is remembered. */
  private started = false;
  private requestedEarly = false;
  private waiters: (() => void)[] = [];
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly o: PassSchedulerOptions) {
    this.backoff = new Backoff(o.backoff);
  }

  /** Passes running now. */
  get active(): number {
    return this.running;
  }

  /** When the last pass started (`Date.now()`), the instant the pacing counts from. */
  get lastStartAt(): number {
    return this.lastStart;
  }

  /** Failed passes in a row (0 once one succeeds). */
  get failures(): number {
    return this.backoff.failures;
  }

  /** Lets passes run; one runs at once if any was asked for before. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    if (this.requestedEarly) this.request();
  }

  /** Asks for a pass (coalesced with others). */
  request(): void {
    if (!this.started) {
      this.requestedEarly = true;
      return;
    }
    if (this.stopped || this.spacing) return;
    const window = this.running === 0 ? 0 : Math.max(this.o.spacingMs(), this.paceMs());
    const wait = this.lastStart + window - Date.now();
    if (wait <= 0) {
      this.launch();
      return;
    }
    this.spacing = setTimeout(() => {
      this.spacing = undefined;
      // Asked again, not launched: a pass may have started since this wait was set (one that was
      // queued then), and the next start is paced from it.
      this.request();
      this.settle();
    }, wait);
  }

  /**
   * The least time between starts as the slots fill: `running` / `slots` of the time a device call
   * takes spread over the slots (none with no pass running, a full `deviceMs / slots` with every
   * slot but one busy). Passes started that far apart use the slots in turn: whatever arrives
   * meanwhile goes in the next pass, which waits for its start at most `deviceMs / slots` (12.5 ms
   * for 8 calls of 100 ms), instead of finding every slot taken by a pass of one change each and
   * waiting for one of them to end (up to a whole device call).
   */
  private paceMs(): number {
    const device = this.o.deviceMs?.() ?? 0;
    const slots = Math.max(1, Math.min(this.o.maxSlots, this.o.slots()));
    if (device <= 0 || slots <= 1) return 0;
    return (device / slots) * Math.min(1, this.running / (slots - 1));
  }

  /**
   * Asks for a pass after `ms` (one timer: the soonest asked for). A deferred pass is work still to
   * do (the scheduler is not idle until it ran); a retry after a failure is not.
   */
  requestAfter(ms: number, retry = false): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    if (this.later && this.later.at <= at) {
      if (!retry && this.later.retry) {
        this.later.retry = false;
        this.later.timer.ref();
      }
      return;
    }
    clearTimeout(this.later?.timer);
    const timer = setTimeout(() => {
      this.later = undefined;
      this.request();
      this.settle();
    }, ms);
    // A deferral (a pool's write interval, ~100 ms) is work the process is waiting for; a retry
    // must not keep a stopping process alive.
    if (retry) timer.unref();
    this.later = { at, timer, retry };
  }

  private launch(): void {
    if (this.stopped || this.queued) return;
    const slots = Math.max(1, Math.min(this.o.maxSlots, this.o.slots()));
    if (this.running >= slots) {
      this.again = true;
      return;
    }
    this.queued = true;
    const run = this.run();
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
  }

  private async run(): Promise<void> {
    // Starts on the next turn, so requests of this turn are in it.
    await new Promise<void>((r) => setImmediate(r));
    this.queued = false;
    if (this.stopped) {
      this.settle();
      return;
    }
    this.running++;
    this.lastStart = Date.now();
    try {
      const r = await this.o.pass();
      this.backoff.reset();
      if (r?.deferredMs !== undefined) this.requestAfter(r.deferredMs);
    } catch (err) {
      this.o.onError?.(err);
      const wait = this.backoff.next();
      this.o.log.warn({ key: 'lb', err: errorMessage(err), retryInMs: wait }, 'reconcile failed; retrying');
      this.requestAfter(wait, true);
    } finally {
      this.running--;
      if (this.again) {
        // Asked, not launched: the pass that waited for this slot is paced from the last start
        // like any other (it starts at once when the last start is that far back, as it mostly is).
        this.again = false;
        this.request();
      }
      this.settle();
    }
  }

  private settle(): void {
    if (!this.idle) return;
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Whether no pass runs, is about to start, or waits for its time (a retry after a failure aside). */
  get idle(): boolean {
    return this.running === 0 && !this.queued && this.spacing === undefined && (this.later?.retry ?? true);
  }

  /** Resolves when the scheduler is idle. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.spacing);
    this.spacing = undefined;
    clearTimeout(this.later?.timer);
    this.later = undefined;
    await Promise.all([...this.inFlight]);
    this.settle();
  }
}
