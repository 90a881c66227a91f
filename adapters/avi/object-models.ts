/**
 * The Avi object field model (names, JSON types, required fields; from the Avi SDK, bundled as
 * published): the adapter's pre-flight check of what it writes. (The simulator checks with code
 * of its own, sim/avi/model-check.ts, stricter: unknown types and models refused.)
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

const fieldSchema: z.ZodType<Field> = z.lazy(() =>
  z.object({ type: z.string().optional(), $ref: z.string().optional(), items: fieldSchema.optional() }),
);
interface Field {
  type?: string | undefined;
  $ref?: string | undefined;
  items?: Field | undefined;
}
const modelsSchema = z.object({
  objects: z.record(
    z.string(),
    z.object({ fields: z.record(z.string(), fieldSchema), required: z.array(z.string()) }),
  ),
});
type Models = z.infer<typeof modelsSchema>['objects'];

let models: Models | undefined;
function load(): Models {
  // The SDK's models as AKO vendors them, and the DataScript set it leaves out.
  models ??= Object.assign(
    {},
    ...[
      'avi-object-models.json',
      'avi-datascript-models.json',
      'avi-pki-models.json',
      'avi-app-profile-models.json',
      'avi-persistence-models.json',
    ].map(
      (f) =>
        modelsSchema.parse(JSON.parse(readFileSync(new URL(`./spec/${f}`, import.meta.url), 'utf8'))).objects,
    ),
  ) as Models;
  return models;
}

/** API path segment -> model name, for the object types npl-lb reads and writes. */
export const MODEL_OF: Record<string, string> = {
  pool: 'Pool',
  poolgroup: 'PoolGroup',
  vsvip: 'VsVip',
  virtualservice: 'VirtualService',
  httppolicyset: 'HTTPPolicySet',
  sslkeyandcertificate: 'SSLKeyAndCertificate',
  pkiprofile: 'PKIProfile',
  applicationprofile: 'ApplicationProfile',
  applicationpersistenceprofile: 'ApplicationPersistenceProfile',
  vsdatascriptset: 'VSDataScriptSet',
  healthmonitor: 'HealthMonitor',
  cloud: 'Cloud',
  serviceenginegroup: 'ServiceEngineGroup',
  vrfcontext: 'VrfContext',
  tenant: 'Tenant',
};

function check(value: unknown, field: Field, path: string, out: string[]): void {
  if (field.$ref) {
    checkObject(field.$ref, value, path, out);
    return;
  }
  const t = field.type;
  const bad = (what: string) => out.push(`${path}: expected ${what}`);
  if (t === 'string' && typeof value !== 'string') bad('a string');
  else if (t === 'integer' && !Number.isInteger(value)) bad('an integer');
  else if (t === 'number' && typeof value !== 'number') bad('a number');
  else if (t === 'boolean' && typeof value !== 'boolean') bad('a boolean');
  else if (t === 'array') {
    if (!Array.isArray(value)) bad('an array');
    else if (field.items) value.forEach((v, i) => check(v, field.items!, `${path}[${i}]`, out));
  }
}

function checkObject(model: string, value: unknown, path: string, out: string[]): void {
  const m = load()[model];
  if (!m) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    out.push(`${path || model}: expected an object`);
    return;
  }
  const o = value as Record<string, unknown>;
  for (const r of m.required)
    if (o[r] === undefined) out.push(`${path ? `${path}.` : ''}${r}: field is required`);
  for (const [k, v] of Object.entries(o)) {
    const f = m.fields[k];
    const at = path ? `${path}.${k}` : k;
    if (!f) out.push(`${at}: unknown field`);
    else if (v !== null) check(v, f, at, out);
  }
  // An IPAddr's type is its address's family: V4 an IPv4 address, V6 an IPv6 one.
  if (model === 'IPAddr' && (o.type === 'V4' || o.type === 'V6')) {
    if (isIP(String(o.addr ?? '')) !== (o.type === 'V4' ? 4 : 6))
      out.push(`${path || model}: ${String(o.addr)} is not a ${o.type} address`);
  }
}

/** Problems of an object of this model (e.g. 'Pool'), each naming the field; none when it fits. */
export function validateAviObject(model: string, value: unknown): string[] {
  const out: string[] = [];
  checkObject(model, value, '', out);
  return out;
}

/** Whether the field model knows this object type. */
export function knownModel(model: string): boolean {
  return load()[model] !== undefined;
}
