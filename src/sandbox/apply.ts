/**
 * Server-side apply (`application/apply-patch+yaml`), as the API server does it, for the sandbox:
 * each field manager owns the fields it set, recorded in `metadata.managedFields` as FieldsV1
 * (`f:<field>`, `k:<keys>` for an element of an associative list, `v:<value>` for one of a set,
 * `.` for the element itself). An apply sets the fields its configuration names, merged into the
 * live object along the schema's list and map types (`x-kubernetes-list-type`, `-list-map-keys`,
 * `-map-type`; a list without a type is atomic); a field another manager owns with another value
 * is a conflict (409 naming manager and field) unless forced, which takes it over; a field the
 * manager applied before and no longer does is removed when nobody else owns it. Other writes
 * (create, update, patch) record an `Update` entry owning what they changed.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Json, JsonObject, OpenApi, Schema } from './openapi.ts';
import { conflictError } from './apply-conflicts.ts';
import { ApplySchema, type ListType } from './apply-schema.ts';
import { isJsonObject } from './json.ts';
import { getKey, setKey } from './json-keys.ts';
import {
  type FieldTree,
  has,
  keepOnly,
  leaves,
  ownsAny,
  ownsLeaf,
  sameTree,
  tree,
  union,
  without,
} from './field-tree.ts';

export { type FieldTree, leaves } from './field-tree.ts';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: FieldTree;
  subresource?: string;
}

/** Deep equality, with the common case (two scalars) without the general comparison's cost. */
const same = (a: Json | undefined, b: Json | undefined): boolean =>
  a === b || (typeof a === 'object' && typeof b === 'object' && isDeepStrictEqual(a, b));

/** Fields no manager owns: identity, bookkeeping, and what the server writes. */
const UNOWNED_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
]);

export class ServerSideApply {
  /** The schema's list and map types (apply-schema.ts). */
  private readonly types: ApplySchema;

  constructor(private readonly api: OpenApi) {
    this.types = new ApplySchema(api);
  }

  /** The fields a value sets, under its schema. */
  fieldsOf(value: Json, schema: Schema | undefined, top = false): FieldTree {
    const out: FieldTree = {};
    if (isJsonObject(value)) {
      if (!top && this.types.atomicMap(schema)) return out;
      for (const k of Object.keys(value)) {
        // An own key (`__proto__` included: indexing reads an own property before the prototype).
        const v = value[k]!;
        // A scalar sets its field and nothing beneath it: no schema to look up (most of a large
        // ConfigMap's or Secret's keys).
        if (!top && (typeof v !== 'object' || v === null)) {
          out[`f:${k}`] = {};
          continue;
        }
        if (top && (k === 'apiVersion' || k === 'kind' || k === 'status')) continue;
        const child = this.api.property(schema, k);
        if (top && k === 'metadata' && isJsonObject(v)) {
          const meta: FieldTree = {};
          for (const [mk, mv] of Object.entries(v))
            if (!UNOWNED_META.has(mk)) meta[`f:${mk}`] = this.fieldsOf(mv, this.api.property(child, mk));
          if (Object.keys(meta).length > 0) out['f:metadata'] = meta;
          continue;
        }
        out[`f:${k}`] = this.fieldsOf(v, child);
      }
    } else if (Array.isArray(value)) {
      const lt = this.types.listType(schema);
      if (lt.kind === 'atomic') return out;
      for (const e of value) {
        const key = this.types.elementKey(e, lt);
        if (key === undefined) continue;
        out[key] = lt.kind === 'set' ? {} : { '.': {}, ...this.fieldsOf(e, this.api.items(schema)) };
      }
    }
    return out;
  }

  /** The value at a path of the object (undefined: not there). */
  private at(obj: Json | undefined, path: string[], schema: Schema | undefined): Json | undefined {
    let cur = obj;
    let s = schema;
    for (const el of path) {
      if (el === '.') continue;
      if (el.startsWith('f:') && isJsonObject(cur)) {
        s = this.api.property(s, el.slice(2));
        cur = cur[el.slice(2)];
      } else if (Array.isArray(cur)) {
        const lt = this.types.listType(s);
        cur = cur.find((e) => this.types.elementKey(e, lt) === el);
        s = this.api.items(s);
      } else return undefined;
      if (cur === undefined) return undefined;
    }
    return cur;
  }

