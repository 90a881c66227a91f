/**
 * A BIG-IP pool's policy fields as an admin reads and edits them on the device (the contract's
 * "changed by hand" case for F5): the pool's `loadBalancingMode`, `slowRampTime`, `reselectTries`,
 * its members' `connectionLimit`, and persistence where AS3 keeps it, on the virtual servers that
 * use the pool (an L4 service's `persistenceMethods`, the `persist` action of an HTTP service's
 * rule forwarding to it), and TLS to members (the pool's TLS_Client, its CA bundle, and the
 * server-ssl profile and iRule of the virtual servers sending to it), and a route's retries (each
 * HTTP virtual server's retry iRule: the pool's arm).
 */
import type { BigIpSimulator } from '../../sim/f5/simulator.ts';
import type { PolicyRow } from '../contract/adapter-contract.ts';
import { caBundle } from '../../src/source/gateway/backend-tls.ts';
import { testAuthority } from './certs.ts';
import { persistenceCookie } from '../../src/model/persistence.ts';
import { cookieWord } from './model.ts';

type Json = Record<string, unknown>;

const poolOf = (p: unknown): string | undefined => {
  const ptr = typeof p === 'string' ? p : (p as { use?: unknown } | undefined)?.use;
  return typeof ptr === 'string' ? ptr.split('/').pop() : undefined;
};

/** The application holding pool `name`, and the pool. */
function find(sim: BigIpSimulator, name: string): { pool: Json } {
  for (const t of sim.tenants.values())
    for (const app of Object.values(t)) {
      const o = (app as Json | null)?.[name] as Json | undefined;
      if ((app as Json | null)?.class === 'Application' && o?.class === 'Pool') return { pool: o };
    }
  throw new Error(`no pool ${name}`);
}

/** Every object of every application (a per-application layout keeps pools and services apart). */
const everything = (sim: BigIpSimulator): Json =>
  Object.fromEntries(
    [...sim.tenants.values()].flatMap((t) =>
      Object.values(t)
        .filter((a): a is Json => (a as Json | null)?.class === 'Application')
        .flatMap((a, i) => Object.entries(a).map(([k, o]) => [`${i}/${k}`, o])),
    ),
  );
const objects = (app: Json): Json[] =>
  Object.values(app).filter((o): o is Json => !!o && typeof o === 'object');
const l4Service = (app: Json, name: string): Json | undefined =>
  objects(app).find(
    (o) => String(o.class).startsWith('Service_') && o.class !== 'Service_HTTP' && poolOf(o.pool) === name,
  );
const forwards = (app: Json, name: string): Json[] =>
  objects(app)
    .filter((o) => o.class === 'Endpoint_Policy')
    .flatMap((p) => (p.rules as Json[] | undefined) ?? [])
    .filter((r) =>
      ((r.actions as Json[] | undefined) ?? []).some(
        (a) => a.type === 'forward' && poolOf((a.select as Json | undefined)?.pool) === name,
      ),
    );

/** Every application of every tenant. */
const apps = (sim: BigIpSimulator): Json[] =>
  [...sim.tenants.values()].flatMap((t) =>
    Object.values(t).filter((a): a is Json => (a as Json | null)?.class === 'Application'),
  );

/** A TLS pool's server-ssl profile (TLS_Client) and the application holding it. */
function tlsClient(sim: BigIpSimulator, name: string): { client: Json; app: Json } | undefined {
  for (const app of apps(sim)) {
    const o = app[`${name}_stls`] as Json | undefined;
    if (o?.class === 'TLS_Client') return { client: o, app };
  }
  return undefined;
}

/** The HTTP virtual servers whose endpoint policy forwards to pool `name`, with name and application. */
const httpServicesIn = (sim: BigIpSimulator, name: string): { svc: Json; svcName: string; app: Json }[] =>
  apps(sim).flatMap((app) =>
    Object.entries(app)
      .filter(
        (e): e is [string, Json] =>
          !!e[1] &&
          typeof e[1] === 'object' &&
          String((e[1] as Json).class).startsWith('Service_HTTP') &&
          forwards({ p: app[String((e[1] as Json).policyEndpoint)] }, name).length > 0,
      )
      .map(([svcName, svc]) => ({ svc, svcName, app })),
  );
