/**
 * The OpenAPI v2 document in the protobuf form kubectl asks for when it validates on the client
 * side (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), which it does for
 * the items of a `kind: List` file. Messages and field numbers are gnostic's openapi.v2 ones
 * (OpenAPIv2.proto); the definitions carry what validation reads: types, $refs, properties, items,
 * additionalProperties, required, and the `x-` vendor extensions (the group-version-kind among
 * them) as YAML (JSON text is YAML). Descriptions and examples are left out.
 */
import type { Json, JsonObject, SwaggerDoc } from './openapi-extract.ts';
import { isJsonObject } from './json.ts';

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
/** What the server answers it with (kube-openapi's handler: the same type with a dot for the `@`). */
export const OPENAPI_V2_PROTOBUF_RESPONSE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

const tag = (field: number, wire: number): Buffer => varint(field * 8 + wire);

/** A length-delimited field: a string or an embedded message. */
function bytes(field: number, payload: Buffer | string): Buffer {
  const b = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  return Buffer.concat([tag(field, 2), varint(b.length), b]);
}

function double(field: number, v: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return Buffer.concat([tag(field, 1), b]);
}

const uint = (field: number, v: number): Buffer => Buffer.concat([tag(field, 0), varint(v)]);

/** NamedAny { name = 1; Any value = 2 } with Any { string yaml = 2 }. */
const namedAny = (field: number, name: string, value: Json): Buffer =>
  bytes(field, Buffer.concat([bytes(1, name), bytes(2, bytes(2, JSON.stringify(value)))]));

function schema(s: JsonObject): Buffer {
  const parts: Buffer[] = [];
  if (typeof s.$ref === 'string') parts.push(bytes(1, s.$ref));
  if (typeof s.format === 'string') parts.push(bytes(2, s.format));
  if (typeof s.maximum === 'number') parts.push(double(7, s.maximum));
  if (typeof s.minimum === 'number') parts.push(double(9, s.minimum));
  for (const [field, key] of [
    [11, 'maxLength'],
    [12, 'minLength'],
    [14, 'maxItems'],
    [15, 'minItems'],
  ] as const) {
    const v = s[key];
    if (typeof v === 'number' && v >= 0) parts.push(uint(field, v));
  }
  if (typeof s.pattern === 'string') parts.push(bytes(13, s.pattern));
  for (const r of Array.isArray(s.required) ? s.required : [])
    if (typeof r === 'string') parts.push(bytes(19, r));
  if (isJsonObject(s.additionalProperties)) parts.push(bytes(21, bytes(1, schema(s.additionalProperties))));
  else if (typeof s.additionalProperties === 'boolean')
    parts.push(bytes(21, uint(2, s.additionalProperties ? 1 : 0)));
  if (typeof s.type === 'string') parts.push(bytes(22, bytes(1, s.type)));
  if (isJsonObject(s.items)) parts.push(bytes(23, bytes(1, schema(s.items))));
  for (const a of Array.isArray(s.allOf) ? s.allOf : [])
    if (isJsonObject(a)) parts.push(bytes(24, schema(a)));
  if (isJsonObject(s.properties)) {
    const named = Object.entries(s.properties)
      .filter((e): e is [string, JsonObject] => isJsonObject(e[1]))
      .map(([k, v]) => bytes(1, Buffer.concat([bytes(1, k), bytes(2, schema(v))])));
    parts.push(bytes(25, Buffer.concat(named)));
  }
  for (const [k, v] of Object.entries(s)) if (k.startsWith('x-')) parts.push(namedAny(31, k, v));
  return Buffer.concat(parts);
}

/** Document { swagger = 1; Info info = 2; Definitions definitions = 9 }. */
export function encodeOpenApiV2(doc: SwaggerDoc): Buffer {
  const info = isJsonObject(doc.info) ? doc.info : {};
  const defs = Object.entries(doc.definitions).map(([name, s]) =>
    bytes(1, Buffer.concat([bytes(1, name), bytes(2, schema(s))])),
  );
  return Buffer.concat([
    bytes(1, typeof doc.swagger === 'string' ? doc.swagger : '2.0'),
    bytes(
      2,
      Buffer.concat([bytes(1, String(info.title ?? 'Kubernetes')), bytes(2, String(info.version ?? ''))]),
    ),
    bytes(9, Buffer.concat(defs)),
  ]);
}
