/**
 * The simulated Avi Controller's check of a written object against the Avi object models (the
 * SDK's field model, bundled as published: names, JSON types, required fields), with code of its
 * own, stricter than a pre-flight check may be: an object type, or a nested model, that the
 * bundle does not hold is refused, never let through unchecked; every field is checked, nested
 * objects and arrays included. The API path of each type the simulator serves is its own table.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';

interface Field {
  type?: string | undefined;
  $ref?: string | undefined;
  items?: Field | undefined;
}
const field: z.ZodType<Field> = z.lazy(() =>
  z.object({ type: z.string().optional(), $ref: z.string().optional(), items: field.optional() }),
);
const bundle = z.object({
  objects: z.record(
    z.string(),
    z.object({ fields: z.record(z.string(), field), required: z.array(z.string()) }),
  ),
});
type Model = z.infer<typeof bundle>['objects'][string];

/** API path segment -> object model, for every type the simulator stores. */
export const SIM_MODELS: Readonly<Record<string, string>> = {
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

let models: Map<string, Model> | undefined;
function loaded(): Map<string, Model> {
  if (models) return models;
  models = new Map();
  for (const file of [
    'avi-object-models.json',
    'avi-datascript-models.json',
    'avi-pki-models.json',
    'avi-app-profile-models.json',
    'avi-persistence-models.json',
  ]) {
    const url = new URL(`../../adapters/avi/spec/${file}`, import.meta.url);
    for (const [name, m] of Object.entries(bundle.parse(JSON.parse(readFileSync(url, 'utf8'))).objects))
      models.set(name, m);
  }
  return models;
}

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  integer: (v) => Number.isInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
  boolean: (v) => typeof v === 'boolean',
};

function value(v: unknown, f: Field, at: string, out: string[]): void {
  if (v === null) return;
  if (f.$ref !== undefined) return object(f.$ref, v, at, out);
  if (f.type === 'array') {
    if (!Array.isArray(v)) return void out.push(`${at}: expected an array`);
    if (f.items) v.forEach((x, i) => value(x, f.items!, `${at}[${i}]`, out));
    return;
  }
  const is = f.type === undefined ? undefined : JSON_TYPES[f.type];
  if (f.type !== undefined && !is)
    return void out.push(`${at}: the model's type ${f.type} is not known here`);
  if (is && !is(v)) out.push(`${at}: expected ${f.type === 'integer' ? 'an integer' : `a ${f.type}`}`);
}

/**
 * Address fields whose family Avi's API reference fixes (Vip: "IPv4 Address of the VIP" in
 * ip_address, "IPv6 Address of the Vip" in ip6_address; an IPNetworkSubnet's IPv4 `subnet` and IPv6
 * `subnet6`), by model and field: the IPAddr (or the IPAddrPrefix's ip_addr) there must be of it.
 */
const ADDRESS_FAMILY: Readonly<Record<string, 'V4' | 'V6'>> = {
  'Vip.ip_address': 'V4',
  'Vip.ip6_address': 'V6',
  'IPNetworkSubnet.subnet': 'V4',
  'IPNetworkSubnet.subnet6': 'V6',
};

/** An IPAddr's type is its address's family (V4 an IPv4 address, V6 an IPv6 one). */
function addressProblem(
  o: Record<string, unknown>,
  want: 'V4' | 'V6' | undefined,
  at: string,
): string | undefined {
  const family = isIP(String(o.addr ?? ''));
  const type = o.type;
  if (type === 'V4' || type === 'V6') {
    if (family !== (type === 'V4' ? 4 : 6)) return `${at}: ${String(o.addr)} is not a ${type} address`;
    if (want && type !== want) return `${at}: must be of type ${want}, not ${type}`;
  }
  return undefined;
}

function object(name: string, v: unknown, at: string, out: string[], family?: 'V4' | 'V6'): void {
  const m = loaded().get(name);
  if (!m) return void out.push(`${at || name}: no object model ${name} is known`);
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    return void out.push(`${at || name}: expected an object`);
  const o = v as Record<string, unknown>;
  const prefix = at ? `${at}.` : '';
  for (const r of m.required) if (o[r] === undefined) out.push(`${prefix}${r}: field is required`);
  for (const [k, x] of Object.entries(o)) {
    const f = m.fields[k];
    if (!f) out.push(`${prefix}${k}: unknown field`);
    else if (f.$ref !== undefined && x !== null)
      object(
        f.$ref,
        x,
        `${prefix}${k}`,
        out,
        ADDRESS_FAMILY[`${name}.${k}`] ?? (name === 'IPAddrPrefix' ? family : undefined),
      );
    else value(x, f, `${prefix}${k}`, out);
  }
  if (name === 'IPAddr') {
    const problem = addressProblem(o, family, at || name);
    if (problem) out.push(problem);
  }
}

/** Problems of an object written to /api/<type>, each naming the field; none when it fits. */
export function modelProblems(type: string, body: unknown): string[] {
  const name = SIM_MODELS[type];
  if (!name) return [`${type}: not an object type this controller serves`];
  const out: string[] = [];
  object(name, body, '', out);
  return out;
}
