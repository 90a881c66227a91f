/**
 * Reads the members' health from the device (the adapter's optional `health()`) on a slow timer
 * and on demand, never on the write path, and hands it to the state tracker. A failed read keeps
 * the previous states with the error beside them; concurrent requests share one read.
 */
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import type { Logger } from '../runtime/logger.ts';
import type { StateTracker } from './state.ts';

export class HealthMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private lastError: string | undefined;
  readonly stats = { reads: 0, failures: 0 };

  /** Where the timer's next slice starts in the rotation of pools. */
  private cursor = 0;
  /** The timer's slice being read. */
  private slice: Promise<void> | undefined;

  constructor(
    private readonly adapter: LoadBalancerAdapter,
    private readonly state: StateTracker,
    private readonly intervalMs: number,
    private readonly log: Logger,
    /**
     * The pools to read in turn (the desired state's), and how many per tick where a read costs a
     * call per pool (Capabilities.healthSlices): the timer's work then follows time, not the
     * number of pools; an on-demand read (a gate waiting) still reads them all.
     */
    private readonly slices: { pools: () => readonly { name: string }[]; perTick: number } = {
      pools: () => [],
      perTick: 100,
    },
  ) {}

  get supported(): boolean {
    return typeof this.adapter.health === 'function';
  }

  start(): void {
    if (!this.supported || this.intervalMs <= 0) return;
    this.stopped = false;
    // The first read after one interval: at start-up the device is busy with the first sync.
    this.schedule(this.intervalMs);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      void this.tick().finally(() => this.schedule(this.intervalMs));
    }, ms);
    this.timer.unref();
  }

  /** The timer's read: the next slice of the pools where reads are per pool, else all of them. */
  private tick(): Promise<void> {
    if (!this.adapter.capabilities().healthSlices) return this.refresh();
    const all = this.slices.pools();
    // No pass has handed over its pools yet (a cold start still applying): nothing of ours to read.
    // A whole read then listed every pool on the device and read each, a call apiece: at 1,000
    // Services about 13 s of device calls beside the first sync's (the process-cost bench).
    if (all.length === 0) return Promise.resolve();
    if (all.length <= this.slices.perTick) return this.refresh();
    if (this.cursor >= all.length) this.cursor = 0;
    const names = all.slice(this.cursor, this.cursor + this.slices.perTick).map((p) => p.name);
    this.cursor += names.length;
    // A slice apart from a whole read: a gate's refresh() never takes a slice for a whole read.
    this.slice ??= this.read(names).finally(() => (this.slice = undefined));
    return this.slice;
  }

  /** Reads health now (or joins the read under way); resolves when it is recorded. */
  refresh(): Promise<void> {
    if (!this.adapter.health) return Promise.resolve();
    this.running ??= this.read().finally(() => (this.running = undefined));
    return this.running;
  }

  /** One read: of `pools` alone (a slice), or of every pool. */
  private async read(pools?: string[]): Promise<void> {
    this.stats.reads++;
    try {
      const started = Date.now();
      const list = await this.adapter.health!(pools);
      if (pools) this.state.setHealthOf(pools, list);
      else this.state.setHealth(list, started);
      if (this.lastError) this.log.info('health read from the load balancer again');
      this.lastError = undefined;
    } catch (err) {
      this.stats.failures++;
      const message = err instanceof Error ? err.message : String(err);
      // Logged when it starts or changes, not at every tick of an outage.
      if (message !== this.lastError)
        this.log.warn({ err: message }, 'cannot read health from the load balancer');
      this.lastError = message;
      this.state.setHealthError(message);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
    await this.slice?.catch(() => undefined);
  }
}
