/**
 * AKO's custom resources as npl-lb objects: each HTTPRule path becomes a BackendPolicy on the
 * Services the given Ingresses or Routes send that host and path to (its algorithm, persistence
 * and health monitor, as far as npl-lb has them); HostRule and AviInfraSetting settings are
 * virtual-service and Avi-infrastructure settings npl-lb takes elsewhere or not at all, each noted
 * with where or why. Pure.
 */
import { z } from 'zod';
import { Backends } from '../../../src/migrate/backends.ts';
import {
  BACKEND_CA_ANNOTATION,
  BACKEND_PROTOCOL_ANNOTATION,
  BACKEND_SERVER_NAME_ANNOTATION,
  nameOf,
  OBJECT_NAME,
  type ObjectsMigration,
  objectName,
  PolicyCollector,
  type PolicySettings,
  SERVICE_NAME,
  type SourceObject,
  type TargetService,
  wellNamed,
} from '../../../src/migrate/objects.ts';
import { reencryptObjects } from '../../../src/migrate/backend-tls.ts';
import type { MigrationNote } from '../../../src/migrate/result.ts';

const ALGORITHMS: Record<string, PolicySettings['algorithm']> = {
  LB_ALGORITHM_ROUND_ROBIN: 'RoundRobin',
  LB_ALGORITHM_LEAST_CONNECTIONS: 'LeastConnections',
};
/** Avi's system persistence profiles npl-lb has an equivalent of. */
const PERSISTENCE: Record<string, 'Cookie' | 'SourceIP'> = {
  'System-Persistence-Client-IP': 'SourceIP',
  'System-Persistence-Http-Cookie': 'Cookie',
};

const httpRulePath = z.looseObject({
  target: z.string().catch('/'),
  loadBalancerPolicy: z
    .looseObject({ algorithm: z.string().optional(), hash: z.string().optional() })
    .optional()
    .catch(undefined),
  applicationPersistence: z.string().optional().catch(undefined),
  healthMonitors: z.array(z.string()).catch([]),
  tls: z
    .looseObject({
      type: z.string().optional(),
      destinationCA: z.string().optional(),
      sslProfile: z.string().optional(),
    })
    .optional()
    .catch(undefined),
  enableHTTP2: z.unknown().optional(),
});
const httpRuleSpec = z.looseObject({ fqdn: z.string().catch(''), paths: z.array(httpRulePath).catch([]) });

type Note = Omit<MigrationNote, 'from'>;

/** What one HTTPRule path asks, as BackendPolicy settings, and notes for what does not carry. */
function pathSettings(p: z.infer<typeof httpRulePath>): { settings: PolicySettings; notes: Note[] } {
  const settings: PolicySettings = {};
  const notes: Note[] = [];
  const lb = p.loadBalancerPolicy;
  if (lb?.algorithm) {
    const hash = lb.hash ?? 'LB_ALGORITHM_CONSISTENT_HASH_SOURCE_IP_ADDRESS';
    if (
      lb.algorithm === 'LB_ALGORITHM_CONSISTENT_HASH' &&
      hash === 'LB_ALGORITHM_CONSISTENT_HASH_SOURCE_IP_ADDRESS'
    )
      settings.algorithm = 'SourceHash';
    else if (ALGORITHMS[lb.algorithm]) settings.algorithm = ALGORITHMS[lb.algorithm];
    else
      notes.push({
        kind: 'no equivalent',
        why: `loadBalancerPolicy ${lb.algorithm}${lb.algorithm === 'LB_ALGORITHM_CONSISTENT_HASH' ? ` (${hash})` : ''}: npl-lb balances by RoundRobin, LeastConnections or SourceHash (the client address)`,
      });
  }
  if (p.applicationPersistence) {
    const type = PERSISTENCE[p.applicationPersistence];
    if (type) settings.sessionPersistence = { type };
    else
      notes.push({
        kind: 'by hand',
        why: `applicationPersistence ${p.applicationPersistence} is a profile on the Avi Controller: npl-lb keeps clients by Cookie or SourceIP (spec.sessionPersistence)`,
      });
  }
  const [monitor, ...more] = p.healthMonitors;
  if (monitor === 'System-TCP') settings.healthCheck = { type: 'TCP' };
  else if (monitor)
    notes.push({
      kind: 'by hand',
      why: `healthMonitors ${monitor} is a monitor on the Avi Controller: write its check in spec.healthCheck (an HTTP path or a TCP connect, docs/health-checks.md)`,
    });
  if (more.length > 0)
    notes.push({
      kind: 'no equivalent',
      why: `healthMonitors ${more.join(', ')}: a BackendPolicy has one check`,
    });
  if (p.enableHTTP2 === true)
    notes.push({ kind: 'no equivalent', why: 'enableHTTP2: npl-lb speaks HTTP/1.1 to the members' });
  return { settings, notes };
}

