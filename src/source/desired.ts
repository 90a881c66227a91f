/**
 * Kubernetes objects -> desired load-balancer state: an L4 virtual service per port of each of our
 * LoadBalancer Services, one shared L7 virtual service per IngressClass of ours, pools per Service
 * port with members in the configured mode. Pure: the controller passes its caches in.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import { VIP_ANNOTATION } from '../kube/annotations.ts';
import type { Ingress, Service } from '../kube/objects.ts';
import { l4Name, l7PoolName, poolName } from '../model/names.ts';
import type { Certificate, L4VirtualService, LbState, Pool, VirtualService } from '../model/types.ts';
import {
  gatewaysFromView,
  gatewayVipRequests,
  type LoadBalancerInfo,
  SERVE_ALL,
} from './gateway/from-view.ts';
import type { GatewayResult } from './gateway/gateways.ts';
import { ingressClassServices } from './ingress-class.ts';
import { ingressClassOf, ourIngressClasses, ourLoadBalancer } from './ours.ts';
import { type CertificateMemo, secretCertificates } from './secret-certificates.ts';
import { membersFor, NodeDirectory, PodIndex, type Rejection } from './members.ts';
import { allocateVips, deviceVips, type VipResult } from './vips.ts';
import { type ClusterView, routeInputs } from './view.ts';

export type { ClusterView };

export interface SourceStatus {
  vip: string | undefined;
  virtualServices: string[];
  problem: string | undefined;
  /** The Event reason of `problem` (VIPConflict, InvalidVIP, NoVIP). */
  reason?: string | undefined;
  /** Virtual services the load balancer cannot serve (see capabilities.ts): not sent. */
  unsupported?: string[] | undefined;
}

/**
 * Something an object's author should hear about: a value refused at the validation boundary, a
 * backend that does not resolve, NodePortLocal entries dropped. Becomes an Event on the object.
 */