/** The same virtual servers alone. */
const httpServices = (sim: BigIpSimulator, name: string): Json[] =>
  httpServicesIn(sim, name).map((s) => s.svc);

/** The arm line of pool `name` in a service's route-retry iRule (route-retry.ts), where listed. */
const retryArm = (svc: Json, svcName: string, app: Json, name: string): string | undefined => {
  const rule = `${svcName}_retry`;
  if (!((svc.iRules as unknown[] | undefined) ?? []).some((r) => String(r).endsWith(rule))) return undefined;
  const text = String((app[rule] as Json | undefined)?.iRule ?? '');
  return text.split('\n').find((l) => l.includes(`/${name}" {`));
};

/** Whether a virtual server carries a server-ssl profile and its TLS iRule (pool-tls.ts). */
const serverSide = (svc: Json): boolean =>
  svc.clientTLS !== undefined &&
  ((svc.iRules as unknown[] | undefined) ?? []).some((r) => String(r).endsWith('_btls'));

/** The CA a TLS_Client trusts: its CA_Bundle's text, or the built-in name (`generic`, `none`). */
function trustedCa(tls: { client: Json; app: Json } | undefined): unknown {
  const t = tls?.client.trustCA;
  if (t === undefined || typeof t === 'string') return t;
  const bundle = tls!.app[String(poolOf(t))] as Json | undefined;
  return typeof bundle?.bundle === 'string' ? bundle.bundle.trim() : undefined;
}

export function f5Fields(sim: BigIpSimulator, name: string): Record<string, unknown> {
  const { pool } = find(sim, name);
  const tls = tlsClient(sim, name);
  const services = httpServices(sim, name);
  const app = everything(sim);
  const members = (pool.members as Json[] | undefined) ?? [];
  const persist = forwards(app, name)
    .flatMap((r) => r.actions as Json[])
    .find((a) => a.type === 'persist');
  const l4 = l4Service(app, name);
  return {
    loadBalancingMode: pool.loadBalancingMode,
    slowRampTime: pool.slowRampTime,
    reselectTries: pool.reselectTries,
    'members.connectionLimit': members[0]?.connectionLimit,
    'service.persistenceMethods': l4 ? JSON.stringify(l4.persistenceMethods) : undefined,
    'policy.persist': persist ? Object.keys(persist).find((k) => k !== 'type' && k !== 'event') : undefined,
    // The inserted cookie: `<name> <expiry>`, the name `own` where it is the pool's own (a route's
    // session cookie without a name of its own).
    'policy.cookie': persist?.cookieInsert
      ? `${cookieWord(name, (persist.cookieInsert as Json).name)} ${String((persist.cookieInsert as Json).expiry)}`
      : undefined,
    'tls.sendSNI': tls?.client.sendSNI,
    'tls.serverName': tls?.client.serverName,
    'tls.validateCertificate': tls?.client.validateCertificate,
    'tls.trustCA': trustedCa(tls),
    'service.serverSide': services.length > 0 ? services.every(serverSide) : undefined,
    // Its arm of each HTTP service's retry iRule: `attempts:statuses`, the same on every one.
    'service.retry':
      [
        ...new Set(
          httpServicesIn(sim, name).map(({ svc, svcName, app }) => {
            const m = /set npl_retry_max (\d+); set npl_retry_codes \{([^}]*)\}/.exec(
              retryArm(svc, svcName, app, name) ?? '',
            );
            return m ? `${m[1]}:${m[2]}` : undefined;
          }),
        ),
      ]
        .filter((x) => x !== undefined)
        .join('|') || undefined,
  };
}

