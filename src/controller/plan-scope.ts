/**
 * What a pass has to diff: the objects (kind/name) that may differ between the desired state and
 * the observed state the reconciler keeps. A pass diffs everything when the observed state was read
 * again or the frontends were rebuilt; otherwise it diffs the pools the desired-state cache rebuilt
 * plus what earlier passes left unsettled (held by the gates, failed, in conflict, or applied while
 * a later pass was planning), so a pass costs what changed, not what exists.
 *
 * Each key carries the sequence number of the pass that last marked it. A pass settles a key (it
 * now equals the device) only if no later pass marked it since; a pass that applied something while
 * a later pass had planned marks it for the next pass, since that later pass may have compared
 * against the state from before the apply.
 */
import type { ObservedByName } from '../plan/diff.ts';

export class PlanScope {
  private readonly marks = new Map<string, number>();
  private basis: ObservedByName | undefined;

  /** Set when a desired state was built from scratch: the next plan diffs everything. */
  private whole = true;

  /**
   * As pass `seq` builds its desired state: the pools that changed since the last build (`delta`,
   * as pool names; undefined: anything may have changed).
   */
  mark(delta: ReadonlySet<string> | undefined, seq: number): void {
    if (delta === undefined) this.whole = true;
    else for (const name of delta) this.marks.set(`pool/${name}`, seq);
  }

  /** The keys a plan against `observed` diffs now: undefined means everything. */
  keys(observed: ObservedByName): string[] | undefined {
    if (this.whole || observed !== this.basis) {
      this.whole = false;
      this.basis = observed;
      this.marks.clear();
      return undefined;
    }
    return [...this.marks.keys()];
  }

  /** After a full plan: what it found to do (changes and conflicts) is what stays to settle. */
  planned(keys: Iterable<string>, seq: number): void {
    for (const k of keys) this.marks.set(k, seq);
  }

  /**
   * At the end of pass `seq`: the keys it diffed settle unless still pending or in conflict, and
   * unless a later pass marked them; `newest` is the newest pass planned so far.
   */
  settle(
    diffed: Iterable<string>,
    unsettled: ReadonlySet<string>,
    applied: Iterable<string>,
    seq: number,
    newest: number,
  ): void {
    for (const k of diffed) {
      if (unsettled.has(k)) continue;
      const m = this.marks.get(k);
      if (m !== undefined && m <= seq) this.marks.delete(k);
    }
    if (newest > seq) for (const k of applied) this.marks.set(k, newest + 1);
  }

  /** Keys left to diff (for tests and the state document). */
  get size(): number {
    return this.marks.size;
  }
}
