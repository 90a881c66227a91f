/**
 * The model <-> AS3 mapping. One tenant (partition) per cluster holds one application with every
 * pool and virtual service of ours, or (per-application declarations) one application per pool and
 * per virtual service; each object carries `metadata.owner` = the cluster name, so an
 * object someone else declared in the tenant is foreign and is carried through untouched.
 *
 * - Pool: `monitors` from the health check; one member per backend with exactly one
 *   `serverAddresses` entry and its own `servicePort`, `adminState` disable for draining members,
 *   and the node in `metadata.node` and `remark` (what the BIG-IP admin sees).
 * - L4: `Service_TCP` / `Service_UDP` on `virtualAddresses: [vip]` and `virtualPort`.
 * - L7: `Service_HTTP` (`Service_HTTPS` with a `TLS_Server` of its certificates), BIG-IP's
 *   WebSocket profile, with an
 *   `Endpoint_Policy` of its routes (http-policy.ts: first match, the model's semantics, pools
 *   built for weighted rules, the 500 iRule), the default backend as the service's pool; the
 *   routes as applied in the service's metadata, so observe() reads back exactly them.
 * Pure: no I/O.
 */
import type { L4VirtualService, L7VirtualService, Pool, VirtualService } from '../../src/model/types.ts';
import type { Observed } from '../../src/adapter/changes.ts';
import { parseCertificates } from './certificates.ts';
import { meta, remark } from './as3-text.ts';
import {
  clientAuthentication,
  clientCaName,
  clientCaObjects,
  subjectRule,
  subjectRuleName,
} from './client-tls.ts';
import { IRULE_403, IRULE_500, renderHttpPolicy, splitPoolName } from './http-policy.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { firstMatchOrder } from '../../src/model/route-order.ts';
import { metaValue, parsePool, poolDrifted } from './pool-objects.ts';
import { serverSideTls, serverTlsRuleName } from './pool-tls.ts';
import { serverSideWired, type Wiring } from './server-side-tls.ts';
import {
  type DevicePersistence,
  persistenceOnDevice,
  readPersistence,
  samePersistence,
} from './persistence-read.ts';

import { sourceRangeRule, sourceRangeRuleName } from './source-ranges.ts';
import { l4Persistence } from './persistence.ts';
import { partitionMeta } from './placement.ts';
import { sniPolicy, sniRuleName, terminateObjects, terminateTlsName } from './tls-terminate.ts';
import { answersMisdirected, misdirectedRule, misdirectedRuleName } from './misdirected.ts';
import { readRetries, retriesOnDevice, retryRule, retryRuleName } from './route-retry.ts';

export { tenantOf } from './placement.ts';

export {
  checkMonitorName,
  checkMonitorRemark,
  renderCheckMonitor,
  renderPool,
  renderPoolObjects,
} from './pool-objects.ts';

export { APP, acrossApps, certApp, isOurApp, poolApp, type Refs, vsApp, withinApp } from './app-layout.ts';
import { APP, acrossApps, isOurApp, type Refs, withinApp } from './app-layout.ts';

const samePersist = (was: DevicePersistence | undefined, p: DevicePersistence) =>
  was === undefined || samePersistence(was, p);

export type Json = Record<string, unknown>;

/** The WebSocket profile every HTTP service of ours carries: the one BIG-IP ships. */
export const WEBSOCKET_PROFILE = '/Common/websocket';

const policyName = (vs: string): string => `${vs}_policy`;
const tlsName = (vs: string): string => `${vs}_tls`;
const iRuleName = (vs: string): string => `${vs}_500`;
const forbiddenRuleName = (vs: string): string => `${vs}_403`;

/** The objects one virtual service becomes (L7: the service and its endpoint policy). */
export function renderVirtualService(
  vs: VirtualService,
  owner: string,
  refs: Refs = withinApp(APP),
  /** The pools weighted rules draw their members from. */
  pools: ReadonlyMap<string, Pool> = new Map(),
): Record<string, Json> {
  return vs.kind === 'l4' ? renderL4(vs, owner, refs, pools) : renderL7(vs, owner, refs, pools);
}

/** An iRule object of ours. */
const iRule = (text: string, iRuleText: string): Json => ({
  class: 'iRule',
  remark: remark(text),
  iRule: iRuleText,
});

/**
 * An L4 service, its SNI policy (TLS passthrough) or its TLS profile and SNI iRule (TLS ended
 * here: tls-terminate.ts), and its client-filter iRule.
 */
