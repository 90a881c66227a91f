/**
 * The pure diff of desired against observed load-balancer state. Only objects we own are ever
 * updated or deleted; a desired name held by a foreign object is a conflict, reported and left
 * alone. Order: pools before the virtual services that use them on create and update, and the
 * reverse on delete.
 */
import { isDeepStrictEqual } from 'node:util';
import { normalizePool, normalizeVirtualService } from '../model/normalize.ts';
import type { LbState, ObjectKind, Pool, VirtualService } from '../model/types.ts';

export type Change =
  | { op: 'create'; kind: 'pool'; name: string; desired: Pool }
  | { op: 'update'; kind: 'pool'; name: string; desired: Pool; observed: Pool }
  | { op: 'delete'; kind: 'pool'; name: string; observed: Pool }
  | { op: 'create'; kind: 'virtualService'; name: string; desired: VirtualService }
  | { op: 'update'; kind: 'virtualService'; name: string; desired: VirtualService; observed: VirtualService }
  | { op: 'delete'; kind: 'virtualService'; name: string; observed: VirtualService };

export interface Conflict {
  kind: ObjectKind;
  name: string;
  /** Who owns the object we wanted (another cluster's mark, or none). */
  owner: string;
}

export interface Plan {
  changes: Change[];
  conflicts: Conflict[];
}

/** What an adapter observed: our objects, and the names (with owner) of everyone else's. */
export interface Observed {
  owned: LbState;
  foreign: { kind: ObjectKind; name: string; owner: string }[];
}

function byName<T extends { name: string }>(xs: T[]): Map<string, T> {
  return new Map(xs.map((x) => [x.name, x]));
}

export function plan(desired: LbState, observed: Observed): Plan {
  const foreign = new Map(observed.foreign.map((f) => [`${f.kind}/${f.name}`, f]));
  const conflicts: Conflict[] = [];
  const poolChanges: Change[] = [];
  const vsChanges: Change[] = [];
  const vsDeletes: Change[] = [];
  const poolDeletes: Change[] = [];

  const ownedPools = byName(observed.owned.pools);
  const wantedPools = new Set<string>();
  for (const p of desired.pools) {
    const f = foreign.get(`pool/${p.name}`);
    if (f) {
      conflicts.push({ kind: 'pool', name: p.name, owner: f.owner });
      continue;
    }
    wantedPools.add(p.name);
    const cur = ownedPools.get(p.name);
    const want = normalizePool(p);
    if (!cur) poolChanges.push({ op: 'create', kind: 'pool', name: p.name, desired: want });
    else if (!isDeepStrictEqual(normalizePool(cur), want)) {
      poolChanges.push({ op: 'update', kind: 'pool', name: p.name, desired: want, observed: cur });
    }
  }
  for (const p of observed.owned.pools) {
    if (!wantedPools.has(p.name)) poolDeletes.push({ op: 'delete', kind: 'pool', name: p.name, observed: p });
  }

  const ownedVs = byName(observed.owned.virtualServices);
  const wantedVs = new Set<string>();
  for (const vs of desired.virtualServices) {
    const f = foreign.get(`virtualService/${vs.name}`);
    if (f) {
      conflicts.push({ kind: 'virtualService', name: vs.name, owner: f.owner });
      continue;
    }
    wantedVs.add(vs.name);
    const cur = ownedVs.get(vs.name);
    const want = normalizeVirtualService(vs);
    if (!cur) vsChanges.push({ op: 'create', kind: 'virtualService', name: vs.name, desired: want });
    else if (!isDeepStrictEqual(normalizeVirtualService(cur), want)) {
      vsChanges.push({ op: 'update', kind: 'virtualService', name: vs.name, desired: want, observed: cur });
    }
  }
  for (const vs of observed.owned.virtualServices) {
    if (!wantedVs.has(vs.name)) {
      vsDeletes.push({ op: 'delete', kind: 'virtualService', name: vs.name, observed: vs });
    }
  }
  return { changes: [...poolChanges, ...vsChanges, ...vsDeletes, ...poolDeletes], conflicts };
}
