/**
 * Our tenant as it should be, in one of two layouts: every object of ours in one application
 * (`npl_lb`, for whole-tenant declarations), or one application per pool and per virtual service
 * (per-application declarations, AS3 3.47 and later). Objects in the tenant that are not ours stay
 * as they are. And what a change of the tenant costs in per-application declarations: the
 * applications to post and to delete, or the whole tenant when its layout changes.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Certificate, Pool, VirtualService } from '../../src/model/types.ts';
import { KEY_DIGEST } from '../../src/model/normalize.ts';
import { certificateRefs, poolRefs } from '../../src/model/refs.ts';
import { certConstants, renderCertificate } from './certificates.ts';
import {
  acrossApps,
  withinApp,
  APP,
  certApp,
  isOurApp,
  type Json,
  ownedObjectNames,
  parseDeclaration,
  poolApp,
  checkMonitorRemark,
  renderPoolObjects,
  renderVirtualService,
  tenantOf,
  vsApp,
} from './declaration.ts';
import { metaValue } from './pool-objects.ts';
import { poolCaName, poolTlsName } from './pool-tls.ts';

const isApp = (x: unknown): x is Json => (x as Json | null)?.class === 'Application';
const generic = (objects: Json): Json => ({ class: 'Application', template: 'generic', ...objects });

export interface OwnedObjects {
  pools: Map<string, Pool>;
  vss: Map<string, VirtualService>;
  certs: Map<string, Certificate>;
}

/**
 * Our objects per tenant. A partition (a class's LoadBalancerParameters) holds its virtual
 * services and copies of the pools and certificates they use, since an AS3 object points only
 * into its own tenant; our own tenant (`home`) holds its virtual services with what they use, and
 * whatever no virtual service uses. Every tenant of `also` (those that hold objects of ours now)
 * is in the answer, empty when nothing of ours is left there. Pure.
 */
export function splitByTenant(
  { pools, vss, certs }: OwnedObjects,
  home: string,
  also: Iterable<string>,
): Map<string, OwnedObjects> {
  const out = new Map<string, OwnedObjects>();
  const of = (t: string): OwnedObjects => {
    let o = out.get(t);
    if (!o) out.set(t, (o = { pools: new Map(), vss: new Map(), certs: new Map() }));
    return o;
  };
  for (const t of [home, ...also]) of(t);
  const usedPools = new Set<string>();
  const usedCerts = new Set<string>();
  for (const [name, vs] of vss) {
    const t = of(tenantOf(vs, home));
    t.vss.set(name, vs);
    for (const p of poolRefs(vs)) {
      const pool = pools.get(p);
      if (pool) t.pools.set(p, pool);
      usedPools.add(p);
    }
    for (const c of certificateRefs(vs)) {
      const cert = certs.get(c);
      if (cert) t.certs.set(c, cert);
      usedCerts.add(c);
    }
  }
  const rest = of(home);
  for (const [name, p] of pools) if (!usedPools.has(name)) rest.pools.set(name, p);
  for (const [name, c] of certs) if (!usedCerts.has(name)) rest.certs.set(name, c);
  return out;
}

/** Every tenant of a declaration by name, our own among them (empty when it has none yet). */
export function tenantsOf(adc: Json | undefined, home: string): Map<string, Json> {
  const out = new Map<string, Json>([[home, { class: 'Tenant' }]]);
  for (const [tName, t] of Object.entries(adc ?? {}))
    if ((t as Json | null)?.class === 'Tenant') out.set(tName, t as Json);
  return out;
}

/** Whether a tenant holds objects of ours (in one of our applications, with our owner). */
export const holdsOurs = (t: Json, owner: string): boolean =>
  Object.entries(t).some(
    ([appName, app]) =>
      isOurApp(appName) &&
      (app as Json | null)?.class === 'Application' &&
      Object.values(app as Json).some((o) => metaValue(o, 'owner') === owner),
  );

/**
 * Every tenant of ours as it should be (`current`: every tenant as the device has it; one that is
 * not ours is carried through as it is, whoever else's objects a partition also holds).
 */
export function renderTenants(
  current: ReadonlyMap<string, Json>,
  owned: OwnedObjects,
  ids: { tenant: string; owner: string },
  perApp: boolean,
): Map<string, Json> {
  const ours = [...current].filter(([, t]) => holdsOurs(t, ids.owner)).map(([name]) => name);
  const split = splitByTenant(owned, ids.tenant, ours);
  return new Map(
    [...split].map(([t, objects]) => [
      t,
      renderTenant(current.get(t), objects, { tenant: t, owner: ids.owner }, perApp),
    ]),
  );
}