function renderL4(
  vs: L4VirtualService,
  owner: string,
  refs: Refs,
  pools: ReadonlyMap<string, Pool>,
): Record<string, Json> {
  const ref = refs.pool;
  const terminate = terminateObjects(vs, refs.cert, refs.paths(vs.name), iRule);
  // Passthrough routes by the ClientHello (an endpoint policy); terminated ones by the iRule, and
  // re-encrypted to the pools whose members ask TLS (a BackendTLSPolicy), as an HTTP service is.
  const sni = terminate ? [] : (vs.sni ?? []);
  const serverSide = terminate ? serverSideTls(vs, pools, new Map(), refs.paths(vs.name)) : undefined;
  const iRules = [
    ...(vs.sourceRanges ? [sourceRangeRuleName(vs.name)] : []),
    ...(terminate?.iRules ?? []),
    ...(serverSide ? [serverTlsRuleName(vs.name)] : []),
  ];
  return {
    [vs.name]: {
      class: vs.protocol === 'UDP' ? 'Service_UDP' : 'Service_TCP',
      remark: remark(`npl-lb ${vs.source}`),
      virtualAddresses: [vs.vip],
      virtualPort: vs.port,
      ...(vs.pool ? { pool: ref(vs.pool) } : {}),
      // Source-address persistence where its pools ask it, none otherwise (AS3's default is
      // source-address on TCP and UDP services: never left to it).
      persistenceMethods: l4Persistence(vs, pools) === 'SourceIP' ? ['source-address'] : [],
      ...(sni.length > 0 ? { policyEndpoint: policyName(vs.name) } : {}),
      ...(terminate?.service ?? {}),
      ...(serverSide ? { clientTLS: serverSide.clientTLS } : {}),
      // Client filters: an iRule accepting the ranges (source-ranges.ts); then the SNI iRule.
      ...(iRules.length > 0 ? { iRules } : {}),
      // SNI routing with no route left has no pool and no policy: BIG-IP resets each connection.
      metadata: meta({
        owner,
        source: vs.source,
        ...(vs.sni ? { sni: JSON.stringify(vs.sni) } : {}),
        ...(terminate ? { certificates: JSON.stringify(vs.certificates) } : {}),
        ...(vs.sourceRanges ? { sourceRanges: JSON.stringify(vs.sourceRanges) } : {}),
        ...partitionMeta(vs),
      }),
    },
    ...(sni.length > 0 ? { [policyName(vs.name)]: sniPolicy(vs.name, sni, ref) } : {}),
    ...(terminate?.objects ?? {}),
    ...(serverSide
      ? { [serverTlsRuleName(vs.name)]: iRule('npl-lb: TLS to the members of each pool', serverSide.iRule) }
      : {}),
    ...(vs.sourceRanges
      ? {
          [sourceRangeRuleName(vs.name)]: iRule(
            `npl-lb client filter of ${vs.name}`,
            sourceRangeRule(vs.sourceRanges),
          ),
        }
      : {}),
  };
}

/**
 * An L7 service: the routes in model form in its metadata (observe() reads them back as
 * applied); the policy, the pools built for weighted rules and the 403 and 500 iRules from
 * http-policy.ts. HTTPS: the certificates in a TLS profile, picked by SNI, the first the default;
 * their order kept in the service's metadata. No redirect from port 80 (the HTTP listener is its
 * own).
 */
function renderL7(
  vs: L7VirtualService,
  owner: string,
  refs: Refs,
  pools: ReadonlyMap<string, Pool>,
): Record<string, Json> {
  const policy = renderHttpPolicy(vs, owner, refs.pool, pools);
  const https = vs.protocol === 'HTTPS';
  const certs = vs.certificates ?? [];
  // TLS to the members of the pools that ask it: a server-ssl profile and the iRule picking each
  // pool's own (pool-tls.ts).
  const serverSide = serverSideTls(vs, pools, policy.splitFrom, refs.paths(vs.name));
  // A route's retries on the statuses its rule names (route-retry.ts).
  const retry = retryRule(vs, pools, policy.splitFrom, refs.paths(vs.name));
  const misdirected = answersMisdirected(vs);
  const rules = l7IRules(vs, policy, serverSide?.iRule, retry);
  const iRules = rules.map(([name]) => name);
  return {
    [vs.name]: {
      class: https ? 'Service_HTTPS' : 'Service_HTTP',
      remark: remark(`npl-lb ingress class ${vs.ingressClass}`),
      virtualAddresses: [vs.vip],
      virtualPort: vs.port,
      ...(vs.defaultPool ? { pool: refs.pool(vs.defaultPool) } : {}),
      policyEndpoint: policyName(vs.name),
      // Persistence per route, by the policy's persist actions (http-policy.ts), never AS3's
      // default cookie on every request.
      persistenceMethods: [],
      ...(iRules.length > 0 ? { iRules } : {}),
      ...(https ? { serverTLS: tlsName(vs.name), redirect80: false } : {}),
      ...(serverSide ? { clientTLS: serverSide.clientTLS } : {}),
      // WebSocket: BIG-IP's own profile, so an upgrade on any route is passed and tunnelled.
      profileWebSocket: { bigip: WEBSOCKET_PROFILE },
      metadata: meta({
        owner,
        ingressClass: vs.ingressClass,
        routes: JSON.stringify(vs.routes),
        ...(https ? { certificates: JSON.stringify(certs) } : {}),
        ...(misdirected ? { listenerHosts: JSON.stringify(vs.listenerHosts) } : {}),
        ...partitionMeta(vs),
      }),
    },
    ...(https
      ? {
          [tlsName(vs.name)]: {
            class: 'TLS_Server',
            remark: remark(`npl-lb certificates of ${vs.name}`),
            certificates: certs.map((c) => ({ certificate: refs.cert(c) })),
            ...clientAuthentication(vs),
          },
          ...clientCaObjects(vs),
        }
      : {}),
    [policyName(vs.name)]: {
      class: 'Endpoint_Policy',
      remark: remark(`npl-lb routes of ${vs.name}`),
      strategy: 'first-match',
      rules: policy.rules,
    },
    ...policy.splitPools,
    ...Object.fromEntries(rules.map(([name, text, rule]) => [name, iRule(text, rule)])),
  };
}

