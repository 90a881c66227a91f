/**
 * The log of load-balancer passes: one info line per pass that changed something (per operation
 * and kind, with its duration), and one warn per failed object and code at most once a minute.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import type { Logger } from '../runtime/logger.ts';

export class PassLog {
  constructor(private readonly log: Logger) {}

  /** When each failed object (kind/name/code) was last warned about. */
  private readonly warned = new Map<string, number>();

  /** Failures remembered for their minute (for tests). */
  get remembered(): number {
    return this.warned.size;
  }

  /**
   * One info line per pass that changed something (per operation and kind, with its duration),
   * and one warn per failed object and code at most once a minute.
   */
  record(applied: ApplyResult[], ms: number): void {
    if (applied.length === 0) return;
    const counts: Record<string, number> = {};
    let failed = 0;
    for (const r of applied) {
      if (!r.ok) failed++;
      else counts[`${r.change.op}s.${r.change.kind}`] = (counts[`${r.change.op}s.${r.change.kind}`] ?? 0) + 1;
    }
    this.log.info({ ...counts, failed, durationMs: ms }, 'load balancer updated');
    const now = Date.now();
    for (const r of applied) {
      if (r.ok || !r.error) continue;
      const key = `${r.change.kind}/${r.change.name}/${r.error.code}`;
      if (now - (this.warned.get(key) ?? -Infinity) < 60_000) continue;
      // In the order they were warned about (a key warned again goes last): what no longer
      // holds a warning back is at the front, forgotten below up to the first that still does.
      this.warned.delete(key);
      this.warned.set(key, now);
      this.log.warn(
        {
          kind: r.change.kind,
          name: r.change.name,
          op: r.change.op,
          code: r.error.code,
          terminal: r.error.terminal,
        },
        r.error.message,
      );
    }
    for (const [k, at] of this.warned) {
      if (now - at < 60_000) break;
      this.warned.delete(k);
    }
  }
}
