/**
 * Servers the runtime transport took out of rotation but HAProxy would not delete yet (idle
 * connections still attached): kept in maintenance, gone from the file, and deleted on a later
 * try (every 2 s, in turn with the applies) or by the next reload, whose new worker has only what
 * the file says. A member that comes back meanwhile is repointed and released, never added twice.
 */
export class ParkedServers {
  /** backend -> its parked servers. */
  private readonly parked = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** `del server`: true when HAProxy deleted it (or has no such server). */
    private readonly tryDelete: (backend: string, server: string) => Promise<boolean>,
    /** Runs the retry in turn with the adapter's applies. */
    private readonly inTurn: (retry: () => Promise<void>) => void,
  ) {}

  /** Every parked server, as `backend/server`. */
  get list(): string[] {
    return [...this.parked].flatMap(([b, set]) => [...set].map((s) => `${b}/${s}`));
  }

  has(backend: string, server: string): boolean {
    return this.parked.get(backend)?.has(server) ?? false;
  }

  /** Brought back into the pool: no longer to delete. */
  release(backend: string, server: string): void {
    const set = this.parked.get(backend);
    set?.delete(server);
    if (set?.size === 0) this.parked.delete(backend);
  }

  park(backend: string, server: string): void {
    let set = this.parked.get(backend);
    if (!set) this.parked.set(backend, (set = new Set()));
    set.add(server);
    // Idle connections are purged within seconds: try again then, in turn with applies.
    this.timer ??= setInterval(() => this.inTurn(() => this.deleteNow()), 2000);
    this.timer.unref();
  }

  /** A reload: the new worker has only what the file says, so nothing is parked any more. */
  clear(): void {
    this.parked.clear();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Tries to delete every parked server now (before each apply, and on the timer). */
  async deleteNow(): Promise<void> {
    for (const [backend, servers] of this.parked) {
      for (const s of [...servers]) {
        if (await this.tryDelete(backend, s).catch(() => false)) servers.delete(s);
      }
      if (servers.size === 0) this.parked.delete(backend);
    }
    if (this.parked.size === 0) this.stop();
  }
}
