/**
 * The load balancer as the reconciler last saw it, carried forward without asking the device:
 * after a fully successful pass it is what we applied, plus every other desired object we own (not
 * deferred, not in conflict), which the device now equals.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import { normalizePool, normalizeVirtualService } from '../model/normalize.ts';
import type { LbState } from '../model/types.ts';
import { type Change, type Conflict, indexByName, type Observed, withIndex } from '../plan/diff.ts';

/**
 * The observed state after a fully successful pass, without asking the device: what we applied,
 * and for every other desired object we own (not deferred, not in conflict) the desired object
 * itself, which the device now equals; keeping those objects lets the next pass compare them by
 * reference.
 */
export function afterPass(
  observed: Observed,
  applied: ApplyResult[],
  desired: LbState,
  pending: Set<string>,
  conflicts: Conflict[],
): Observed {
  const pools = new Map(indexByName(observed.owned.pools));
  const vss = new Map(indexByName(observed.owned.virtualServices));
  const certs = new Map(indexByName(observed.owned.certificates ?? []));
  const put = (c: Change) => {
    if (c.kind === 'pool') {
      if (c.op === 'delete') pools.delete(c.name);
      else pools.set(c.name, c.desired);
    } else if (c.kind === 'certificate') {
      if (c.op === 'delete') certs.delete(c.name);
      else certs.set(c.name, c.desired);
    } else if (c.op === 'delete') vss.delete(c.name);
    else vss.set(c.name, c.desired);
  };
  for (const r of applied) put(r.change);
  const clash = new Set(conflicts.map((c) => `${c.kind}/${c.name}`));
  /** Carries the desired object over where the device now equals it (most are already it). */
  const carry = <T extends { name: string }>(kind: string, held: Map<string, T>, want: T) => {
    const cur = held.get(want.name);
    if (cur === undefined || cur === want) return;
    const k = `${kind}/${want.name}`;
    if (!pending.has(k) && !clash.has(k)) held.set(want.name, want);
  };
  for (const p of desired.pools) carry('pool', pools, normalizePool(p));
  for (const v of desired.virtualServices) carry('virtualService', vss, normalizeVirtualService(v));
  for (const c of desired.certificates ?? []) carry('certificate', certs, c);
  return {
    owned: {
      pools: withIndex(pools),
      virtualServices: withIndex(vss),
      certificates: withIndex(certs),
    },
    foreign: observed.foreign,
  };
}
