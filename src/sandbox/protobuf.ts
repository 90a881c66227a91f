/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), as kubectl and
 * client-go send them for the built-in kinds: the `k8s\0` magic, then a `runtime.Unknown` whose
 * `typeMeta` names the kind and whose `raw` is the object's own message. Decoded with protobufjs
 * from the bundled upstream `generated.proto` files (src/sandbox/proto/) into the JSON form the
 * rest of the sandbox handles, the apimachinery types that have a JSON form of their own made so:
 * Time and MicroTime (RFC 3339), IntOrString, Quantity, RawExtension, FieldsV1, Duration, and the
 * field names and inlined structs the OpenAPI definitions give (planOf). The
 * definitions load on the first protobuf body. Responses are encoded the other way
 * (protobuf-encode.ts) when the client prefers protobuf.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import { apiVersionOf, RESOURCE_TYPES } from './kinds.ts';
import { PROTO_FILES } from './protobuf-files.ts';
import { badRequest, unsupportedMediaType } from './status.ts';

export const KUBE_PROTOBUF = 'application/vnd.kubernetes.protobuf';
export const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const PROTO_DIR = fileURLToPath(new URL('./proto/', import.meta.url));

let root: protobuf.Root | undefined;

export function definitions(): protobuf.Root {
  if (root) return root;
  if (!existsSync(join(PROTO_DIR, PROTO_FILES[0])))
    throw new NplError(
      ErrorCodes.SPEC_MISSING,
      `the Kubernetes protobuf definitions are missing from ${PROTO_DIR}`,
    );
  const r = new protobuf.Root();
  // Imports name their file by Go import path (k8s.io/...): the bundle keeps that layout.
  r.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  // (The files named here go through resolvePath too.)
  r.loadSync([...PROTO_FILES], { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

export const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
type Special = (v: Record<string, unknown>) => Json;

const asNumber = (v: unknown): number => (typeof v === 'number' ? v : Number(String(v)));

/** RFC 3339 with the fraction of seconds only when there is one (MicroTime: microseconds). */
function rfc3339(v: Record<string, unknown>, micro: boolean): string {
  const seconds = asNumber(v.seconds ?? 0);
  const text = new Date(seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  if (!micro) return text;
  const micros = Math.floor(asNumber(v.nanos ?? 0) / 1000);
  return text.replace('Z', `.${String(micros).padStart(6, '0')}Z`);
}

function parseJsonBytes(raw: unknown, what: string): Json {
  try {
    return JSON.parse(Buffer.from(raw as Uint8Array).toString('utf8')) as Json;
  } catch {
    throw badRequest(`protobuf body: ${what} does not hold JSON`);
  }
}

/** Go's time.Duration text for whole nanoseconds: 1h2m3.5s, 150ms, 0s. */
function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let rest = Math.abs(ns);
  if (rest < 1e6) return `${sign}${rest < 1e3 ? `${rest}ns` : `${rest / 1e3}µs`}`;
  if (rest < 1e9) return `${sign}${rest / 1e6}ms`;
  const h = Math.floor(rest / 3.6e12);
  rest -= h * 3.6e12;
  const m = Math.floor(rest / 6e10);
  rest -= m * 6e10;
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${rest / 1e9}s`;
}

/** The apimachinery types whose JSON is not their message's. */
const SPECIAL: Record<string, Special> = {
  [`${META}.Time`]: (v) => rfc3339(v, false),
  [`${META}.MicroTime`]: (v) => rfc3339(v, true),
  [`${META}.Duration`]: (v) => goDuration(asNumber(v.duration ?? 0)),
  [`${META}.FieldsV1`]: (v) => (v.Raw === undefined ? {} : parseJsonBytes(v.Raw, 'a FieldsV1')),
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': (v) =>
    asNumber(v.type ?? 0) === 1 ? String(v.strVal ?? '') : asNumber(v.intVal ?? 0),
  'k8s.io.apimachinery.pkg.api.resource.Quantity': (v) => String(v.string ?? ''),
  'k8s.io.apimachinery.pkg.runtime.RawExtension': (v) =>
    v.raw === undefined ? null : parseJsonBytes(v.raw, 'a RawExtension'),
};

function scalar(field: protobuf.Field, v: unknown): Json {
  if (field.type === 'bytes') return Buffer.from(v as Uint8Array).toString('base64');
  if (['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'].includes(field.type)) return asNumber(v);
  return v as Json;
}

function value(field: protobuf.Field, v: unknown, openapi: OpenApi | undefined): Json {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) return message(t, v as Record<string, unknown>, openapi);
  if (t instanceof protobuf.Enum) return t.valuesById[v as number] ?? (v as number);
  return scalar(field, v);
}

/**
 * How a message's fields are named in JSON, from the OpenAPI definition of the same type: mostly
 * the proto name, a few in other case (IngressClassParametersReference `aPIGroup` is `apiGroup`),
 * and a message field the JSON does not have is an embedded Go struct, inlined (Probe's `handler`:
 * `httpGet` sits on the probe itself). `null`: inline.
 */
export type FieldPlan = { field: protobuf.Field; json: string | null; required: boolean };
const plans = new WeakMap<protobuf.Type, FieldPlan[]>();

export function planOf(type: protobuf.Type, openapi: OpenApi | undefined): FieldPlan[] {
  let plan = plans.get(type);
  if (plan) return plan;
  const props = openapi?.definition(type.fullName.slice(1).replace(/^k8s\.io\./, 'io.k8s.'))?.properties as
    Record<string, unknown> | undefined;
  const names = props ? Object.keys(props) : undefined;
  const required = new Set(
    (openapi?.definition(type.fullName.slice(1).replace(/^k8s\.io\./, 'io.k8s.'))?.required as
      string[] | undefined) ?? [],
  );
  plan = type.fieldsArray.map((field) => {
    const json =
      !names || names.includes(field.name)
        ? field.name
        : (names.find((n) => n.toLowerCase() === field.name.toLowerCase()) ??
          (field.resolvedType instanceof protobuf.Type ? null : field.name));
    return { field, json, required: json !== null && required.has(json) };
  });
  plans.set(type, plan);
  return plan;
}

/** A scalar's zero value, or a Time at the epoch's zero (Go's zero time, which its JSON writes as null). */
function isZero(f: protobuf.Field, v: unknown): boolean {
  const t = f.resolvedType;
  if (t instanceof protobuf.Type) {
    const name = t.fullName.slice(1);
    if (name !== `${META}.Time` && name !== `${META}.MicroTime`) return false;
    const time = v as { seconds?: unknown; nanos?: unknown };
    return asNumber(time.seconds ?? 0) === 0 && asNumber(time.nanos ?? 0) === 0;
  }
  if (v === '' || v === false) return true;
  if (f.type === 'bytes') return (v as Uint8Array).length === 0;
  return typeof v === 'number' || typeof v === 'object' ? asNumber(v) === 0 : false;
}

/** A decoded message as Kubernetes JSON: the fields set, in the names the JSON uses. */
function message(type: protobuf.Type, m: Record<string, unknown>, openapi: OpenApi | undefined): Json {
  const special = SPECIAL[type.fullName.slice(1)];
  if (special) return special(m);
  const out: JsonObject = {};
  for (const { field: f, json, required } of planOf(type, openapi)) {
    const v = m[f.name];
    if (v === undefined || v === null) continue;
    // Go writes every plain (non-pointer) field, zero or not, where its JSON leaves out the zero
    // ones (omitempty): a zero scalar is left out unless the schema requires the field.
    if (!f.repeated && !f.map && !required && isZero(f, v)) continue;
    if (f.map) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length > 0)
        out[json ?? f.name] = Object.fromEntries(entries.map(([k, x]) => [k, value(f, x, openapi)]));
    } else if (f.repeated) {
      if ((v as unknown[]).length > 0)
        out[json ?? f.name] = (v as unknown[]).map((x) => value(f, x, openapi));
    } else if (Object.prototype.hasOwnProperty.call(m, f.name)) {
      const x = value(f, v, openapi);
      if (json === null && x && typeof x === 'object' && !Array.isArray(x)) Object.assign(out, x);
      else out[json ?? f.name] = x;
    }
  }
  return out;
}

/** The OpenAPI definition of a built-in kind the sandbox serves (custom resources have none). */
export function builtinDefinition(apiVersion: string, kind: string): string | undefined {
  return RESOURCE_TYPES.find((t) => !t.custom && t.kind === kind && apiVersionOf(t) === apiVersion)
    ?.definition;
}

/** The message of a kind by its OpenAPI definition name (io.k8s.api.core.v1.Pod: k8s.io.api.core.v1.Pod). */
export const protoName = (definition: string): string => definition.replace(/^io\.k8s\./, 'k8s.io.');

/**
 * A protobuf body as JSON. `definitionOf` names the OpenAPI definition of a built-in kind (undefined
 * for one the sandbox serves no protobuf for: a custom resource, which clients send as JSON).
 */
export function decodeProtobufBody(
  raw: Buffer,
  openapi: OpenApi | undefined,
  definitionOf: (apiVersion: string, kind: string) => string | undefined = builtinDefinition,
): JsonObject {
  if (raw.length < 4 || !raw.subarray(0, 4).equals(MAGIC))
    throw badRequest('protobuf body: it does not start with the k8s\\0 envelope');
  const r = definitions();
  let unknown: Record<string, unknown>;
  try {
    unknown = r
      .lookupType('k8s.io.apimachinery.pkg.runtime.Unknown')
      .decode(raw.subarray(4)) as unknown as Record<string, unknown>;
  } catch (err) {
    throw badRequest(`protobuf body: ${(err as Error).message}`);
  }
  const typeMeta = (unknown.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const apiVersion = typeMeta.apiVersion ?? '';
  const kind = typeMeta.kind ?? '';
  if (unknown.contentEncoding)
    throw badRequest(`protobuf body: content encoding ${String(unknown.contentEncoding)} is not supported`);
  const definition = definitionOf(apiVersion, kind);
  const type = definition ? r.lookup(protoName(definition)) : null;
  if (!(type instanceof protobuf.Type))
    throw unsupportedMediaType(`${KUBE_PROTOBUF} for ${apiVersion}/${kind}`, [
      'application/json',
      'application/yaml',
    ]);
  let decoded: Record<string, unknown>;
  try {
    decoded = type.decode((unknown.raw as Uint8Array | undefined) ?? new Uint8Array()) as unknown as Record<
      string,
      unknown
    >;
  } catch (err) {
    throw badRequest(`protobuf body: ${apiVersion}/${kind}: ${(err as Error).message}`);
  }
  return { apiVersion, kind, ...(message(type, decoded, openapi) as JsonObject) };
}