function httpRule(
  o: SourceObject,
  backends: Backends,
  policies: PolicyCollector,
  out: ObjectsMigration,
): void {
  const spec = httpRuleSpec.parse(o.spec);
  for (const p of spec.paths) {
    const from = `${objectName(o)} ${spec.fqdn}${p.target}`;
    const { settings, notes } = pathSettings(p);
    out.notes.push(...notes.map((n) => ({ ...n, from })));
    const targets = backends.serving(o.metadata.namespace, spec.fqdn, p.target);
    reencrypt(p.tls, `${from} tls`, o.metadata.name, targets, out);
    if (p.tls?.type === 'reencrypt' && targets.length > 0)
      ingressReencrypt(
        `${from} tls`,
        backends.ingressesServing(o.metadata.namespace, spec.fqdn, p.target),
        targets[0]!,
        nameOf(`${o.metadata.name}-${targets[0]!.service}-tls`, 'ca'),
        p.tls.destinationCA !== undefined,
        out,
      );
    if (Object.keys(settings).length === 0) continue;
    if (targets.length === 0) {
      out.notes.push({
        from,
        kind: 'by hand',
        why: `no Ingress or Route given with -f sends ${spec.fqdn}${p.target} to a Service in ${o.metadata.namespace}: give them with -f, or write the BackendPolicy's targetRefs`,
      });
      continue;
    }
    for (const t of targets)
      policies.add(from, `${o.metadata.name}-${t.service}${t.port ? `-${t.port}` : ''}`, t, settings);
  }
}

/** A path's `tls` (re-encryption to the Services it serves): a BackendTLSPolicy per Service. */
function reencrypt(
  tls: z.infer<typeof httpRulePath>['tls'],
  from: string,
  rule: string,
  targets: TargetService[],
  out: ObjectsMigration,
): void {
  if (tls === undefined) return;
  if (tls.type !== 'reencrypt') {
    out.notes.push({
      from,
      kind: 'no equivalent',
      why: `tls.type ${JSON.stringify(tls.type ?? '')}: only reencrypt is carried`,
    });
    return;
  }
  if (tls.sslProfile)
    out.notes.push({
      from: `${from}.sslProfile`,
      kind: 'no equivalent',
      why: 'an SSL profile on the Avi Controller: npl-lb speaks TLS with the load balancer’s defaults',
    });
  if (targets.length === 0) {
    out.notes.push({
      from,
      kind: 'by hand',
      why: 'no Ingress or Route given with -f sends this path to a Service: give them with -f, or write the BackendTLSPolicy (docs/tls.md)',
    });
    return;
  }
  for (const t of targets) reencryptObjects(from, `${rule}-${t.service}-tls`, t, tls.destinationCA, out);
}

/**
 * An Ingress re-encrypts by its own annotations (docs/tls.md), not by a BackendTLSPolicy, which
 * serves Gateway routes: each Ingress the path is in is named, with the annotations to add.
 */
