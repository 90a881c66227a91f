/**
 * The load balancer as the reconciler last saw it, carried forward without asking the device:
 * after a fully successful pass it is what we applied, plus every other desired object we own (not
 * deferred, not in conflict), which the device now equals.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import { normalizePool, normalizeVirtualService } from '../model/normalize.ts';
import type { LbState } from '../model/types.ts';
import type { Change, Conflict, Observed } from '../plan/diff.ts';

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
  const pools = new Map(observed.owned.pools.map((p) => [p.name, p]));
  const vss = new Map(observed.owned.virtualServices.map((v) => [v.name, v]));
  const certs = new Map((observed.owned.certificates ?? []).map((c) => [c.name, c]));
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
  for (const p of desired.pools) {
    if (!pending.has(`pool/${p.name}`) && !clash.has(`pool/${p.name}`) && pools.has(p.name))
      pools.set(p.name, normalizePool(p));
  }
  for (const v of desired.virtualServices) {
    const k = `virtualService/${v.name}`;
    if (!pending.has(k) && !clash.has(k) && vss.has(v.name)) vss.set(v.name, normalizeVirtualService(v));
  }
  for (const c of desired.certificates ?? []) {
    const k = `certificate/${c.name}`;
    if (!pending.has(k) && !clash.has(k) && certs.has(c.name)) certs.set(c.name, c);
  }
  return {
    owned: {
      pools: [...pools.values()],
      virtualServices: [...vss.values()],
      certificates: [...certs.values()],
    },
    foreign: observed.foreign,
  };
}