export interface Finding {
  kind: 'Service' | 'Ingress' | 'Pod';
  /** namespace/name */
  key: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * Pools from earlier passes with the resourceVersions they were built from: a pool whose Service,
 * Pods (and, in NodePort mode, Nodes) did not change is reused as it is, object and all.
 */
export interface DesiredMemo {
  pools: Map<string, { signature: string; pool: Pool; waiting: string[]; findings: Finding[] }>;
  /** L4 virtual services of earlier passes, reused when nothing in them changed. */
  l4: Map<string, L4VirtualService>;
  /** Certificates read from Secrets, by Secret (namespace/name) and the version they were read from. */
  certs?: CertificateMemo;
  /** The last full pass, reused as a whole while Services, Ingresses and classes stay the same. */
  last?: LastPass;
}

type ServicePort = Service['spec']['ports'][number];

/** Everything of a pass that depends on Services, Ingresses and IngressClasses only, not on Pods. */
interface LastPass {
  inputs: unknown[];
  /** The pools in the order the pass asked for them, with what each is built from. */
  shape: { name: string; svc: Service; svcKey: string; port: ServicePort; health: Pool['health'] }[];
  virtualServices: VirtualService[];
  certs: Certificate[];
  gateways: GatewayResult | undefined;
  services: Map<string, SourceStatus>;
  ingresses: Map<string, SourceStatus>;
  findings: Finding[];
}

export const newDesiredMemo = (): DesiredMemo => ({ pools: new Map(), l4: new Map() });

export interface DesiredResult {
  state: LbState;
  /** Per LoadBalancer Service (namespace/name). */
  services: Map<string, SourceStatus>;
  /** Per Ingress of ours (namespace/name). */
  ingresses: Map<string, SourceStatus>;
  /** Per Service (namespace/name): selected Pods still waiting for their NodePortLocal annotation. */
  waiting: Map<string, string[]>;
  /** Problems to report as Events, each on the object it comes from. */
  findings: Finding[];
  /** The Gateway API objects' statuses and backends; absent when no GatewayClass exists. */
  gateways?: GatewayResult;
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** NodePortLocal entries dropped from a pool: a Warning on each Pod and one on the Service. */
function rejectionFindings(service: string, rejected: Rejection[]): Finding[] {
  if (rejected.length === 0) return [];
  const reason = EventReasons.NodePortLocalRejected;
  const out: Finding[] = rejected.map((r) => ({
    kind: 'Pod',
    key: r.pod,
    type: 'Warning',
    reason,
    message: `nodeportlocal.antrea.io: ${r.message}`,
  }));
  const pods = [...new Set(rejected.map((r) => r.pod))];
  out.push({
    kind: 'Service',
    key: service,
    type: 'Warning',
    reason,
    message: `NodePortLocal entries of ${pods.length} Pod(s) dropped (${pods.slice(0, 5).join(', ')}): ${rejected[0]!.message}`,
  });
  return out;
}

const withCertificates = (s: LbState, certs: Certificate[]): LbState =>
  certs.length > 0 ? { ...s, certificates: certs } : s;

function vipOf(r: VipResult | undefined): { vip?: string; problem?: string; reason?: string } {
  if (!r) return { problem: 'no VIP', reason: EventReasons.NoVIP };
  if ('vip' in r) return { vip: r.vip };
  if ('conflict' in r) return { problem: `VIP conflict: ${r.conflict}`, reason: EventReasons.VIPConflict };
  if ('invalid' in r) return { problem: r.invalid, reason: EventReasons.InvalidVIP };
  return { problem: 'no free VIP in vip.cidrs', reason: EventReasons.NoVIP };
}

/**
 * `changed` (with a memo) names the Services (namespace/name) whose pools may differ since the last
 * pass; the pools of every other Service come from the memo as they are. Without it, every pool is
 * checked against its signature.
 */
/**
 * Drops remembered pools that are no longer built. Every pool built is remembered, so there are
 * none to drop when the counts agree.
 */
function forgetPoolsGone(memo: DesiredMemo | undefined, pools: Map<string, Pool>): void {
  if (!memo || memo.pools.size <= pools.size) return;
  for (const name of memo.pools.keys()) if (!pools.has(name)) memo.pools.delete(name);
}

export function buildDesired(
  view: ClusterView,
  cfg: ControllerConfig,
  memo?: DesiredMemo,
  changed?: ReadonlySet<string>,
  /** The load balancer served (for the Gateway API: what its listeners and routes may use). */
  lb: LoadBalancerInfo = SERVE_ALL,
): DesiredResult {
  const cluster = cfg.clusterName;
  const pools = new Map<string, Pool>();
  const waiting = new Map<string, string[]>();
  const podIndex = view.podIndex ?? new PodIndex(view.pods);
  const nodes = new NodeDirectory(view.nodes, view.drainPhase);
  const findings: Finding[] = [];
  const l4Memo = memo?.l4;

  const nodeVersions =
    cfg.serviceType === 'NodePort'
      ? view.nodes.map((n) => `${n.metadata.resourceVersion}~${nodes.phase(n.metadata.name)}`).join(',')
      : '';
  const shape: LastPass['shape'] = [];
  const poolFor = (
    svc: Service,
    port: ServicePort,
    health: Pool['health'],
    known?: string,
    knownKey?: string,
  ): string => {
    const name =
      known ?? poolName(cluster, svc.metadata.namespace, svc.metadata.name, port.name || port.port);
    if (pools.has(name)) return name;
    const svcKey = knownKey ?? key(svc.metadata);
    shape.push({ name, svc, svcKey, port, health });
    const kept = changed && !changed.has(svcKey) ? memo?.pools.get(name) : undefined;
    if (kept) {
      if (kept.findings.length > 0) findings.push(...kept.findings);
      if (kept.waiting.length > 0) {
        waiting.set(svcKey, [...(waiting.get(svcKey) ?? []), ...kept.waiting]);
      }
      pools.set(name, kept.pool);
      return name;
    }
    // In NodePortLocal mode a member's nodeIP is checked against its Pod's Node: the addresses of
    // those Nodes are part of what the pool is built from.
    const signature = [
      cfg.serviceType,
      health,
      svc.metadata.resourceVersion,
      nodeVersions,
      ...podIndex
        .select(svc)
        .map(
          (p) =>
            `${p.metadata.name}@${p.metadata.resourceVersion}${cfg.serviceType !== 'NodePort' ? `@${nodes.addressKey(p.spec.nodeName)}` : ''}`,
        ),
    ].join('|');
    let entry = memo?.pools.get(name);
    if (!entry || entry.signature !== signature || !svc.metadata.resourceVersion) {
      const r = membersFor(cfg.serviceType, svc, port, podIndex, view.nodes, nodes);
      entry = {
        signature,
        waiting: r.waiting,
        findings: rejectionFindings(key(svc.metadata), r.rejected),
        pool: {
          name,
          protocol: port.protocol === 'UDP' ? 'UDP' : 'TCP',
          health: port.protocol === 'UDP' ? 'udp' : health,
          members: r.members,
          service: key(svc.metadata),
          servicePort: String(port.name || port.port),
        },
      };
      memo?.pools.set(name, entry);
    }
    findings.push(...entry.findings);
    if (entry.waiting.length > 0) {
      waiting.set(svcKey, [...(waiting.get(svcKey) ?? []), ...entry.waiting]);
    }
    pools.set(name, entry.pool);
    return name;
  };

  // Only Pods changed since the last pass: its virtual services and statuses stand, and only the
  // pools of the changed Services are looked at again.
  const last = memo?.last;
  const inputs: LastPass['inputs'] = [
    view.services,
    view.nodes,
    view.secrets,
    view.namespaces,
    ...routeInputs(view),
  ];
  if (changed && last && inputs.every((x, i) => x === last.inputs[i])) {
    // The pools of unchanged Services as they were, in the same order; the others built again.
    for (const e of last.shape) {
      const kept = changed.has(e.svcKey) ? undefined : memo.pools.get(e.name);
      if (!kept) {
        poolFor(e.svc, e.port, e.health, e.name, e.svcKey);
        continue;
      }
      if (kept.findings.length > 0) findings.push(...kept.findings);
      if (kept.waiting.length > 0) waiting.set(e.svcKey, [...(waiting.get(e.svcKey) ?? []), ...kept.waiting]);
      pools.set(e.name, kept.pool);
    }
    forgetPoolsGone(memo, pools);
    return {
      state: withCertificates(
        { pools: [...pools.values()], virtualServices: last.virtualServices },
        last.certs,
      ),
      services: last.services,
      ingresses: last.ingresses,
      waiting,
      findings: [...last.findings, ...findings],
      ...(last.gateways ? { gateways: last.gateways } : {}),
    };
  }

  const lbServices = view.services
    .filter((s) => ourLoadBalancer(s, cfg))
    .map((s) => [key(s.metadata), s] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, s]) => s);
  const svcByKey = new Map(view.services.map((s) => [key(s.metadata), s]));
  const ours = ourIngressClasses(view.ingressClasses, cfg);
  const byClass = new Map<string, Ingress[]>();
  for (const ing of view.ingresses) {
    const cls = ingressClassOf(ing, ours, cfg);
    if (cls) byClass.set(cls, [...(byClass.get(cls) ?? []), ing]);
  }
  const vipRequests = [
    ...lbServices.map((s) => ({
      key: `service/${key(s.metadata)}`,
      requested: s.spec.loadBalancerIP || s.metadata.annotations[VIP_ANNOTATION],
      published: s.status.loadBalancer.ingress[0]?.ip,
    })),
    ...[...byClass.entries()].map(([cls, ings]) => ({
      key: `ingressclass/${cls}`,
      // The class's shared VIP is the class's (its owner, the platform team), never one tenant's.
      requested: view.ingressClasses.find((c) => c.metadata.name === cls)?.metadata.annotations[
        VIP_ANNOTATION
      ],
      published: ings.map((i) => i.status.loadBalancer.ingress[0]?.ip).find(Boolean),
    })),
    ...gatewayVipRequests(view, cfg),
  ];
  const vips = lb.caps.allocatesVips ? deviceVips(vipRequests) : allocateVips(vipRequests, cfg.vip.cidrs);

