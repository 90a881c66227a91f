/**
 * Kubernetes objects -> desired load-balancer state, the whole of it, from scratch: the virtual
 * services and what they serve (frontends.ts: LoadBalancer Services, Ingress classes, Gateways),
 * then the pools they asked for, each with its members (pools.ts). Pure: the controller passes
 * its caches in; its desired-state cache (src/controller/desired-cache.ts) makes the same result
 * from what changed, and this is its oracle.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Certificate, Pool } from '../model/types.ts';
import { type LoadBalancerInfo, SERVE_ALL } from './gateway/from-view.ts';
import { desiredFrontends } from './frontends.ts';
import { buildPool, poolContext } from './pools.ts';
import type { DesiredResult, Frontends, PoolBuild } from './types.ts';
import type { ClusterView } from './view.ts';

export type { ClusterView } from './view.ts';
export type { DesiredResult, Finding, SourceStatus } from './types.ts';

export function buildDesired(
  view: ClusterView,
  cfg: ControllerConfig,
  lb: LoadBalancerInfo = SERVE_ALL,
): DesiredResult {
  const front = desiredFrontends(view, cfg, lb);
  const ctx = poolContext(view, cfg, lb);
  return assemble(
    front,
    front.pools.map((r) => buildPool(r, ctx)),
  );
}

/** The frontends and their pools (built in the order asked) as one result. */
export function assemble(
  front: Frontends,
  pools: readonly PoolBuild[],
  certificates: Certificate[] = front.certificates,
): DesiredResult {
  const waiting = new Map<string, string[]>();
  front.pools.forEach((r, i) => {
    const w = pools[i]!.waiting;
    if (w.length > 0) waiting.set(r.svcKey, [...(waiting.get(r.svcKey) ?? []), ...w]);
  });
  const state = {
    pools: pools.map((b): Pool => b.pool),
    virtualServices: front.virtualServices,
    ...(certificates.length > 0 ? { certificates } : {}),
  };
  return {
    state,
    services: front.services,
    ingresses: front.ingresses,
    waiting,
    findings: [...front.findings, ...pools.flatMap((b) => b.findings)],
    ...(front.gateways ? { gateways: front.gateways } : {}),
    ...(front.policies.size > 0 ? { policies: front.policies } : {}),
  };
}
