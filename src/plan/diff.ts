/**
 * The pure diff of desired against observed load-balancer state. Only objects we own are ever
 * updated or deleted; a desired name held by a foreign object is a conflict, reported and left
 * alone. Order: pools and certificates before the virtual services that use them on create and
 * update, and the reverse on delete.
 *
 * Two ways in, one per-object rule: `plan` diffs everything (a cold start, a device read again,
 * the frontends rebuilt); `planNamed` diffs only the names it is given (what changed since the
 * last pass, and what that pass left pending), over the observed state kept by name between
 * passes. For the names it is given, `planNamed` plans exactly what `plan` plans.
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
   * Desired objects (normal forms, `want`) that equal what is observed (`seen`) but are not it by
   * reference: after the pass the observed state can hold them, so the next pass compares them by
   * reference (if it still holds `seen`: another pass may have written the object since).
   */
  equal: {
    pools: Equal<Pool>[];
    virtualServices: Equal<VirtualService>[];
    certificates: Equal<Certificate>[];
  };
}

type Foreign = Observed['foreign'][number];

export interface Equal<T> {
  want: T;
  seen: T;
}

/** The observed state by name: what a pass plans against, kept between passes. */
export interface ObservedByName {
  pools: Map<string, Pool>;
  virtualServices: Map<string, VirtualService>;
  certificates: Map<string, Certificate>;
  /** Foreign objects by kind and then name. */
  foreign: Map<ObjectKind, Map<string, Foreign>>;
  /** Our objects the device holds otherwise than we wrote them (`kind/name`): rewritten whatever they read as. */
  drifted: Set<string>;
}

export function byName(o: Observed): ObservedByName {
  const foreign = new Map<ObjectKind, Map<string, Foreign>>();
  for (const f of o.foreign) {
    let m = foreign.get(f.kind);
    if (!m) foreign.set(f.kind, (m = new Map()));
    m.set(f.name, f);
  }
  return {
    pools: new Map(o.owned.pools.map((p) => [p.name, p])),
    virtualServices: new Map(o.owned.virtualServices.map((v) => [v.name, v])),
    certificates: new Map((o.owned.certificates ?? []).map((c) => [c.name, c])),
    foreign,
    drifted: new Set((o.drifted ?? []).map((d) => `${d.kind}/${d.name}`)),
  };
}

/** The desired objects of each kind by name (a lookup, so that a named plan walks nothing). */
export interface DesiredByName {
  pool(name: string): Pool | undefined;
  virtualService(name: string): VirtualService | undefined;
  certificate(name: string): Certificate | undefined;
}

interface KindRule<T> {
  normalize: (x: T) => T;
  same: (a: T, b: T) => boolean;
}
const RULES: {
  pool: KindRule<Pool>;
  virtualService: KindRule<VirtualService>;
  certificate: KindRule<Certificate>;
} = {
  pool: { normalize: normalizePool, same: isDeepStrictEqual },
  virtualService: { normalize: normalizeVirtualService, same: isDeepStrictEqual },
  certificate: { normalize: normalizeCertificate, same: sameCertificate },
};

/** One kind's outcome, in the order the plan puts it together. */
class KindDiff<K extends ObjectKind, T extends { name: string }> {
  readonly upserts: ChangeOf<K, T>[] = [];
  readonly deletes: ChangeOf<K, T>[] = [];
  readonly equal: Equal<T>[] = [];
  constructor(
    private readonly kind: K,
    private readonly rule: KindRule<T>,
    private readonly current: Map<string, T>,
    private readonly foreign: Map<string, Foreign> | undefined,
    private readonly conflicts: Conflict[],
    private readonly drifted: ReadonlySet<string>,
  ) {}

  /**
   * One name: `d` is what we want (undefined: nothing). An object unchanged since the last pass
   * compares by reference (its normal form is remembered).
   */
  one(name: string, d: T | undefined): void {
    const { kind } = this;
    const f = this.foreign?.get(name);
    if (d && f) {
      this.conflicts.push({ kind, name, owner: f.owner });
      return;
    }
    const cur = this.current.get(name);
    if (!d) {
      if (cur) this.deletes.push({ op: 'delete', kind, name, observed: cur });
      return;
    }
    const want = this.rule.normalize(d);
    if (!cur) {
      this.upserts.push({ op: 'create', kind, name, desired: want });
      return;
    }
    const drifted = this.drifted.has(`${kind}/${name}`);
    if (cur === want && !drifted) return;
    const have = this.rule.normalize(cur);
    if (drifted || (have !== want && !this.rule.same(have, want)))
      this.upserts.push({ op: 'update', kind, name, desired: want, observed: cur });
    else this.equal.push({ want, seen: cur });
  }

  /** Every desired object, then deletes of what we own and no longer want. */
  all(desired: readonly T[]): void {
    const wanted = new Set<string>();
    for (const d of desired) {
      wanted.add(d.name);
      this.one(d.name, d);
    }
    // Names are unique on each side: when every owned name was wanted, there is nothing to delete.
    let owned = 0;
    for (const name of wanted) if (this.current.has(name)) owned++;
    if (owned === this.current.size) return;
    for (const [name, cur] of this.current)
      if (!wanted.has(name)) this.deletes.push({ op: 'delete', kind: this.kind, name, observed: cur });
  }
}

function assemble(
  pools: KindDiff<'pool', Pool>,
  certs: KindDiff<'certificate', Certificate>,
  vss: KindDiff<'virtualService', VirtualService>,
  conflicts: Conflict[],
): Plan {
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

function kinds(observed: ObservedByName, conflicts: Conflict[]) {
  return {
    pools: new KindDiff(
      'pool',
      RULES.pool,
      observed.pools,
      observed.foreign.get('pool'),
      conflicts,
      observed.drifted,
    ),
    certs: new KindDiff(
      'certificate',
      RULES.certificate,
      observed.certificates,
      observed.foreign.get('certificate'),
      conflicts,
      observed.drifted,
    ),
    vss: new KindDiff(
      'virtualService',
      RULES.virtualService,
      observed.virtualServices,
      observed.foreign.get('virtualService'),
      conflicts,
      observed.drifted,
    ),
  };
}

/** Everything desired against everything observed. */
export function plan(desired: LbState, observed: Observed | ObservedByName): Plan {
  const o = 'owned' in observed ? byName(observed) : observed;
  const conflicts: Conflict[] = [];
  const k = kinds(o, conflicts);
  k.pools.all(desired.pools);
  k.certs.all(desired.certificates ?? []);
  k.vss.all(desired.virtualServices);
  return assemble(k.pools, k.certs, k.vss, conflicts);
}

/** The objects named only (kind/name keys), each planned as `plan` plans it. */
export function planNamed(desired: DesiredByName, observed: ObservedByName, keys: Iterable<string>): Plan {
  const conflicts: Conflict[] = [];
  const k = kinds(observed, conflicts);
  for (const key of keys) {
    const slash = key.indexOf('/');
    const kind = key.slice(0, slash);
    const name = key.slice(slash + 1);
    if (kind === 'pool') k.pools.one(name, desired.pool(name));
    else if (kind === 'virtualService') k.vss.one(name, desired.virtualService(name));
    else if (kind === 'certificate') k.certs.one(name, desired.certificate(name));
  }
  return assemble(k.pools, k.certs, k.vss, conflicts);
}