  const virtualServices: VirtualService[] = [];
  const services = new Map<string, SourceStatus>();
  /** Findings of Services and Ingresses (pool findings come with their pools). */
  const sourceFindings: Finding[] = [];
  for (const [cls, ings] of byClass) {
    for (const ing of ings) {
      const asked = ing.metadata.annotations[VIP_ANNOTATION];
      if (asked === undefined) continue;
      sourceFindings.push({
        kind: 'Ingress',
        key: key(ing.metadata),
        type: 'Warning',
        reason: EventReasons.VIPAnnotationIgnored,
        message: `${VIP_ANNOTATION} is ignored on an Ingress: IngressClass ${cls} is shared, and its VIP is set on the IngressClass (annotation ${VIP_ANNOTATION}) by its owner`,
      });
    }
  }
  for (const svc of lbServices) {
    const { vip, problem, reason } = vipOf(vips.get(`service/${key(svc.metadata)}`));
    const names: string[] = [];
    if (vip) {
      for (const port of svc.spec.ports) {
        if (port.protocol === 'SCTP') continue;
        const name = l4Name(cluster, svc.metadata.namespace, svc.metadata.name, port.protocol, port.port);
        const vs: L4VirtualService = {
          kind: 'l4',
          name,
          vip,
          port: port.port,
          protocol: port.protocol,
          pool: poolFor(svc, port, 'tcp'),
          source: key(svc.metadata),
        };
        // The same virtual service as last pass is the same object, so the plan compares it by reference.
        const before = l4Memo?.get(name);
        const same =
          before !== undefined &&
          before.vip === vs.vip &&
          before.port === vs.port &&
          before.protocol === vs.protocol &&
          before.pool === vs.pool &&
          before.source === vs.source;
        if (!same) l4Memo?.set(name, vs);
        virtualServices.push(same ? before : vs);
        names.push(name);
      }
    }
    services.set(key(svc.metadata), { vip, virtualServices: names, problem, reason });
  }

