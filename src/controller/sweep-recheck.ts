/**
 * What the sweep's pass builds again of the pools, a slice at a time. The sweep plans every object
 * against the device as just read, and builds the frontends again once a certificate they hold has
 * expired (desired-cache.ts), but keeps the pools the desired-state cache holds: built again at once, at 1,000 Services they
 * held the event loop for a few hundred ms, and every change arriving meanwhile waited (the
 * process-cost bench's tail). The safety net they were, a pool whose inputs changed without the
 * controller being told, is kept a slice per sweep: the pools of `perSweep` Services in turn are
 * built again from their inputs, so every pool is looked at again within a bounded number of
 * sweeps, and a sweep's work follows time, not the cluster's size.
 */
export class SweepRecheck {
  private cursor = 0;

  constructor(private readonly perSweep = 200) {}

  /** The next Services (namespace/name) of `services` whose pools the sweep builds again. */
  next(services: readonly { metadata: { namespace: string; name: string } }[]): string[] {
    if (services.length === 0 || this.perSweep <= 0) return [];
    if (this.cursor >= services.length) this.cursor = 0;
    const slice = services.slice(this.cursor, this.cursor + this.perSweep);
    this.cursor += slice.length;
    return slice.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
  }
}
