/**
 * The pure diff of desired against observed load-balancer state. Only objects we own are ever
 * updated or deleted; a desired name held by a foreign object is a conflict, reported and left
 * alone. Order: pools and certificates before the virtual services that use them on create and
 * update, and the reverse on delete.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  normalizeCertificate,
  normalizePool,
  normalizeVirtualService,
  sameCertificate,
} from '../model/normalize.ts';
import type { Change, ChangeOf, Observed } from '../adapter/changes.ts';
import type { Certificate, LbState, ObjectKind, Pool, VirtualService } from '../model/types.ts';

export type { Change, ChangeOf, Observed };

export interface Conflict {
  kind: ObjectKind;
  name: string;
  /** Who owns the object we wanted (another cluster's mark, or none). */
  owner: string;
}

export interface Plan {
  changes: Change[];
  conflicts: Conflict[];
  /**
   * Desired objects (normal forms) that equal what is observed but are not it by reference: after
   * the pass the observed state can hold them, so the next pass compares them by reference.
   */
  equal: { pools: Pool[]; virtualServices: VirtualService[]; certificates: Certificate[] };
}

interface KindDiff<K extends ObjectKind, T> {
  upserts: ChangeOf<K, T>[];
  deletes: ChangeOf<K, T>[];
  equal: T[];
}

/**
 * Observed lists by name, made once per list: the reconciler carries the observed state from pass
 * to pass (observed-cache.ts) and registers the index it keeps, so a pass does not rebuild it.
 */
const indexes = new WeakMap<object, Map<string, { name: string }>>();

export function indexByName<T extends { name: string }>(list: readonly T[]): Map<string, T> {
  let m = indexes.get(list) as Map<string, T> | undefined;
  // A list that grew or shrank since (an adapter that reuses its arrays) is indexed again.
  if (!m || m.size !== list.length) indexes.set(list, (m = new Map(list.map((x) => [x.name, x]))));
  return m;
}

/** Registers `index` as the index of `list` (the same objects by name; neither changes after). */
export function withIndex<T extends { name: string }>(index: Map<string, T>): T[] {
  const list = [...index.values()];
  indexes.set(list, index);
  return list;
}

/** Foreign objects by kind and then name, made once per observed list. */
const foreignIndexes = new WeakMap<object, Map<string, Map<string, Observed['foreign'][number]>>>();

function foreignByKind(foreign: Observed['foreign']): Map<string, Map<string, Observed['foreign'][number]>> {
  let m = foreignIndexes.get(foreign);
  if (!m) {
    m = new Map();
    for (const f of foreign) {
      let byName = m.get(f.kind);
      if (!byName) m.set(f.kind, (byName = new Map()));
      byName.set(f.name, f);
    }
    foreignIndexes.set(foreign, m);
  }
  return m;
}

/**
 * One kind's diff: creates and updates of what we want, deletes of what we own and no longer want.
 * An object unchanged since the last pass compares by reference (its normal form is remembered),
 * and deletes are looked for only when some owned object was not wanted.
 */
function diffKind<K extends ObjectKind, T extends { name: string }>(
  kind: K,
  desired: T[],
  owned: T[],
  foreign: Map<string, Observed['foreign'][number]> | undefined,
  normalize: (x: T) => T,
  conflicts: Conflict[],
  same: (a: T, b: T) => boolean = isDeepStrictEqual,
): KindDiff<K, T> {
  const current = indexByName(owned);
  const upserts: ChangeOf<K, T>[] = [];
  const equal: T[] = [];
  let matched = 0;
  let clashed: Set<string> | undefined;
  for (const d of desired) {
    const f = foreign?.get(d.name);
    if (f) {
      conflicts.push({ kind, name: d.name, owner: f.owner });
      (clashed ??= new Set()).add(d.name);
      continue;
    }
    const cur = current.get(d.name);
    const want = normalize(d);
    if (!cur) {
      upserts.push({ op: 'create', kind, name: d.name, desired: want });
      continue;
    }
    matched++;
    if (cur === want) continue;
    const have = normalize(cur);
    if (have !== want && !same(have, want)) {
      upserts.push({ op: 'update', kind, name: d.name, desired: want, observed: cur });
    } else equal.push(want);
  }
  // Names are unique on each side: every owned object was wanted when all of them matched.
  let deletes: ChangeOf<K, T>[] = [];
  if (matched < current.size) {
    const wanted = new Set(desired.map((d) => d.name));
    if (clashed) for (const n of clashed) wanted.delete(n);
    deletes = owned
      .filter((o) => !wanted.has(o.name))
      .map((o): ChangeOf<K, T> => ({ op: 'delete', kind, name: o.name, observed: o }));
  }
  return { upserts, deletes, equal };
}

export function plan(desired: LbState, observed: Observed): Plan {
  const foreign = foreignByKind(observed.foreign);
  const conflicts: Conflict[] = [];
  const pools = diffKind(
    'pool',
    desired.pools,
    observed.owned.pools,
    foreign.get('pool'),
    normalizePool,
    conflicts,
  );
  const vss = diffKind(
    'virtualService',
    desired.virtualServices,
    observed.owned.virtualServices,
    foreign.get('virtualService'),
    normalizeVirtualService,
    conflicts,
  );
  const certs = diffKind(
    'certificate',
    desired.certificates ?? [],
    observed.owned.certificates ?? [],
    foreign.get('certificate'),
    normalizeCertificate,
    conflicts,
    sameCertificate,
  );
  return {
    changes: [
      ...pools.upserts,
      ...certs.upserts,
      ...vss.upserts,
      ...vss.deletes,
      ...certs.deletes,
      ...pools.deletes,
    ],
    conflicts,
    equal: { pools: pools.equal, virtualServices: vss.equal, certificates: certs.equal },
  };
}
