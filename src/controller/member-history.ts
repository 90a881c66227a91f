/**
 * What happened to each member lately, from the controller's memory: its health as the device's
 * reads changed it, and the changes of it the controller applied (added, drained, enabled,
 * removed). The last hour's, bounded three ways: entries older than the window are dropped, a
 * member keeps its latest `perMember` entries, and past `members` members the one recorded least
 * recently is forgotten. Nothing is walked per tick: each record touches its member alone. Pure.
 */
export interface HistoryEntry {
  /** ISO time. */
  at: string;
  what: string;
}

export interface MemberHistoryOptions {
  windowMs?: number;
  perMember?: number;
  members?: number;
}

export class MemberHistory {
  /** Insertion order is recording order: the first key is the member recorded least recently. */
  private readonly byKey = new Map<string, HistoryEntry[]>();
  private readonly windowMs: number;
  private readonly perMember: number;
  private readonly members: number;

  constructor(
    opts: MemberHistoryOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.windowMs = opts.windowMs ?? 3_600_000;
    this.perMember = opts.perMember ?? 20;
    this.members = opts.members ?? 10_000;
  }

  record(key: string, what: string): void {
    const entries = (this.byKey.get(key) ?? []).filter((e) => this.fresh(e));
    entries.push({ at: new Date(this.now()).toISOString(), what });
    if (entries.length > this.perMember) entries.splice(0, entries.length - this.perMember);
    this.byKey.delete(key);
    this.byKey.set(key, entries);
    if (this.byKey.size > this.members) this.byKey.delete(this.byKey.keys().next().value!);
  }

  /** A member's entries within the window, oldest first. */
  of(key: string): HistoryEntry[] {
    return (this.byKey.get(key) ?? []).filter((e) => this.fresh(e));
  }

  get size(): number {
    return this.byKey.size;
  }

  private fresh(e: HistoryEntry): boolean {
    return this.now() - Date.parse(e.at) <= this.windowMs;
  }
}