  /**
   * Every leaf of a field tree with the values at it in two objects (undefined: not there), the
   * path handed to `visit` reused between calls (copy it to keep it). A list's elements are
   * indexed by their key once per list.
   */
  private eachLeaf(
    t: FieldTree,
    a: Json | undefined,
    b: Json | undefined,
    schema: Schema | undefined,
    path: string[],
    visit: (path: string[], a: Json | undefined, b: Json | undefined) => void,
  ): void {
    let lt: ListType | undefined;
    let byKeyA: Map<string, Json> | undefined;
    let byKeyB: Map<string, Json> | undefined;
    for (const el of Object.keys(t)) {
      const sub = t[el]!;
      let ca: Json | undefined;
      let cb: Json | undefined;
      let cs: Schema | undefined;
      if (el === '.') {
        [ca, cb, cs] = [a, b, schema];
      } else if (el.startsWith('f:')) {
        const name = el.slice(2);
        ca = isJsonObject(a) ? getKey(a, name) : undefined;
        cb = isJsonObject(b) ? getKey(b, name) : undefined;
        cs = this.api.property(schema, name);
      } else {
        lt ??= this.types.listType(schema);
        byKeyA ??= this.indexList(a, lt);
        byKeyB ??= this.indexList(b, lt);
        ca = byKeyA.get(el);
        cb = byKeyB.get(el);
        cs = this.api.items(schema);
      }
      path.push(el);
      if (ownsAny(sub)) this.eachLeaf(sub, ca, cb, cs, path, visit);
      else visit(path, ca, cb);
      path.pop();
    }
  }

  /** A list's elements by their path element (the first of equal keys, as a search finds it). */
  private indexList(list: Json | undefined, lt: ListType): Map<string, Json> {
    const out = new Map<string, Json>();
    if (!Array.isArray(list)) return out;
    for (const e of list) {
      const key = this.types.elementKey(e, lt);
      if (key !== undefined && !out.has(key)) out.set(key, e);
    }
    return out;
  }

  /** `applied` merged into `live`: fields set, associative lists by key, atomic ones replaced. */
  private merge(live: Json | undefined, applied: Json, schema: Schema | undefined): Json {
    if (isJsonObject(applied) && isJsonObject(live) && !this.types.atomicMap(schema)) {
      const out: JsonObject = { ...live };
      for (const [k, v] of Object.entries(applied))
        setKey(out, k, this.merge(getKey(live, k), v, this.api.property(schema, k)));
      return out;
    }
    if (Array.isArray(applied) && Array.isArray(live)) {
      const lt = this.types.listType(schema);
      if (lt.kind === 'atomic') return applied;
      const out = [...live];
      for (const e of applied) {
        const key = this.types.elementKey(e, lt);
        const i = out.findIndex((x) => this.types.elementKey(x, lt) === key);
        if (i < 0) out.push(e);
        else out[i] = this.merge(out[i], e, this.api.items(schema));
      }
      return out;
    }
    return applied;
  }

  /** Removes the field or element at a path. */
  private remove(obj: JsonObject, path: string[], schema: Schema | undefined): void {
    const parentPath = path.slice(0, -1);
    const last = path.at(-1)!;
    const parent = parentPath.length === 0 ? obj : this.at(obj, parentPath, schema);
    if (last.startsWith('f:') && isJsonObject(parent)) delete parent[last.slice(2)];
    else if (Array.isArray(parent)) {
      const lt = this.types.listType(this.types.schemaAt(parentPath, schema));
      const i = parent.findIndex((e) => this.types.elementKey(e, lt) === last);
      if (i >= 0) parent.splice(i, 1);
    }
  }

