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
import type { LbState, ObjectKind } from '../model/types.ts';

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
}

interface KindDiff<K extends ObjectKind, T> {
  upserts: ChangeOf<K, T>[];
  deletes: ChangeOf<K, T>[];
}

/** One kind's diff: creates and updates of what we want, deletes of what we own and no longer want. */
function diffKind<K extends ObjectKind, T extends { name: string }>(
  kind: K,
  desired: T[],
  owned: T[],
  foreign: Map<string, Observed['foreign'][number]>,
  normalize: (x: T) => T,
  conflicts: Conflict[],
  same: (a: T, b: T) => boolean = isDeepStrictEqual,
): KindDiff<K, T> {
  const current = new Map(owned.map((x) => [x.name, x]));
  const wanted = new Set<string>();
  const upserts: ChangeOf<K, T>[] = [];
  for (const d of desired) {
    const f = foreign.get(`${kind}/${d.name}`);
    if (f) {
      conflicts.push({ kind, name: d.name, owner: f.owner });
      continue;
    }
    wanted.add(d.name);
    const cur = current.get(d.name);
    const want = normalize(d);
    if (!cur) upserts.push({ op: 'create', kind, name: d.name, desired: want });
    else if (normalize(cur) !== want && !same(normalize(cur), want)) {
      upserts.push({ op: 'update', kind, name: d.name, desired: want, observed: cur });
    }
  }
  const deletes = owned
    .filter((o) => !wanted.has(o.name))
    .map((o): ChangeOf<K, T> => ({ op: 'delete', kind, name: o.name, observed: o }));
  return { upserts, deletes };
}

export function plan(desired: LbState, observed: Observed): Plan {
  const foreign = new Map(observed.foreign.map((f) => [`${f.kind}/${f.name}`, f]));
  const conflicts: Conflict[] = [];
  const pools = diffKind('pool', desired.pools, observed.owned.pools, foreign, normalizePool, conflicts);
  const vss = diffKind(
    'virtualService',
    desired.virtualServices,
    observed.owned.virtualServices,
    foreign,
    normalizeVirtualService,
    conflicts,
  );
  const certs = diffKind(
    'certificate',
    desired.certificates ?? [],
    observed.owned.certificates ?? [],
    foreign,
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
  };
}
