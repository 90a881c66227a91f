/**
 * Pools and members: a pool request (a Service port, checked one way, under one name) and the
 * Pods it selects -> the pool with its members in the configured mode, the Pods still waiting for
 * a NodePortLocal mapping, and what was dropped at the validation boundary. Pure.
 */
import { KEYED_HASHES, type Pool } from '../model/types.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { Node, Pod } from '../kube/objects.ts';
import { SliceIndex, withSlices } from './endpoint-slices.ts';
import { membersFor, NodeDirectory, PodIndex, type PodSelector, type Rejection } from './members.ts';
import type { LoadBalancerInfo } from './gateway/from-view.ts';
import { type CheckFromProbe, checkFromProbes } from './health-check.ts';
import type { Finding, PoolBuild, PoolRequest } from './types.ts';
import type { ClusterView } from './view.ts';

/** What pools are built against in one pass. */
export interface PoolContext {
  serviceType: ControllerConfig['serviceType'];
  /** The load balancer served: whether it runs HTTP checks, and its name for messages. */
  lb: LoadBalancerInfo;
  pods: PodSelector;
  nodeList: Node[];
  nodes: NodeDirectory;
}

export const poolContext = (view: ClusterView, cfg: ControllerConfig, lb: LoadBalancerInfo): PoolContext => ({
  serviceType: cfg.serviceType,
  lb,
  pods: withSlices(
    view.podIndex ?? new PodIndex(view.pods),
    view.sliceIndex ?? new SliceIndex(view.endpointSlices),
    view.podByKey ?? podLookup(view.pods),
  ),
  nodeList: view.nodes,
  nodes: new NodeDirectory(view.nodes, view.drainPhase),
});

/** Pods by namespace/name, indexed on first use (a pass over plain arrays). */
function podLookup(pods: readonly Pod[]): (key: string) => Pod | undefined {
  let m: Map<string, Pod> | undefined;
  return (k) => (m ??= new Map(pods.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]))).get(k);
}

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

/**
 * The members' check: a BackendPolicy's when it sets one (its owner said so), else the probes' where
 * each member is a Pod's own port (NodePortLocal, ClusterIP: a NodePort member is a node, which
 * kube-proxy balances over every Pod), as far as the load balancer runs it; `notFollowed` says why
 * not. A UDP port has no HTTP to check (`udpHttp`: a policy asked one; the device's UDP check stays).
 */
function memberCheck(
  req: PoolRequest,
  ctx: PoolContext,
  selected: Pod[],
): CheckFromProbe & { udpHttp: boolean } {
  const { port } = req;
  const udpHttp = port.protocol === 'UDP' && req.policy?.check !== undefined && req.policy.check !== 'tcp';
  const override = udpHttp ? undefined : req.policy?.check;
  const probed: CheckFromProbe =
    override !== undefined
      ? override === 'tcp'
        ? {}
        : { check: override }
      : ctx.serviceType === 'NodePort'
        ? {}
        : checkFromProbes(port, selected);
  const c = probed.check;
  const why = !c
    ? undefined
    : !ctx.lb.caps.httpChecks
      ? `the ${ctx.lb.name} load balancer does not run HTTP checks from readiness probes yet`
      : c.tls && req.health === 'http'
        ? // The Pods serve TLS on the port: HTTP routes to them would need TLS to the backends.
          'its readiness probe is HTTPS: its Pods serve TLS on that port, and HTTP routes reach Pods in plain HTTP (TLS to the backends is not supported yet)'
        : c.tls && !ctx.lb.caps.httpsChecks
          ? `the ${ctx.lb.name} load balancer does not run HTTPS checks from readiness probes yet`
          : c.headers && !ctx.lb.caps.checkHeaders
            ? `its readiness probe sends headers (${c.headers.map((h) => h.name).join(', ')}), and the ${ctx.lb.name} load balancer's checks send none yet`
            : undefined;
  return { ...(why ? { notFollowed: why } : probed), udpHttp };
}

/** What a pool cannot take of its Service's BackendPolicy, said on the Service (never dropped silently). */
function policyFindings(
  req: PoolRequest,
  udpHttp: boolean,
  cookieOnL4: boolean,
  retriesOnL4: boolean,
  keyedOnL4 = false,
): Finding[] {
  const at = `port ${String(req.port.name || req.port.port)}: BackendPolicy ${req.policy?.policy ?? ''}`;
  const warn = (message: string): Finding => ({
    kind: 'Service',
    key: req.svcKey,
    type: 'Warning',
    reason: EventReasons.PolicyNotApplied,
    message,
  });
  return [
    ...(udpHttp ? [warn(`${at} asks an HTTP check of a UDP port; its members keep the UDP check`)] : []),
    ...(cookieOnL4
      ? [
          warn(
            `${at} asks Cookie persistence, which HTTP routes carry; its LoadBalancer virtual service passes connections through and keeps no session`,
          ),
        ]
      : []),
    ...(keyedOnL4
      ? [
          warn(
            `${at} asks ${req.policy?.algorithm ?? ''}, a hash of what HTTP requests carry; its LoadBalancer virtual service passes connections through and balances them by round robin`,
          ),
        ]
      : []),
    ...(retriesOnL4
      ? [
          warn(
            `${at} asks retries, which this load balancer sets on HTTP pools only; its LoadBalancer virtual service keeps the device's default`,
          ),
        ]
      : []),
  ];
}