/**
 * An HTTP service's iRules, in the order it lists them, each with its remark and text: 421 for a
 * misdirected request (misdirected.ts) before any route, 403 for a client outside a route's
 * ranges and 500 for an unresolved backend (http-policy.ts), TLS to the members of each pool
 * (pool-tls.ts), the verified client's subject to the members (client-tls.ts), a route's retries
 * by status (route-retry.ts).
 */
function l7IRules(
  vs: L7VirtualService,
  policy: { needs403: boolean; needs500: boolean },
  serverSideRule: string | undefined,
  retry: string | undefined,
): [name: string, remark: string, text: string][] {
  const subject = vs.protocol === 'HTTPS' ? vs.clientValidation?.subjectHeader : undefined;
  return [
    ...(answersMisdirected(vs)
      ? [
          [
            misdirectedRuleName(vs.name),
            'npl-lb: 421 for a request to another listener',
            misdirectedRule(vs.listenerHosts ?? []),
          ] as const,
        ]
      : []),
    ...(policy.needs403
      ? [
          [
            forbiddenRuleName(vs.name),
            "npl-lb: 403 for a client outside a route's ranges",
            IRULE_403,
          ] as const,
        ]
      : []),
    ...(policy.needs500
      ? [[iRuleName(vs.name), 'npl-lb: 500 for an unresolved backend', IRULE_500] as const]
      : []),
    ...(serverSideRule
      ? [[serverTlsRuleName(vs.name), 'npl-lb: TLS to the members of each pool', serverSideRule] as const]
      : []),
    ...(subject
      ? [[subjectRuleName(vs.name), "npl-lb: the verified client's subject", subjectRule(subject)] as const]
      : []),
    ...(retry ? [[retryRuleName(vs.name), 'npl-lb: route retries by status', retry] as const] : []),
  ].map(([name, text, rule]) => [name, text, rule]);
}

export { usedPool } from './service-read.ts';
import { parseL4, parseL7, usedPool } from './service-read.ts';

const POOL = 'Pool';
const SERVICES = new Set(['Service_TCP', 'Service_UDP', 'Service_HTTP', 'Service_HTTPS', 'Service_L4']);

/**
 * Reads a whole declaration (ADC): our objects in model form, from our tenant and from the
 * partitions our placed virtual services live in (any tenant: an object of ours is in one of our
 * applications and carries our owner), and every pool and virtual service of anyone else as
 * foreign. A pool or certificate declared in several tenants (each partition holds copies of what
 * its virtual services use) is read once, from our own tenant first.
 */
