/**
 * The load balancer as the reconciler last saw it, carried forward without asking the device:
 * after a fully successful pass it is what we applied, plus every other desired object we own (not
 * deferred, not in conflict), which the device now equals.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import { indexByName, type Observed, type Plan, withIndex } from '../plan/diff.ts';

/**
 * The observed state after a fully successful pass, without asking the device: what we applied,
 * and for every other desired object we own (not deferred, not in conflict) that the plan found
 * equal to the device but not by reference, the desired object itself; keeping those objects lets
 * the next pass compare them by reference. Every other object is held as it was (objects change
 * between a pass's plan and its end only by passes that keep them pending here). When nothing
 * changes, the observed state is returned as it is, indexes and all.
 */
export function afterPass(
  observed: Observed,
  applied: ApplyResult[],
  plan: Pick<Plan, 'conflicts' | 'equal'>,
  pending: Set<string>,
): Observed {
  const clash = new Set(plan.conflicts.map((c) => `${c.kind}/${c.name}`));
  const carried = <T extends { name: string }>(kind: string, held: T[], wanted: T[]): T[] => {
    const index = indexByName(held);
    return wanted.filter((want) => {
      const cur = index.get(want.name);
      if (cur === undefined || cur === want) return false;
      const k = `${kind}/${want.name}`;
      return !pending.has(k) && !clash.has(k);
    });
  };
  const carry = {
    pools: carried('pool', observed.owned.pools, plan.equal.pools),
    vss: carried('virtualService', observed.owned.virtualServices, plan.equal.virtualServices),
    certs: carried('certificate', observed.owned.certificates ?? [], plan.equal.certificates),
  };
  if (applied.length === 0 && carry.pools.length + carry.vss.length + carry.certs.length === 0)
    return observed;
  const pools = new Map(indexByName(observed.owned.pools));
  const vss = new Map(indexByName(observed.owned.virtualServices));
  const certs = new Map(indexByName(observed.owned.certificates ?? []));
  for (const { change: c } of applied) {
    if (c.kind === 'pool') {
      if (c.op === 'delete') pools.delete(c.name);
      else pools.set(c.name, c.desired);
    } else if (c.kind === 'certificate') {
      if (c.op === 'delete') certs.delete(c.name);
      else certs.set(c.name, c.desired);
    } else if (c.op === 'delete') vss.delete(c.name);
    else vss.set(c.name, c.desired);
  }
  for (const p of carry.pools) pools.set(p.name, p);
  for (const v of carry.vss) vss.set(v.name, v);
  for (const c of carry.certs) certs.set(c.name, c);
  return {
    owned: {
      pools: withIndex(pools),
      virtualServices: withIndex(vss),
      certificates: withIndex(certs),
    },
    foreign: observed.foreign,
  };
}
