/**
 * CIS's custom resources as npl-lb objects: a VirtualServer becomes an Ingress of npl-lb's class
 * routing its host (and aliases) and pool paths to the same Services, and a BackendPolicy per pool
 * with its balancing method, monitor and the virtual server's persistence; a TransportServer's pool
 * a BackendPolicy, its address and port a LoadBalancer Service to make by hand. Every other field
 * is noted with where npl-lb takes it or why it has none. Pure.
 */
import { z } from 'zod';
import { monitorSchema, poolSettings } from './cis-monitor.ts';
import { ingressTls, tlsProfiles } from './cis-tls.ts';
import {
  badIdentity,
  nameOf,
  type ObjectsMigration,
  objectName,
  PolicyCollector,
  SERVICE_NAME,
  type SourceObject,
  wellNamed,
  type TargetService,
  hostProblem,
  pathProblem,
} from '../../../src/migrate/objects.ts';

const poolSchema = z.looseObject({
  path: z.string().optional().catch(undefined),
  service: z.string().catch(''),
  servicePort: z.union([z.number(), z.string()]).optional().catch(undefined),
  serviceNamespace: z.string().optional().catch(undefined),
  loadBalancingMethod: z.string().optional().catch(undefined),
  monitor: monitorSchema.optional().catch(undefined),
  monitors: z.array(monitorSchema).catch([]),
});
type Pool = z.infer<typeof poolSchema>;

/** Fields of a pool read here; any other is noted. */
const POOL_READ = new Set([
  'path',
  'service',
  'servicePort',
  'serviceNamespace',
  'loadBalancingMethod',
  'monitor',
  'monitors',
]);
/** Fields of a VirtualServer or TransportServer read here, or noted with where npl-lb takes them. */
const SERVER_FIELDS: Record<string, { kind: 'by hand' | 'no equivalent' | 'changed'; why: string } | null> = {
  host: null,
  hostAliases: null,
  pools: null,
  pool: null,
  persistenceProfile: null,
  virtualServerAddress: {
    kind: 'by hand',
    why: 'the VIP: the npl-lb.io/vip annotation of the IngressClass (Ingress) or of the Service (LoadBalancer), inside vip.cidrs',
  },
  ipamLabel: { kind: 'changed', why: 'npl-lb allocates VIPs itself from vip.cidrs' },
  tlsProfileName: null,
  virtualServerHTTPPort: { kind: 'by hand', why: "the chart's ingressClass.httpPort" },
  virtualServerHTTPSPort: { kind: 'by hand', why: "the chart's ingressClass.httpsPort" },
  virtualServerPort: null,
  virtualServerName: {
    kind: 'changed',
    why: 'npl-lb names the virtual services after the cluster, class and port',
  },
  allowSourceRange: { kind: 'by hand', why: "a LoadBalancer Service's spec.loadBalancerSourceRanges" },
  snat: {
    kind: 'changed',
    why: 'npl-lb always translates the source (SNAT automap): members answer through the load balancer',
  },
  mode: { kind: 'changed', why: 'npl-lb writes a standard (full-proxy) virtual server' },
  type: null,
};

function unread(
  o: SourceObject,
  keys: Iterable<string>,
  known: ReadonlySet<string> | Record<string, unknown>,
  prefix = '',
): { from: string; kind: 'no equivalent'; why: string }[] {
  const has = (k: string) => (known instanceof Set ? known.has(k) : k in known);
  return [...keys]
    .filter((k) => !has(k))
    .map((k) => ({
      from: `${objectName(o)} ${prefix}${k}`,
      kind: 'no equivalent' as const,
      why: 'a BIG-IP profile, policy or iRule setting (WAF, DoS, bot defense, iRules, profiles, VLANs, rewrites, weights): npl-lb does not write it',
    }));
}