function ingressReencrypt(
  from: string,
  ingresses: string[],
  first: TargetService,
  configMap: string,
  hasCa: boolean,
  out: ObjectsMigration,
): void {
  // A target that is not a Service's name is noted by hand already (backend-tls.ts).
  if (!SERVICE_NAME.test(first.service) || !SERVICE_NAME.test(first.namespace)) return;
  for (const name of ingresses.filter((n) => OBJECT_NAME.test(n)))
    out.notes.push({
      from,
      kind: 'by hand',
      why: `Ingress ${first.namespace}/${name} re-encrypts by its annotations, not by the BackendTLSPolicy (which Gateway routes take): add ${BACKEND_PROTOCOL_ANNOTATION}: HTTPS, ${BACKEND_SERVER_NAME_ANNOTATION}: ${first.service}.${first.namespace}.svc.cluster.local (a name the Pods' certificates carry) and ${BACKEND_CA_ANNOTATION}: ${hasCa ? configMap : 'System (or a ConfigMap of the CA that signs them)'}; every Service it routes to is then re-encrypted`,
    });
}

/** HostRule fields: where npl-lb takes each, or why it has none. */
const HOST_RULE: Record<string, Note> = {
  tls: {
    kind: 'by hand',
    why: "the certificate goes in the Ingress's spec.tls (a Secret of type kubernetes.io/tls), or a Gateway listener's certificateRefs",
  },
  aliases: {
    kind: 'by hand',
    why: 'add each alias as a host of the Ingress (or a hostname of the HTTPRoute)',
  },
  enableVirtualHost: { kind: 'by hand', why: 'to take a host out of service, remove it from the Ingress' },
  loadBalancerIP: {
    kind: 'by hand',
    why: 'the VIP is the npl-lb.io/vip annotation of the IngressClass or a Gateway address',
  },
  tcpSettings: {
    kind: 'by hand',
    why: "the Ingress ports are the chart's ingressClass.httpPort and httpsPort; a Gateway's listeners take any port",
  },
};

function hostRule(o: SourceObject, out: ObjectsMigration): void {
  const vh = z.record(z.string(), z.unknown()).catch({}).parse(o.spec.virtualhost);
  for (const field of Object.keys(vh)) {
    if (field === 'fqdn' || field === 'fqdnType') continue;
    out.notes.push({
      from: `${objectName(o)} virtualhost.${field}`,
      ...(HOST_RULE[field] ?? {
        kind: 'no equivalent',
        why: 'an Avi virtual-service profile or policy (WAF, application, analytics, HTTP policy, DataScript, ICAP, error page, GSLB): npl-lb does not write it',
      }),
    });
  }
}

const INFRA: Record<string, Note> = {
  seGroup: { kind: 'by hand', why: 'one Service Engine Group per release: adapter.avi.serviceEngineGroup' },
  network: {
    kind: 'by hand',
    why: 'one VIP network per release: adapter.avi.vipNetwork (or vip.cidrs); node networks, RHI, BGP and public IPs are not set by npl-lb',
  },
};

function aviInfraSetting(o: SourceObject, out: ObjectsMigration): void {
  for (const field of Object.keys(o.spec))
    out.notes.push({
      from: `${objectName(o)} ${field}`,
      ...(INFRA[field] ?? {
        kind: 'no equivalent',
        why: 'per-class Avi infrastructure (shard size, RHI, BGP, public IPs) is not set by npl-lb',
      }),
    });
}

/** Kinds read only to find backends, not migrated themselves. */
const READ_FOR_BACKENDS = new Set(['Ingress', 'Route', 'Service']);

export function migrateAkoObjects(objects: readonly SourceObject[]): ObjectsMigration {
  const out: ObjectsMigration = { objects: [], notes: [] };
  const backends = new Backends(objects);
  const policies = new PolicyCollector(out);
  for (const o of wellNamed(objects, out)) {
    if (o.kind === 'HTTPRule') httpRule(o, backends, policies, out);
    else if (o.kind === 'HostRule') hostRule(o, out);
    else if (o.kind === 'AviInfraSetting') aviInfraSetting(o, out);
    else if (!READ_FOR_BACKENDS.has(o.kind))
      out.notes.push({
        from: objectName(o),
        kind: 'no equivalent',
        why: 'not an AKO kind npl-lb migrates (HTTPRule, HostRule, AviInfraSetting; Ingresses, Routes and Services are read to find backends)',
      });
  }
  return out;
}
