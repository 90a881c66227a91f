/**
 * Decodes a request body against its OpenAPI schema as the API server's typed decoder does: fields
 * the type does not have are dropped (and reported for `fieldValidation`), nulls are dropped, and
 * a value of the wrong JSON type is a 400.
 */
import type { Json, JsonObject, OpenApi, Schema } from './openapi.ts';
import { badRequest } from './status.ts';
import { getKey, setKey } from './json-keys.ts';
import { isJsonObject } from './json.ts';

function jsonType(v: Json): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
const RFC3339_MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$/;

/** metav1.Time takes RFC 3339; metav1.MicroTime insists on exactly six fractional digits, as Go's layout does. */
function checkTime(
  v: Json,
  ref: string,
  path: string,
  fail: (p: string, v: Json, want: string) => never,
): Json {
  if (typeof v !== 'string') return fail(path, v, ref.endsWith('MicroTime') ? 'v1.MicroTime' : 'v1.Time');
  const micro = ref.endsWith('MicroTime');
  if (!(micro ? RFC3339_MICRO : RFC3339).test(v) || Number.isNaN(Date.parse(v))) {
    const layout = micro ? '2006-01-02T15:04:05.000000Z07:00' : '2006-01-02T15:04:05Z07:00';
    throw badRequest(`parsing time ${JSON.stringify(v)} as ${JSON.stringify(layout)}: cannot parse ${path}`);
  }
  return v;
}

export interface PruneResult {
  value: JsonObject;
  unknown: string[];
}

export function pruneToSchema(api: OpenApi, obj: JsonObject, schema: Schema, what: string): PruneResult {
  const unknown: string[] = [];
  const fail = (path: string, v: Json, want: string): never => {
    throw badRequest(
      `${what}: json: cannot unmarshal ${jsonType(v)} into Go struct field ${path || '.'} of type ${want}`,
    );
  };
  const walk = (v: Json, node: Schema | undefined, path: string): Json | undefined => {
    if (v === null) return undefined;
    const s = api.resolve(node);
    if (!s) return v;
    if (s.format === 'int-or-string' || s['x-kubernetes-int-or-string'] === true) {
      if (typeof v !== 'string' && typeof v !== 'number') fail(path, v, 'intstr.IntOrString');
      return v;
    }
    const ref = typeof node?.$ref === 'string' ? node.$ref : '';
    if (ref.endsWith('meta.v1.MicroTime') || ref.endsWith('meta.v1.Time'))
      return checkTime(v, ref, path, fail);
    switch (s.type) {
      case 'string':
        if (typeof v === 'string') return v;
        // resource.Quantity is a string in the schema but decodes JSON numbers too.
        if (typeof v === 'number' && node && JSON.stringify(node).includes('resource.Quantity')) return v;
        return fail(path, v, 'string');
      case 'integer':
        if (typeof v !== 'number' || !Number.isInteger(v)) fail(path, v, 'int');
        return v;
      case 'number':
        if (typeof v !== 'number') fail(path, v, 'float64');
        return v;
      case 'boolean':
        if (typeof v !== 'boolean') fail(path, v, 'bool');
        return v;
      case 'array': {
        if (!Array.isArray(v)) return fail(path, v, 'array');
        const items = isJsonObject(s.items) ? s.items : undefined;
        return v.map((e, i) => walk(e, items, `${path}[${i}]`) ?? null);
      }
      default: {
        const props = isJsonObject(s.properties) ? s.properties : undefined;
        const extra = isJsonObject(s.additionalProperties) ? s.additionalProperties : undefined;
        if (!props && !extra) return v; // free-form (RawExtension, FieldsV1)
        if (!isJsonObject(v)) return fail(path, v, 'object');
        const out: JsonObject = {};
        for (const [k, val] of Object.entries(v)) {
          const own = props ? getKey(props, k) : undefined;
          const sub = isJsonObject(own) ? (own as Schema) : extra;
          const childPath = path ? `${path}.${k}` : k;
          if (!sub) {
            unknown.push(childPath);
            continue;
          }
          const w = walk(val, sub, childPath);
          if (w !== undefined) setKey(out, k, w);
        }
        return out;
      }
    }
  };
  const value = walk(obj, schema, '');
  return { value: isJsonObject(value) ? value : {}, unknown };
}
