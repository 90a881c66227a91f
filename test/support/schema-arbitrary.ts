/**
 * Test helper: fast-check arbitraries of the objects a Kubernetes OpenAPI (v2) schema admits,
 * following `$ref`s, `required`, the list types (`map` lists unique by their keys, `set` lists
 * unique) and the enums the descriptions list ("Possible enum values"). Bounded: nesting past
 * `depth` leaves optional fields out, arrays hold at most two items, maps two entries, integers are
 * 1 to 3 (a replica count never starts a thousand Pods) and strings come from a few that are valid
 * names, so that most objects are ones an API server takes.
 */
import fc from 'fast-check';
import type { Json, JsonObject, OpenApi } from '../../src/sandbox/openapi.ts';

/** Fields never generated: what the API server owns, and what would reach outside the test. */
const SKIP = new Set(['status', 'metadata', 'apiVersion', 'kind', 'managedFields', 'webhooks']);

const STRINGS = ['a', 'b', 'x-1'];

/**
 * The enums of the fields an API server checks, by `<definition>.<property>` (the bundled OpenAPI
 * cut keeps no "Possible enum values" in its descriptions).
 */
const ENUMS: Record<string, string[]> = {
  'io.k8s.api.core.v1.ServiceSpec.type': ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'],
  'io.k8s.api.core.v1.ServicePort.protocol': ['TCP', 'UDP', 'SCTP'],
  'io.k8s.api.core.v1.ContainerPort.protocol': ['TCP', 'UDP', 'SCTP'],
  'io.k8s.api.core.v1.EndpointPort.protocol': ['TCP', 'UDP', 'SCTP'],
  'io.k8s.api.discovery.v1.EndpointPort.protocol': ['TCP', 'UDP', 'SCTP'],
  'io.k8s.api.discovery.v1.EndpointSlice.addressType': ['IPv4', 'IPv6', 'FQDN'],
  'io.k8s.api.networking.v1.HTTPIngressPath.pathType': ['Exact', 'Prefix', 'ImplementationSpecific'],
  'io.k8s.api.networking.v1.NetworkPolicyPort.protocol': ['TCP', 'UDP', 'SCTP'],
};

function enumOf(schema: JsonObject): string[] | undefined {
  if (Array.isArray(schema.enum)) return schema.enum.map(String);
  const d = typeof schema.description === 'string' ? schema.description : '';
  const i = d.indexOf('Possible enum values:');
  if (i < 0) return undefined;
  const values = [...d.slice(i).matchAll(/- `"([^"]*)"`/g)].map((m) => m[1]!);
  return values.length > 0 ? values : undefined;
}

export class SchemaArbitraries {
  constructor(private readonly api: OpenApi) {}

  private resolve(schema: JsonObject): JsonObject {
    const ref = schema.$ref;
    if (typeof ref === 'string') return this.api.definition(ref.replace('#/definitions/', '')) ?? {};
    return schema;
  }

  /** An object of a definition (its top-level metadata, kind and status left to the caller). */
  of(definition: string, depth = 6): fc.Arbitrary<JsonObject> {
    return this.value({ $ref: `#/definitions/${definition}` }, depth) as fc.Arbitrary<JsonObject>;
  }

  value(schema0: JsonObject, depth: number, field = ''): fc.Arbitrary<Json> {
    const schema = this.resolve(schema0);
    const ref = typeof schema0.$ref === 'string' ? schema0.$ref : '';
    const known = ENUMS[field];
    if (known) return fc.constantFrom(...known);
    // Values the API machinery gives their own shape.
    if (ref.endsWith('.Time')) return fc.constant('2026-01-02T03:04:05Z');
    if (ref.endsWith('.MicroTime')) return fc.constant('2026-01-02T03:04:05.000000Z');
    if (ref.endsWith('.Quantity')) return fc.constantFrom('1', '100m', '64Mi');
    if (ref.endsWith('.RawExtension') || ref.endsWith('.FieldsV1') || ref.endsWith('.JSON'))
      return fc.constant({});
    if (ref.endsWith('.ObjectMeta'))
      return fc.record({ labels: fc.constant({ app: 'a' }) }, { requiredKeys: [] });
    if (schema.format === 'int-or-string')
      return fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constantFrom(...STRINGS));
    const en = enumOf(schema);
    if (en) return fc.constantFrom(...en);
    switch (schema.type) {
      case 'string':
        return schema.format === 'byte' ? fc.constant('YQ==') : fc.constantFrom(...STRINGS);
      case 'integer':
      case 'number':
        return fc.integer({ min: 1, max: 3 });
      case 'boolean':
        return fc.boolean();
      case 'array':
        return this.array(schema, depth);
      default:
        return this.object(schema, depth, ref.replace('#/definitions/', ''));
    }
  }

  private array(schema: JsonObject, depth: number): fc.Arbitrary<Json> {
    if (depth <= 0) return fc.constant([]);
    const items = this.value((schema.items as JsonObject | undefined) ?? { type: 'string' }, depth - 1);
    const keys = schema['x-kubernetes-list-map-keys'];
    if (schema['x-kubernetes-list-type'] === 'map' && Array.isArray(keys))
      return fc.uniqueArray(items, {
        maxLength: 2,
        selector: (v) => JSON.stringify(keys.map((k) => (v as JsonObject)[String(k)] ?? null)),
      });
    if (schema['x-kubernetes-list-type'] === 'set')
      return fc.uniqueArray(items, { maxLength: 2, selector: (v) => JSON.stringify(v) });
    return fc.array(items, { maxLength: 2 });
  }

  private object(schema: JsonObject, depth: number, definition: string): fc.Arbitrary<Json> {
    const props = (schema.properties as Record<string, JsonObject> | undefined) ?? {};
    const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
    if (Object.keys(props).length === 0) {
      const extra = schema.additionalProperties as JsonObject | boolean | undefined;
      if (!extra || depth <= 0) return fc.constant({});
      const inner = extra === true ? fc.constantFrom(...STRINGS) : this.value(extra, depth - 1);
      return fc.dictionary(fc.constantFrom(...STRINGS), inner, { maxKeys: 2 });
    }
    const fields: Record<string, fc.Arbitrary<Json>> = {};
    for (const [k, s] of Object.entries(props)) {
      if (SKIP.has(k) && !required.has(k)) continue;
      if (depth <= 0 && !required.has(k)) continue;
      fields[k] = this.value(s, depth - 1, `${definition}.${k}`);
    }
    return fc.record(fields, {
      requiredKeys: [...required].filter((k) => k in fields),
    }) as fc.Arbitrary<Json>;
  }
}