  const ingresses = new Map<string, SourceStatus>();
  const certificates = new Map<string, Certificate>();
  /** The pool of a Service port for HTTP routes (its own name: tcp and http are different modes). */
  const httpPoolFor = (svc: Service, sp: ServicePort): string =>
    poolFor(svc, sp, 'http', l7PoolName(cluster, svc.metadata, sp.name || sp.port));
  const certificateOf = secretCertificates(
    view.secrets ?? [],
    cluster,
    view.now ?? Date.now(),
    memo ? (memo.certs ??= new Map()) : undefined,
  );
  for (const [cls, ings] of [...byClass.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const r = ingressClassServices(cls, ings, vipOf(vips.get(`ingressclass/${cls}`)), {
      cluster,
      httpPort: cfg.ingressHttpPort,
      httpsPort: cfg.ingressHttpsPort,
      services: svcByKey,
      poolFor: httpPoolFor,
      certificateOf,
    });
    virtualServices.push(...r.virtualServices);
    for (const c of r.certificates) certificates.set(c.name, c);
    for (const [k, st] of r.ingresses) ingresses.set(k, st);
    sourceFindings.push(...r.findings);
  }
  const gateways = gatewaysFromView(view, cfg, lb, {
    services: svcByKey,
    poolFor: httpPoolFor,
    l4PoolFor: (svc, sp) => poolFor(svc, sp, 'tcp'),
    certificateOf,
    vipOf: (k) => vipOf(vips.get(`gateway/${k}`)),
  });
  virtualServices.push(...(gateways?.virtualServices ?? []));
  for (const c of gateways?.certificates ?? []) certificates.set(c.name, c);
  const certs = [...certificates.values()];
  forgetPoolsGone(memo, pools);
  if (l4Memo) {
    const live = new Set(virtualServices.map((v) => v.name));
    for (const name of l4Memo.keys()) if (!live.has(name)) l4Memo.delete(name);
  }
  if (memo) {
    memo.last = {
      inputs,
      shape,
      virtualServices,
      certs,
      services,
      ingresses,
      gateways,
      findings: sourceFindings,
    };
  }
  return {
    state: withCertificates({ pools: [...pools.values()], virtualServices }, certs),
    services,
    ingresses,
    waiting,
    findings: [...sourceFindings, ...findings],
    ...(gateways ? { gateways } : {}),
  };
}