export function renderTenant(
  current: Json | undefined,
  { pools, vss, certs }: OwnedObjects,
  ids: { tenant: string; owner: string },
  perApp: boolean,
): Json {
  const now = current ?? { class: 'Tenant' };
  const ours = new Set<string>();
  const before = parseDeclaration({ [ids.tenant]: now }, ids.tenant, ids.owner);
  for (const v of before.owned.virtualServices) for (const n of ownedObjectNames(v)) ours.add(n);
  // A pool's server-ssl profile and CA bundle go with it, whatever they say now.
  for (const p of before.owned.pools)
    for (const n of [p.name, poolTlsName(p.name), poolCaName(p.name)]) ours.add(n);
  for (const c of before.owned.certificates ?? []) ours.add(c.name);
  // Our pools' HTTP monitors (marked by their remark: a Monitor has no metadata), whether or not
  // a pool still uses them: one whose pool lost its check goes with the rewrite.
  for (const [name, value] of Object.entries(now))
    if (isApp(value) && isOurApp(name))
      for (const [k, o] of Object.entries(value))
        if ((o as Json | null)?.class === 'Monitor' && (o as Json).remark === checkMonitorRemark(ids.owner))
          ours.add(k);
  // Everything that is not ours, as it is: other applications, and others' objects in ours.
  const tenant: Json = { class: 'Tenant' };
  for (const [name, value] of Object.entries(now)) {
    if (!isApp(value) || !isOurApp(name)) {
      tenant[name] = value;
      continue;
    }
    const others = Object.entries(value).filter(
      ([k, o]) => k !== 'class' && k !== 'template' && k !== 'constants' && !ours.has(k) && o !== undefined,
    );
    // Constants: others' stay, our certificates' fields are written again below.
    const constants = certConstants(value, [], ids.owner);
    if (constants) others.push(['constants', constants]);
    if (others.length > 0) tenant[name] = generic(Object.fromEntries(others));
  }
  const sorted = <T>(m: Map<string, T>) => [...m.keys()].sort().map((k) => [k, m.get(k)!] as const);
  // A certificate read back carries its key's digest, not the key: the object as it is stands.
  const certObject = (c: Certificate): Json => {
    if (!c.keyPem.startsWith(KEY_DIGEST)) return renderCertificate(c);
    for (const [name, app] of Object.entries(now))
      if (isApp(app) && isOurApp(name) && (app[c.name] as Json | undefined)?.class === 'Certificate')
        return app[c.name] as Json;
    throw new Error(`certificate ${c.name}: neither its key nor its object is known`);
  };
  if (!perApp) {
    const app: Json = { ...((tenant[APP] as Json | undefined) ?? generic({})) };
    for (const [name, p] of sorted(pools)) Object.assign(app, renderPoolObjects(name, p, ids.owner));
    for (const [, v] of sorted(vss))
      Object.assign(app, renderVirtualService(v, ids.owner, withinApp(ids.tenant), pools));
    for (const [name, c] of sorted(certs)) app[name] = certObject(c);
    const constants = certConstants(app, [...certs.values()], ids.owner);
    if (constants) app.constants = constants;
    if (Object.keys(app).length > 2) tenant[APP] = app;
    else delete tenant[APP];
    return tenant;
  }
  const put = (appName: string, objects: Json) => {
    tenant[appName] = { ...((tenant[appName] as Json | undefined) ?? generic({})), ...objects };
  };
  const across = acrossApps(ids.tenant);
  for (const [name, p] of sorted(pools))
    put(poolApp(name), renderPoolObjects(name, p, ids.owner, across.cert));
  for (const [name, v] of sorted(vss)) put(vsApp(name), renderVirtualService(v, ids.owner, across, pools));
  for (const [name, c] of sorted(certs)) {
    const app = {
      ...((tenant[certApp(name)] as Json | undefined) ?? generic({})),
      [name]: certObject(c),
    };
    app.constants = certConstants(app, [c], ids.owner);
    tenant[certApp(name)] = app;
  }
  return tenant;
}

export interface AppChanges {
  /** The tenant's layout or its own properties change: declare the whole tenant. */
  whole: boolean;
  /** Applications to post (new or changed). */
  post: Json;
  /** Applications to delete: virtual services' first, then pools'. */
  remove: string[];
}

export function appChanges(current: Json | undefined, next: Json): AppChanges {
  const now = current ?? { class: 'Tenant' };
  const props = (t: Json) => Object.entries(t).filter(([, v]) => !isApp(v));
  const whole = !isDeepStrictEqual(now[APP], next[APP]) || !isDeepStrictEqual(props(now), props(next));
  const post: Json = {};
  for (const [name, app] of Object.entries(next)) {
    if (isApp(app) && !isDeepStrictEqual(now[name], app)) post[name] = app;
  }
  const remove = Object.entries(now)
    .filter(([name, app]) => isApp(app) && !(name in next))
    .map(([name]) => name)
    .sort((a, b) =>
      a.startsWith('V_') === b.startsWith('V_') ? (a < b ? -1 : 1) : a.startsWith('V_') ? -1 : 1,
    );
  return { whole, post, remove };
}

/** Every tenant after a declaration of `changed` went. */
export function settled(current: ReadonlyMap<string, Json>, changed: [string, Json][]): Map<string, Json> {
  const out = new Map(current);
  for (const [t, json] of changed) out.set(t, json);
  return out;
}

/** The map of one kind of our objects. */
export function mapOf(
  o: OwnedObjects,
  kind: 'pool' | 'virtualService' | 'certificate',
): Map<string, unknown> {
  return kind === 'pool' ? o.pools : kind === 'virtualService' ? o.vss : o.certs;
}