/** Why a pool's service and port cannot be an Ingress backend (a Service name, a port number or name). */
function backendProblem(pool: Pool): string | undefined {
  if (!SERVICE_NAME.test(pool.service))
    return `service ${JSON.stringify(pool.service.slice(0, 80))} is not a Service name`;
  const p = pool.servicePort;
  if (p === undefined) return 'a pool without a servicePort';
  if (
    typeof p === 'number'
      ? !Number.isInteger(p) || p < 1 || p > 65535
      : !/^[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?$/.test(p)
  )
    return `servicePort ${JSON.stringify(p)} is neither a port number nor a port name`;
  return undefined;
}

function target(o: SourceObject, pool: Pool): TargetService {
  return {
    namespace: pool.serviceNamespace ?? o.metadata.namespace,
    service: pool.service,
    ...(typeof pool.servicePort === 'string' ? { port: pool.servicePort } : {}),
  };
}

function policyFor(o: SourceObject, pool: Pool, policies: PolicyCollector, out: ObjectsMigration): void {
  const from = `${objectName(o)} pool ${pool.service}${pool.path ?? ''}`;
  const { settings, notes } = poolSettings(
    pool,
    typeof o.spec.persistenceProfile === 'string' ? o.spec.persistenceProfile : undefined,
  );
  out.notes.push(...notes.map((n) => ({ ...n, from })));
  if (pool.service) policies.add(from, `${o.metadata.name}-${pool.service}`, target(o, pool), settings);
  out.notes.push(...unread(o, Object.keys(pool), POOL_READ, `pool ${pool.service} `));
}

function notesOf(o: SourceObject, out: ObjectsMigration): void {
  for (const k of Object.keys(o.spec)) {
    const n = SERVER_FIELDS[k];
    if (n) out.notes.push({ from: `${objectName(o)} ${k}`, ...n });
  }
  out.notes.push(...unread(o, Object.keys(o.spec), SERVER_FIELDS));
}

function virtualServer(
  o: SourceObject,
  ingressClass: string,
  policies: PolicyCollector,
  profiles: ReadonlyMap<string, SourceObject>,
  out: ObjectsMigration,
): void {
  const pools = z.array(poolSchema).catch([]).parse(o.spec.pools);
  const hosts: string[] = [];
  for (const h of [o.spec.host, ...z.array(z.string()).catch([]).parse(o.spec.hostAliases)]) {
    if (typeof h !== 'string') continue;
    const bad = hostProblem(h);
    if (bad)
      out.notes.push({
        from: `${objectName(o)} host`,
        kind: 'by hand',
        why: `${bad}: left out of the Ingress`,
      });
    else hosts.push(h);
  }
  const paths: {
    path: string;
    pathType: 'Prefix';
    backend: { service: { name: string; port: { number: number } | { name: string } } };
  }[] = [];
  for (const pool of pools) {
    policyFor(o, pool, policies, out);
    const from = `${objectName(o)} pool ${pool.service}${pool.path ?? ''}`;
    const path = pool.path ?? '/';
    const bad = backendProblem(pool) ?? pathProblem(path, 'Prefix');
    if (bad) {
      out.notes.push({ from, kind: 'by hand', why: `${bad}: route it in the Ingress by hand` });
      continue;
    }
    if ((pool.serviceNamespace ?? o.metadata.namespace) !== o.metadata.namespace) {
      out.notes.push({
        from,
        kind: 'by hand',
        why: `an Ingress routes to its own namespace: route ${pool.serviceNamespace}/${pool.service} with an HTTPRoute and a ReferenceGrant`,
      });
      continue;
    }
    const port =
      typeof pool.servicePort === 'number'
        ? { number: pool.servicePort }
        : { name: String(pool.servicePort) };
    paths.push({ path, pathType: 'Prefix' as const, backend: { service: { name: pool.service, port } } });
  }
  notesOf(o, out);
  if (paths.length === 0) return;
  const tls = ingressTls(o, hosts, paths[0]?.backend.service.name, profiles, out);
  if (tls === 'left out') return;
  const rules = (hosts.length > 0 ? hosts : [undefined]).map((host) => ({
    ...(host ? { host } : {}),
    http: { paths },
  }));
  out.objects.push({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: nameOf(o.metadata.name),
      namespace: o.metadata.namespace,
      ...(tls && Object.keys(tls.annotations).length > 0 ? { annotations: tls.annotations } : {}),
    },
    spec: { ingressClassName: ingressClass, ...(tls ? { tls: tls.tls } : {}), rules },
  });
}

function transportServer(o: SourceObject, policies: PolicyCollector, out: ObjectsMigration): void {
  const pool = poolSchema.safeParse(o.spec.pool);
  if (pool.success && pool.data.service) {
    policyFor(o, pool.data, policies, out);
    const port = typeof o.spec.virtualServerPort === 'number' ? ` on port ${o.spec.virtualServerPort}` : '';
    out.notes.push({
      from: `${objectName(o)} virtualServerPort`,
      kind: 'by hand',
      why: `serve Service ${pool.data.serviceNamespace ?? o.metadata.namespace}/${pool.data.service} as type LoadBalancer${port} (npl-lb's class), or route it from a Gateway's TCP listener`,
    });
  } else
    out.notes.push({
      from: `${objectName(o)} pool`,
      kind: 'by hand',
      why: 'no pool service: nothing to migrate',
    });
  notesOf(o, out);
}

const OTHER_KINDS: Record<string, string> = {
  TLSProfile:
    "no VirtualServer given names it (tlsProfileName): the certificates go in an Ingress's spec.tls or a Gateway listener's certificateRefs, re-encryption in the Ingress's npl-lb.io/backend-protocol annotations or a BackendTLSPolicy (docs/tls.md)",
  Policy: 'BIG-IP profiles and policies are not written by npl-lb',
  IngressLink: 'npl-lb does not front NGINX Ingress with BIG-IP',
  ExternalDNS: 'npl-lb does not write DNS records',
};

export function migrateCisObjects(objects: readonly SourceObject[], ingressClass: string): ObjectsMigration {
  const out: ObjectsMigration = { objects: [], notes: [] };
  const policies = new PolicyCollector(out);
  const profiles = tlsProfiles(objects);
  // The TLSProfiles a VirtualServer names are read with it (one that is left out reads none).
  const named = new Set(
    objects
      .filter(
        (o) => o.kind === 'VirtualServer' && typeof o.spec.tlsProfileName === 'string' && !badIdentity(o),
      )
      .map((o) => `${o.metadata.namespace}/${String(o.spec.tlsProfileName)}`),
  );
  for (const o of wellNamed(objects, out)) {
    if (o.kind === 'VirtualServer') virtualServer(o, ingressClass, policies, profiles, out);
    else if (o.kind === 'TLSProfile' && named.has(`${o.metadata.namespace}/${o.metadata.name}`)) continue;
    else if (o.kind === 'TransportServer') transportServer(o, policies, out);
    else
      out.notes.push({
        from: objectName(o),
        kind: o.kind === 'TLSProfile' ? 'by hand' : 'no equivalent',
        why: OTHER_KINDS[o.kind] ?? 'not a CIS kind npl-lb migrates (VirtualServer, TransportServer)',
      });
  }
  return out;
}