/** Edits the deployed objects in place, as a change made on the BIG-IP itself. */
export function editF5(sim: BigIpSimulator, name: string, fields: Record<string, unknown>): void {
  const { pool } = find(sim, name);
  const app = everything(sim);
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'members.connectionLimit')
      for (const m of (pool.members as Json[] | undefined) ?? []) m.connectionLimit = v;
    else if (k === 'service.persistenceMethods')
      l4Service(app, name)!.persistenceMethods = JSON.parse(String(v));
    else if (k === 'policy.persist')
      for (const r of forwards(app, name)) {
        const actions = (r.actions as Json[]).filter((a) => a.type !== 'persist');
        r.actions =
          v === undefined
            ? actions
            : [
                {
                  type: 'persist',
                  event: 'request',
                  [String(v)]: v === 'sourceAddress' ? { netmask: '255.255.255.255', timeout: 1800 } : {},
                },
                ...actions,
              ];
      }
    else if (k === 'policy.cookie')
      for (const r of forwards(app, name)) {
        const [cookie, expiry] = String(v).split(' ');
        for (const a of r.actions as Json[])
          if (a.type === 'persist' && a.cookieInsert)
            a.cookieInsert = { name: cookie === 'own' ? persistenceCookie(name) : cookie, expiry };
      }
    else if (k.startsWith('tls.')) {
      const tls = tlsClient(sim, name)!;
      const field = k.slice('tls.'.length);
      if (field === 'trustCA' && typeof v === 'string' && v.includes('BEGIN CERTIFICATE'))
        (tls.app[String(poolOf(tls.client.trustCA))] as Json).bundle = v;
      else tls.client[field] = v;
    } else if (k === 'service.retry')
      for (const { svc, svcName, app } of httpServicesIn(sim, name)) {
        const rule = `${svcName}_retry`;
        if (v === undefined) {
          // The retry iRule taken off the service by hand.
          svc.iRules = ((svc.iRules as unknown[] | undefined) ?? []).filter((r) => !String(r).endsWith(rule));
          continue;
        }
        // The pool's arm edited by hand: other attempts and statuses.
        const [max, codes] = String(v).split(':');
        const o = app[rule] as Json;
        o.iRule = String(o.iRule)
          .split('\n')
          .map((l) =>
            l.includes(`/${name}" {`)
              ? l.replace(
                  /\{ set npl_retry_max .*$/,
                  `{ set npl_retry_max ${max}; set npl_retry_codes {${codes}} }`,
                )
              : l,
          )
          .join('\n');
      }
    else if (k === 'service.serverSide')
      for (const svc of httpServices(sim, name)) {
        // The server-ssl profile and its iRule taken off by hand: clear text to TLS members.
        delete svc.clientTLS;
        svc.iRules = ((svc.iRules as unknown[] | undefined) ?? []).filter(
          (r) => !String(r).endsWith('_btls'),
        );
      }
    else if (v === undefined) delete pool[k];
    else pool[k] = v;
  }
}

/** The CA a TLS pool trusts, and another one an admin puts in its place (the boundary's form). */
const pemOf = async (name: string) => {
  const b = caBundle((await testAuthority(name)).cert);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
};
const [CA, OTHER_CA] = [await pemOf('npl-lb contract CA'), await pemOf('someone else')];
const tls = { serverName: 'backend.example.com', verifyNames: ['backend.example.com'], ca: CA };

