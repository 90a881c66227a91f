/**
 * Kubernetes protobuf response bodies, for clients that prefer them (client-go and kubectl send
 * `Accept: application/vnd.kubernetes.protobuf, application/json`): the JSON the sandbox holds,
 * made back into the kind's message of the bundled `generated.proto` files - the inverse of
 * protobuf.ts, field by field along the same plan (JSON names, inlined structs, the apimachinery
 * types with a JSON form of their own) - then wrapped in `runtime.Unknown` behind the `k8s\0`
 * magic. Objects and lists of the built-in kinds only: custom resources, Tables, Status errors and
 * watch streams stay JSON, which every client takes.
 */
import type { ServerResponse } from 'node:http';
import protobuf from 'protobufjs';
import { send } from './http-util.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import { RESOURCE_TYPES, apiVersionOf } from './kinds.ts';
import { definitions, KUBE_PROTOBUF, MAGIC, META, planOf, protoName } from './protobuf.ts';
import { isJsonObject } from './json.ts';

type Message = Record<string, unknown>;

/** RFC 3339 -> seconds and nanos (MicroTime keeps its microseconds). */
function time(v: Json): Message | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  if (!Number.isFinite(ms)) return undefined;
  const frac = /\.(\d+)Z$/.exec(v)?.[1] ?? '';
  return { seconds: Math.floor(ms / 1000), nanos: Number(frac.padEnd(9, '0').slice(0, 9)) };
}

const UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9, m: 6e10, h: 3.6e12 };

/** Go's time.Duration text (1h2m3.5s) -> nanoseconds. */
function duration(v: Json): Message {
  const text = String(v);
  let ns = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ns += Number(m[1]) * UNITS[m[2]!]!;
  return { duration: Math.round(text.startsWith('-') ? -ns : ns) };
}

const jsonBytes = (v: Json): Buffer => Buffer.from(JSON.stringify(v));

const SPECIAL: Record<string, (v: Json) => Message | undefined> = {
  [`${META}.Time`]: time,
  [`${META}.MicroTime`]: time,
  [`${META}.Duration`]: duration,
  [`${META}.FieldsV1`]: (v) => ({ Raw: jsonBytes(v) }),
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': (v) =>
    typeof v === 'number' ? { type: 0, intVal: v } : { type: 1, strVal: String(v) },
  'k8s.io.apimachinery.pkg.api.resource.Quantity': (v) => ({ string: String(v) }),
  'k8s.io.apimachinery.pkg.runtime.RawExtension': (v) => ({ raw: jsonBytes(v) }),
};

function fieldValue(field: protobuf.Field, v: Json, openapi: OpenApi | undefined): unknown {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) return toMessage(t, v, openapi);
  if (t instanceof protobuf.Enum) return typeof v === 'string' ? t.values[v] : v;
  if (field.type === 'bytes') return Buffer.from(String(v), 'base64');
  return v;
}

/** A JSON value as the message of `type` (undefined: nothing to send for it). */
function toMessage(type: protobuf.Type, v: Json, openapi: OpenApi | undefined): Message | undefined {
  const special = SPECIAL[type.fullName.slice(1)];
  if (special) return v === null ? undefined : special(v);
  if (!isJsonObject(v)) return undefined;
  const out: Message = {};
  for (const { field, json } of planOf(type, openapi)) {
    if (json === null) {
      // An embedded Go struct: its fields sit on this object.
      const inner = toMessage(field.resolvedType as protobuf.Type, v, openapi);
      if (inner && Object.keys(inner).length > 0) out[field.name] = inner;
      continue;
    }
    const x = v[json];
    if (x === undefined || x === null) continue;
    if (field.map && isJsonObject(x))
      out[field.name] = Object.fromEntries(
        Object.entries(x).map(([k, e]) => [k, fieldValue(field, e, openapi)]),
      );
    else if (field.repeated && Array.isArray(x))
      out[field.name] = x.map((e) => fieldValue(field, e, openapi)).filter((e) => e !== undefined);
    else if (!field.map && !field.repeated) {
      const m = fieldValue(field, x, openapi);
      if (m !== undefined) out[field.name] = m;
    }
  }
  return out;
}

/** The OpenAPI definition of a built-in kind or of its list (PodList), by apiVersion and kind. */
export function definitionOrList(apiVersion: string, kind: string): string | undefined {
  const list = kind.endsWith('List');
  const t = RESOURCE_TYPES.find(
    (r) => !r.custom && r.kind === (list ? kind.slice(0, -4) : kind) && apiVersionOf(r) === apiVersion,
  );
  return t ? `${t.definition}${list ? 'List' : ''}` : undefined;
}

function messageType(apiVersion: string, kind: string): protobuf.Type | undefined {
  const definition = definitionOrList(apiVersion, kind);
  const found = definition ? definitions().lookup(protoName(definition)) : null;
  return found instanceof protobuf.Type ? found : undefined;
}

/**
 * The protobuf body of an object or list the sandbox answers with, or undefined when its kind has
 * no protobuf form here (then it goes as JSON).
 */
export function encodeProtobufBody(obj: JsonObject, openapi: OpenApi | undefined): Buffer | undefined {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const type = messageType(apiVersion, kind);
  if (!type) return undefined;
  const m = toMessage(type, obj, openapi) ?? {};
  const raw = type.encode(type.fromObject(m)).finish();
  const unknown = definitions().lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const envelope = unknown.encode(unknown.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Buffer.concat([MAGIC, envelope]);
}

/** Whether the client's first choice is protobuf (client-go lists it first, JSON after). */
export function prefersProtobuf(accept: string | undefined): boolean {
  const first = accept?.split(',')[0]?.split(';')[0]?.trim();
  return first === 'application/vnd.kubernetes.protobuf';
}

/**
 * How a handler answers with an object or list it holds as JSON text: in protobuf when `asProtobuf`
 * (the client prefers it) and the kind has a protobuf form, else as the JSON it is.
 */
export function negotiatedReply(
  res: ServerResponse,
  asProtobuf: boolean,
  openapi: OpenApi | undefined,
): (code: number, text: string, headers?: Record<string, string>) => void {
  return (code, text, headers = {}) => {
    const bytes = asProtobuf ? encodeProtobufBody(JSON.parse(text) as JsonObject, openapi) : undefined;
    if (!bytes) return send(res, code, text, headers);
    res.writeHead(code, { 'Content-Type': KUBE_PROTOBUF, 'Cache-Control': 'no-cache, private', ...headers });
    res.end(bytes);
  };
}