export function buildPool(req: PoolRequest, ctx: PoolContext): PoolBuild {
  const { svc, port, policy } = req;
  // The Service's Pods, selected once for the members and for their probes.
  const selected = ctx.serviceType === 'NodePort' ? [] : ctx.pods.select(svc);
  const family = req.family ?? 'IPv4';
  const r = membersFor(
    ctx.serviceType,
    svc,
    port,
    { select: () => selected },
    ctx.nodeList,
    ctx.nodes,
    family,
  );
  const probed = memberCheck(req, ctx, selected);
  // Cookie persistence is an HTTP cookie: an L4 pool (its bytes pass through) cannot carry it.
  const cookieOnL4 = policy?.persistence === 'Cookie' && req.health !== 'http';
  // A header's or cookie's hash reads HTTP: an L4 pool (its bytes pass through) balances by
  // round robin instead, said.
  const keyedOnL4 = !!policy?.algorithm && KEYED_HASHES.includes(policy.algorithm) && req.health !== 'http';
  // Retries where the load balancer sets them on HTTP pools only (a server reselect).
  const retriesOnL4 =
    policy?.retries !== undefined && req.health !== 'http' && ctx.lb.caps.retries === 'http';
  const findings = rejectionFindings(req.svcKey, r.rejected);
  findings.push(...policyFindings(req, probed.udpHttp, cookieOnL4, retriesOnL4, keyedOnL4));
  if (probed.notFollowed)
    findings.push({
      kind: 'Service',
      key: req.svcKey,
      type: 'Warning',
      reason: EventReasons.ProbeNotFollowed,
      message: `port ${String(port.name || port.port)}: ${probed.notFollowed}; its members get a TCP check`,
    });
  return {
    waiting: r.waiting,
    findings,
    pool: {
      name: req.name,
      protocol: port.protocol === 'UDP' ? 'UDP' : 'TCP',
      health: port.protocol === 'UDP' ? 'udp' : req.health,
      ...(probed.check ? { check: probed.check } : {}),
      // Round robin is what a pool without an algorithm gets: not written, so it reads back equal.
      ...(policy?.algorithm && policy.algorithm !== 'RoundRobin' && !keyedOnL4
        ? { algorithm: policy.algorithm }
        : {}),
      ...(policy?.hashKey && !keyedOnL4 ? { hashKey: policy.hashKey } : {}),
      // A rule's session cookie over the Service's persistence (the rule's pool is its own).
      ...(req.session
        ? { persistence: 'Cookie' as const, sessionCookie: req.session }
        : policy?.persistence && !cookieOnL4
          ? { persistence: policy.persistence }
          : {}),
      ...(policy?.maxConnections ? { maxConnections: policy.maxConnections } : {}),
      ...(policy?.slowStartSeconds ? { slowStartSeconds: policy.slowStartSeconds } : {}),
      ...(policy?.connectTimeoutSeconds ? { connectTimeoutSeconds: policy.connectTimeoutSeconds } : {}),
      ...(policy?.serverTimeoutSeconds ? { serverTimeoutSeconds: policy.serverTimeoutSeconds } : {}),
      ...retriesOf(policy, req.retry, retriesOnL4),
      ...(req.backendProtocol ? { backendProtocol: req.backendProtocol } : {}),
      ...(req.backendTls ? { backendTls: req.backendTls } : {}),
      members: r.members,
      service: req.svcKey,
      servicePort: String(port.name || port.port),
    },
  };
}

/**
 * A pool's retries: a route rule's (its statuses, and its attempts where it says them) over the
 * Service's BackendPolicy's count, which an L4 pool on a load balancer setting them on HTTP pools
 * alone does not take.
 */
function retriesOf(
  policy: PoolRequest['policy'],
  retry: PoolRequest['retry'],
  retriesOnL4: boolean,
): Pick<Pool, 'retries' | 'retryStatuses'> {
  const retries = retry?.attempts ?? (retriesOnL4 ? undefined : policy?.retries);
  return {
    ...(retries !== undefined ? { retries } : {}),
    ...(retry ? { retryStatuses: retry.statuses } : {}),
  };
}
