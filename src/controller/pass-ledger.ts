/**
 * The load-balancer passes' ledger: what they have in flight, what is parked after a terminal
 * failure, when each pool was last written, which pass last applied each object, and the pools as
 * the device has them as far as we know. Passes overlap (up to the adapter's apply concurrency);
 * the ledger is what they share, so two writes to one object never race and order holds. A value
 * of its own, tested alone (test/unit/controller/pass-ledger.test.ts); the reconciler reads and
 * writes it around each apply.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import type { Change, Plan } from '../plan/diff.ts';
import type { Pool } from '../model/types.ts';
import { type Gated, gateChanges, objectKey, parks, wantedOf } from './pass-gates.ts';

export class PassLedger {
  /** When each pool was last written (ms, the pass clock), for the per-pool write interval. */
  private readonly poolWrites = new Map<string, number>();
  /**
   * Objects (kind/name) whose last apply failed terminally, with the desired object that failed
   * (the normalised, shared instance; 'delete' for a delete): not sent again until their desired
   * state changes, so one bad object never costs every pass a doomed write.
   */
  private readonly parked = new Map<string, object | 'delete'>();
  /** Objects a pass is applying now. */
  private readonly inflight = new Set<string>();
  /** Whether a pass held a change back for an object in flight (a new pass is due on release). */
  private waitingOnFlight = false;
  /** The sequence of the pass that last applied each object, while passes overlap. */
  private readonly appliedBy = new Map<string, number>();
  /** The pools as the device has them: as last read, with every pool change applied since. */
  private readonly known = new Map<string, Pool>();
  /** Pass sequence, and passes between planning and their end. */
  private seq = 0;
  private active = 0;

  /** A new pass's sequence number. */
  next(): number {
    return ++this.seq;
  }

  /** Whether a pass started after `seq` (that pass is superseded). */
  overtaken(seq: number): boolean {
    return this.seq !== seq;
  }

  get latest(): number {
    return this.seq;
  }

  /** A pass planned (`begin`) or done (`end`); the applied-by record goes once no pass overlaps. */
  begin(): void {
    this.active++;
  }
  end(): void {
    this.active--;
  }

  /** When a pool was last written (the pass clock), undefined when not since start. */
  poolWrittenAt(name: string): number | undefined {
    return this.poolWrites.get(name);
  }

  /** A pool as the device has it (as last read, with what was applied since); undefined if unknown. */
  knownPool(name: string): Pool | undefined {
    return this.known.get(name);
  }

  /** The device read again: what it has is known anew. */
  read(pools: ReadonlyMap<string, Pool>): void {
    this.known.clear();
    for (const [n, pool] of pools) this.known.set(n, pool);
  }

  /**
   * The plan's changes gated (pass-gates.ts): those that go now, and those held (in flight, parked,
   * within their pool's write interval). A parked object the device now matches (diffed, no
   * change planned), or whose desired state changed, is no longer parked.
   */
  gate(p: Plan, diffed: readonly string[], now: number, poolIntervalMs: number): Gated {
    if (this.parked.size > 0) {
      const planned = new Set(p.changes.map(objectKey));
      const looked = new Set(diffed);
      for (const k of [...this.parked.keys()]) if (!planned.has(k) && looked.has(k)) this.parked.delete(k);
    }
    const g = gateChanges(p.changes, {
      inflight: this.inflight,
      parked: this.parked,
      poolWrites: this.poolWrites,
      now,
      poolIntervalMs,
    });
    for (const k of g.unpark) this.parked.delete(k);
    if (g.waitsOnFlight) this.waitingOnFlight = true;
    return g;
  }

  /** The changes' objects are in flight. */
  claim(changes: readonly Change[]): void {
    for (const c of changes) this.inflight.add(objectKey(c));
  }

  /**
   * What an apply did, recorded before its objects are released (no await between): when each
   * pool was written, what failed terminally (parked), the pools the device now has.
   */
  record(applied: readonly ApplyResult[], at: number): void {
    const failed = new Set(applied.filter((r) => !r.ok).map((r) => objectKey(r.change)));
    for (const r of applied) {
      if (!r.ok) {
        // Retrying the same thing cannot help: park it until its desired state changes.
        if (r.error?.terminal && parks(r.change, failed))
          this.parked.set(objectKey(r.change), wantedOf(r.change));
        continue;
      }
      if (r.change.kind !== 'pool') continue;
      if (r.change.op === 'delete') {
        this.poolWrites.delete(r.change.name);
        this.known.delete(r.change.name);
      } else {
        this.poolWrites.set(r.change.name, at);
        this.known.set(r.change.name, r.change.desired);
      }
    }
  }

  /** The changes' objects released; true when a pass waited on them (a new pass is due). */
  release(changes: readonly Change[]): boolean {
    for (const c of changes) this.inflight.delete(objectKey(c));
    const waited = this.waitingOnFlight;
    this.waitingOnFlight = false;
    return waited;
  }

  /** Pass `seq` applied these changes. */
  applied(changes: readonly Change[], seq: number): void {
    for (const c of changes) this.appliedBy.set(objectKey(c), seq);
  }

  /** Objects that still differ from the device after pass `seq`: held, failed, or another pass's to tell. */
  pending(held: ReadonlySet<string>, applied: readonly ApplyResult[], seq: number): Set<string> {
    const out = new Set(held);
    for (const r of applied) if (!r.ok) out.add(objectKey(r.change));
    for (const k of this.inflight) out.add(k);
    for (const [k, by] of this.appliedBy) if (by > seq) out.add(k);
    return out;
  }

  /** Once a pass has reported: with no other pass running, who applied what no longer matters. */
  reported(): void {
    if (this.active === 1) this.appliedBy.clear();
  }
}