export function parseDeclaration(adc: Json | undefined, tenant: string, owner: string): Observed {
  const observed: Observed = { owned: { pools: [], virtualServices: [], certificates: [] }, foreign: [] };
  const drifted: string[] = [];
  const driftedServices: string[] = [];
  const wired: Wiring[] = [];
  const persisted = new Map<string, DevicePersistence>();
  const seen = new Set<string>();
  const once = (kind: string, name: string) => !seen.has(`${kind}/${name}`) && !!seen.add(`${kind}/${name}`);
  const tenants = Object.entries(adc ?? {}).filter(([, t]) => (t as Json | null)?.class === 'Tenant');
  // Our own tenant first: its copies are the ones read.
  tenants.sort(([a], [b]) => Number(b === tenant) - Number(a === tenant));
  for (const [tName, t] of tenants) {
    for (const [appName, app] of Object.entries(t as Json)) {
      if ((app as Json | null)?.class !== 'Application') continue;
      const certs = parseCertificates(app as Json, owner);
      const ours = isOurApp(appName);
      if (ours) observed.owned.certificates!.push(...certs.owned.filter((c) => once('certificate', c.name)));
      if (ours)
        for (const [pool, p] of persistenceOnDevice(app as Json, usedPool))
          persisted.set(pool, samePersist(persisted.get(pool), p) ? p : 'mixed');
      for (const name of [...(ours ? [] : certs.owned.map((c) => c.name)), ...certs.foreign])
        observed.foreign.push({ kind: 'certificate', name, owner: `tenant ${tName}` });
      for (const [name, raw] of Object.entries(app as Json)) {
        const o = raw as Json | null;
        if (!o || typeof o !== 'object') continue;
        const kind = o.class === POOL ? 'pool' : SERVICES.has(String(o.class)) ? 'virtualService' : undefined;
        if (!kind) continue;
        const objOwner = metaValue(o, 'owner');
        if (!ours || objOwner !== owner) {
          observed.foreign.push({ kind, name, owner: objOwner ?? `tenant ${tName}` });
          continue;
        }
        // A pool built for a weighted rule belongs to its virtual service, not to the model.
        if (kind === 'pool' && metaValue(o, 'split') !== undefined) continue;
        if (!once(kind, name)) continue;
        if (kind === 'pool') {
          observed.owned.pools.push(parsePool(name, o, app as Json));
          if (poolDrifted(o)) drifted.push(name);
        } else if (o.class === 'Service_HTTP' || o.class === 'Service_HTTPS') {
          const vs = parseL7(name, o, app as Json);
          observed.owned.virtualServices.push(vs);
          // Its WebSocket profile taken off (or another put on) by hand: written again.
          if ((o.profileWebSocket as Json | undefined)?.bigip !== WEBSOCKET_PROFILE)
            driftedServices.push(name);
          wired.push({
            vs,
            o,
            app: app as Json,
            refs: appName === APP ? withinApp(tName) : acrossApps(tName),
          });
        } else {
          const refs = appName === APP ? withinApp(tName) : acrossApps(tName);
          const vs = parseL4(name, o, app as Json, refs.paths(name));
          observed.owned.virtualServices.push(vs);
          // A TCP service ending TLS re-encrypts to its TLS pools as an HTTP one does.
          if (vs.certificates?.length) wired.push({ vs, o, app: app as Json, refs });
        }
      }
    }
  }
  drifted.push(...readPersistence(observed.owned.pools, persisted));
  const pools = new Map(observed.owned.pools.map((p) => [p.name, p]));
  // Route retries from the HTTP services' retry iRules (route-retry.ts).
  const { retries, unreadable } = retriesOnDevice(
    wired.map((w) => ({
      ...w,
      paths: w.refs.paths(w.vs.name),
      splits: () =>
        w.vs.kind === 'l7' ? renderHttpPolicy(w.vs, owner, w.refs.pool, pools).splitFrom : new Map(),
    })),
  );
  drifted.push(...readRetries(observed.owned.pools, retries), ...unreadable.flatMap((vs) => poolRefs(vs)));
  for (const w of wired) if (!serverSideWired(w, pools, owner)) drifted.push(...poolRefs(w.vs));
  if (drifted.length + driftedServices.length > 0)
    observed.drifted = [
      ...drifted.map((name) => ({ kind: 'pool' as const, name })),
      ...driftedServices.map((name) => ({ kind: 'virtualService' as const, name })),
    ];
  return observed;
}

/** The names of the objects in our application that belong to one of our virtual services. */
export function ownedObjectNames(vs: VirtualService): string[] {
  if (vs.kind === 'l4')
    return [
      vs.name,
      ...(vs.sni?.length ? [policyName(vs.name)] : []),
      ...(vs.sourceRanges ? [sourceRangeRuleName(vs.name)] : []),
      ...(vs.certificates?.length
        ? [terminateTlsName(vs.name), sniRuleName(vs.name), serverTlsRuleName(vs.name)]
        : []),
    ];
  const splits = firstMatchOrder(vs.routes).flatMap((r, i) =>
    r.backends ? [splitPoolName(vs.name, i)] : [],
  );
  return [
    vs.name,
    policyName(vs.name),
    ...(vs.protocol === 'HTTPS' ? [tlsName(vs.name), clientCaName(vs.name)] : []),
    iRuleName(vs.name),
    forbiddenRuleName(vs.name),
    serverTlsRuleName(vs.name),
    subjectRuleName(vs.name),
    misdirectedRuleName(vs.name),
    retryRuleName(vs.name),
    ...splits,
  ];
}
