/**
 * What server-side apply reads of the schema (apply.ts): a list's type (atomic, a set, or a map
 * keyed by its `x-kubernetes-list-map-keys`, with the defaults of its key fields), whether a map
 * is atomic, the path element of a list element, and the schema at a path. List types are looked
 * up once per schema node.
 */
import { isJsonObject, type Json, type JsonObject } from './json.ts';
import type { OpenApi, Schema } from './openapi.ts';

/**
 * A list's type; a map's `defaults`: the values its key fields take when an element leaves them out
 * (the API server defaults them before the element is keyed: a port without `protocol` is TCP).
 */
export type ListType =
  { kind: 'atomic' } | { kind: 'set' } | { kind: 'map'; keys: string[]; defaults: JsonObject };

export class ApplySchema {
  constructor(private readonly api: OpenApi) {}

  /** List types by schema node (schemas are parsed once and kept): looked up once each. */
  private readonly listTypes = new WeakMap<object, ListType>();

  listType(schema: Schema | undefined): ListType {
    if (!schema) return this.listTypeOf(schema);
    let lt = this.listTypes.get(schema);
    if (!lt) this.listTypes.set(schema, (lt = this.listTypeOf(schema)));
    return lt;
  }

  private listTypeOf(schema: Schema | undefined): ListType {
    const s = this.api.resolve(schema);
    const t = s?.['x-kubernetes-list-type'];
    const keys = s?.['x-kubernetes-list-map-keys'];
    if (t === 'map' && Array.isArray(keys) && keys.every((k) => typeof k === 'string'))
      return { kind: 'map', keys: keys as string[], defaults: this.keyDefaults(schema, keys as string[]) };
    return t === 'set' ? { kind: 'set' } : { kind: 'atomic' };
  }

  /**
   * The defaults of a list map's key fields: the schema's own `default` (a CRD's structural schema
   * says it), else the built-in ones the OpenAPI v2 document leaves out (a port's `protocol`, TCP:
   * ContainerPort and ServicePort are keyed by it).
   */
  private keyDefaults(schema: Schema | undefined, keys: string[]): JsonObject {
    const item = this.api.items(schema);
    const out: JsonObject = {};
    for (const k of keys) {
      const own = this.api.resolve(this.api.property(item, k))?.default;
      const port = this.api.property(item, 'containerPort') ?? this.api.property(item, 'port');
      const d = own !== undefined ? own : k === 'protocol' && port ? 'TCP' : undefined;
      if (d !== undefined) out[k] = d as Json;
    }
    return out;
  }

  atomicMap(schema: Schema | undefined): boolean {
    return this.api.resolve(schema)?.['x-kubernetes-map-type'] === 'atomic';
  }

  /** The path element of a list element: `k:{...}` by its keys, `v:...` for a set member. */
  elementKey(e: Json, lt: ListType): string | undefined {
    if (lt.kind === 'set') return `v:${JSON.stringify(e)}`;
    if (lt.kind !== 'map' || !isJsonObject(e)) return undefined;
    const id: JsonObject = {};
    for (const k of lt.keys) {
      const v = e[k] !== undefined ? e[k] : lt.defaults[k];
      if (v !== undefined) id[k] = v;
    }
    return `k:${JSON.stringify(id)}`;
  }

  /** The schema of the field or element at a path. */
  schemaAt(path: string[], schema: Schema | undefined): Schema | undefined {
    let s = schema;
    for (const el of path) s = el.startsWith('f:') ? this.api.property(s, el.slice(2)) : this.api.items(s);
    return s;
  }
}
