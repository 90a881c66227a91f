/**
 * The load balancer as the reconciler last saw it, kept by name and carried forward without asking
 * the device: after a pass it is what we applied, plus every other object the pass found equal to
 * the device (not deferred, not in conflict), updated in place, so a pass costs what it touched.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import type { Equal, ObservedByName, Plan } from '../plan/diff.ts';

/**
 * Brings `observed` up to date after a pass whose results went through (those that failed left
 * the device as it was): what it applied, and, for every desired object we own that the plan found
 * equal to the device but not by reference (not pending, not in conflict), the desired object
 * itself, so the next pass compares it by reference. Every other object is held as it was (objects
 * change between a pass's plan and its end only by passes that keep them pending here).
 */
export function afterPass(
  observed: ObservedByName,
  applied: ApplyResult[],
  plan: Pick<Plan, 'conflicts' | 'equal'>,
  pending: ReadonlySet<string>,
): void {
  const clash = new Set(plan.conflicts.map((c) => `${c.kind}/${c.name}`));
  const carry = <T extends { name: string }>(
    kind: string,
    held: Map<string, T>,
    wanted: Equal<T>[],
  ): void => {
    for (const { want, seen } of wanted) {
      // Only over what the plan compared: another pass may have written the object since.
      if (held.get(want.name) !== seen) continue;
      const k = `${kind}/${want.name}`;
      if (!pending.has(k) && !clash.has(k)) held.set(want.name, want);
    }
  };
  carry('pool', observed.pools, plan.equal.pools);
  carry('virtualService', observed.virtualServices, plan.equal.virtualServices);
  carry('certificate', observed.certificates, plan.equal.certificates);
  overlay(observed, applied);
}

/**
 * What went through of `applied`, on top of `observed`: the object as written, or gone. A read
 * begun before a write may or may not show it; the write answered later, so it is what the device
 * holds (what failed left the device as it was, or unknown: the caller reads again).
 */
export function overlay(observed: ObservedByName, applied: readonly ApplyResult[]): void {
  for (const { change: c, ok } of applied) {
    if (!ok) continue;
    const held: Map<string, unknown> =
      c.kind === 'pool'
        ? observed.pools
        : c.kind === 'certificate'
          ? observed.certificates
          : observed.virtualServices;
    if (c.op === 'delete') held.delete(c.name);
    else held.set(c.name, c.desired);
    // Written as we write it: no longer drifted.
    observed.drifted.delete(`${c.kind}/${c.name}`);
  }
}