/** What each policy value is in AS3's objects on the BIG-IP, and a hand edit of it. */
export const F5_ROWS: PolicyRow[] = [
  // TLS to the members: the pool's TLS_Client (verifying, the SNI, the name checked, its CA
  // bundle or BIG-IP's public CAs), and the virtual server's server-ssl profile and iRule; each
  // turned off or changed by hand is written again.
  {
    policy: { backendTls: tls },
    http: true,
    device: {
      'tls.sendSNI': 'backend.example.com',
      'tls.serverName': 'backend.example.com',
      'tls.validateCertificate': true,
      'tls.trustCA': CA.trim(),
      'service.serverSide': true,
    },
    hand: { 'tls.validateCertificate': false },
  },
  {
    policy: { backendTls: { ...tls, verifyNames: ['alt.example.com'] } },
    http: true,
    device: { 'tls.sendSNI': 'backend.example.com', 'tls.serverName': 'alt.example.com' },
    hand: { 'tls.sendSNI': 'evil.example.com' },
  },
  {
    policy: { backendTls: { ...tls, serverName: 'ca.example.com', verifyNames: ['ca.example.com'] } },
    http: true,
    device: { 'tls.trustCA': CA.trim() },
    hand: { 'tls.trustCA': OTHER_CA.trim() },
  },
  {
    policy: {
      backendTls: {
        ...tls,
        serverName: 'public.example.com',
        verifyNames: ['public.example.com'],
        ca: 'System',
      },
    },
    http: true,
    device: { 'tls.trustCA': 'generic' },
    hand: { 'tls.trustCA': 'none' },
  },
  {
    policy: { backendTls: { ...tls, serverName: 'wired.example.com', verifyNames: ['wired.example.com'] } },
    http: true,
    device: { 'service.serverSide': true },
    hand: { 'service.serverSide': false },
  },
  {
    policy: { algorithm: 'LeastConnections' },
    device: { loadBalancingMode: 'least-connections-member' },
    hand: { loadBalancingMode: 'round-robin' },
  },
  {
    policy: { persistence: 'Cookie' },
    http: true,
    device: { 'policy.persist': 'cookieInsert' },
    hand: { 'policy.persist': undefined },
  },
  // A route's session cookie (an HTTPRoute rule's sessionPersistence, Permanent): the rule's
  // cookie, its lifetime the expiry; another lifetime or name set by hand is written again.
  {
    policy: {
      persistence: 'Cookie',
      sessionCookie: { name: 'cart-sid', absoluteSeconds: 600, permanent: true },
    },
    http: true,
    device: { 'policy.cookie': 'cart-sid 00:10:00' },
    hand: { 'policy.cookie': 'cart-sid 00:20:00' },
  },
  {
    policy: { persistence: 'Cookie', sessionCookie: { absoluteSeconds: 90_061, permanent: true } },
    http: true,
    device: { 'policy.cookie': 'own 1d01:01:01' },
    hand: { 'policy.cookie': 'someone-else 1d01:01:01' },
  },
  {
    policy: { persistence: 'SourceIP' },
    device: { 'service.persistenceMethods': '["source-address"]' },
    hand: { 'service.persistenceMethods': '[]' },
  },
  {
    policy: { maxConnections: 25 },
    device: { 'members.connectionLimit': 25 },
    hand: { 'members.connectionLimit': 7 },
  },
  { policy: { slowStartSeconds: 4 }, device: { slowRampTime: 4 }, hand: { slowRampTime: 10 } },
  { policy: { retries: 0 }, device: { reselectTries: 0 }, hand: { reselectTries: 3 } },
  // A route's retries (an HTTPRoute rule's retry): the HTTP service's iRule arm for the pool; a
  // status dropped from it, the rule taken off the service, or other attempts, by hand: written again.
  {
    policy: { retries: 2, retryStatuses: [502, 503] },
    http: true,
    device: { reselectTries: 2, 'service.retry': '2:502 503' },
    hand: { 'service.retry': '2:502' },
  },
  {
    policy: { retries: 1, retryStatuses: [500] },
    http: true,
    device: { 'service.retry': '1:500' },
    hand: { 'service.retry': undefined },
  },
  {
    policy: { retries: 4, retryStatuses: [504] },
    http: true,
    device: { 'service.retry': '4:504' },
    hand: { 'service.retry': '9:504' },
  },
  // Round robin asked, a mode set by hand that the model has no word for.
  {
    policy: { retries: 2 },
    device: { loadBalancingMode: 'round-robin' },
    hand: { loadBalancingMode: 'ratio-member' },
  },
];