  /**
   * An apply by `manager`: the object it makes (from `live`, or from nothing) and its managed
   * fields. Throws 409 on conflicts unless `force`.
   */
  apply(o: {
    live: JsonObject | undefined;
    applied: JsonObject;
    manager: string;
    force: boolean;
    schema: Schema | undefined;
    apiVersion: string;
    now: string;
    kind: string;
    name: string;
  }): JsonObject | 'unchanged' {
    const managed = managedOf(o.live);
    const mine = this.fieldsOf(o.applied, o.schema, true);
    const before = managed.find((m) => m.manager === o.manager && m.operation === 'Apply');
    const conflicts: { manager: string; path: string[] }[] = [];
    // Whether every field applied is live with the applied value (a re-apply of the same file).
    let allLive = o.live !== undefined;
    // Nothing live: no conflict and nothing to compare (a create costs only its fields). One walk
    // of the applied fields beside both objects (a leaf's values found on the way, not from the
    // root again), so a re-apply of a large object stays linear in its fields.
    if (o.live)
      this.eachLeaf(mine, o.applied, o.live, o.schema, [], (path, applied, live) => {
        if (live === undefined) allLive = false;
        if (live === undefined || same(applied, live) || path.at(-1) === '.') return;
        allLive = false;
        // An empty map applied sets nothing beneath it: it cannot clash with what others set there.
        if (isJsonObject(applied) && Object.keys(applied).length === 0 && isJsonObject(live)) return;
        for (const m of managed)
          if (m.manager !== o.manager && ownsLeaf(m.fieldsV1, path))
            conflicts.push({ manager: m.manager, path: [...path] });
      });
    if (conflicts.length > 0 && !o.force) throw conflictError(o.kind, o.name, conflicts);
    // The same configuration applied again by its manager changes nothing (not even the time):
    // the API server answers with the object as it is.
    if (allLive && before && before.apiVersion === o.apiVersion && sameTree(before.fieldsV1, mine))
      return 'unchanged';
    // Merged, and cloned where it shares values with the live object (the applied configuration
    // is the request's own, parsed for it alone).
    const next = (
      o.live
        ? structuredClone(this.merge(stripUnowned(o.live), stripUnowned(o.applied), o.schema))
        : stripUnowned(o.applied)
    ) as JsonObject;
    // Fields this manager applied before and no longer does go, unless someone else owns them.
    for (const path of before ? leaves(before.fieldsV1) : [])
      if (!has(mine, path) && !managed.some((m) => m !== before && has(m.fieldsV1, path)))
        this.remove(next, path.at(-1) === '.' ? path.slice(0, -1) : path, o.schema);
    const others = managed
      .filter((m) => m !== before)
      .map((m) =>
        o.force
          ? {
              ...m,
              fieldsV1: without(
                m.fieldsV1,
                conflicts.filter((c) => c.manager === m.manager).map((c) => c.path),
              ),
            }
          : m,
      )
      .filter((m) => ownsAny(m.fieldsV1));
    const entry: ManagedFieldsEntry = {
      manager: o.manager,
      operation: 'Apply',
      apiVersion: o.apiVersion,
      time: o.now,
      fieldsType: 'FieldsV1',
      fieldsV1: mine,
    };
    withManaged(next, [...others, entry]);
    return next;
  }

  /**
   * Another write (create, update, patch) by `manager`: it owns what it changed, taken from the
   * managers that owned it; an entry left owning nothing goes.
   */
  recordUpdate(o: {
    before: JsonObject | undefined;
    after: JsonObject;
    manager: string;
    schema: Schema | undefined;
    apiVersion: string;
    now: string;
    subresource?: string;
  }): void {
    const managed = managedOf(o.before);
    const afterFields = this.fieldsOf(o.after, o.schema, true);
    const changed: string[][] = [];
    this.eachLeaf(afterFields, o.before, o.after, o.schema, [], (p, was, is) => {
      if (p.at(-1) === '.' ? was === undefined : !same(was, is)) changed.push([...p]);
    });
    const stillThere = (m: ManagedFieldsEntry): ManagedFieldsEntry => ({
      ...m,
      fieldsV1: keepOnly(m.fieldsV1, (p) => has(afterFields, p)),
    });
    if (changed.length === 0) {
      withManaged(
        o.after,
        managed.map(stillThere).filter((m) => ownsAny(m.fieldsV1)),
      );
      return;
    }
    const mineBefore = managed.find((m) => m.manager === o.manager && m.operation === 'Update');
    const others = managed
      .filter((m) => m !== mineBefore)
      .map((m) => {
        const kept = stillThere(m);
        return { ...kept, fieldsV1: without(kept.fieldsV1, changed) };
      })
      .filter((m) => ownsAny(m.fieldsV1));
    const owned = union(mineBefore ? stillThere(mineBefore).fieldsV1 : {}, tree(changed));
    withManaged(o.after, [
      ...others,
      {
        manager: o.manager,
        operation: 'Update',
        apiVersion: o.apiVersion,
        time: o.now,
        fieldsType: 'FieldsV1',
        fieldsV1: owned,
        ...(o.subresource ? { subresource: o.subresource } : {}),
      },
    ]);
  }
}

/** The managed fields an object carries (none when it does not exist or carries none). */
export function managedOf(obj: JsonObject | undefined): ManagedFieldsEntry[] {
  const list = isJsonObject(obj?.metadata) ? obj.metadata.managedFields : undefined;
  return Array.isArray(list) ? (list as unknown as ManagedFieldsEntry[]) : [];
}

function withManaged(obj: JsonObject, entries: ManagedFieldsEntry[]): void {
  const meta = (isJsonObject(obj.metadata) ? obj.metadata : (obj.metadata = {})) as JsonObject;
  if (entries.length > 0) meta.managedFields = entries as unknown as Json;
  else delete meta.managedFields;
}

function stripUnowned(obj: JsonObject): JsonObject {
  const out = { ...obj };
  if (isJsonObject(out.metadata)) {
    const meta = { ...out.metadata };
    delete meta.managedFields;
    out.metadata = meta;
  }
  return out;
}
