/**
 * The desired state, costing what changed: the same result as the pure assembler
 * (src/source/desired.ts `buildDesired`, its test oracle), made from the last pass's where it can.
 * - Only Pods changed (the Service, Node, Secret, Namespace, Ingress and Gateway API collections
 *   are the same objects as last pass): the frontends stand as they were, and only the pools of
 *   the changed Services are built again.
 * - A pool is rebuilt when its Service, its Pods' versions or (NodePortLocal, NodePort) its Nodes
 *   changed; otherwise it is reused, object and all, so the plan compares it by reference.
 * - An L4 virtual service equal to last pass's is last pass's object; a Secret is parsed once per
 *   version.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import type { L4VirtualService } from '../model/types.ts';
import { assemble } from '../source/desired.ts';
import { desiredFrontends } from '../source/frontends.ts';
import type { LoadBalancerInfo } from '../source/gateway/from-view.ts';
import { buildPool, type PoolContext, poolContext } from '../source/pools.ts';
import { type CertificateMemo, secretCertificates } from '../source/secret-certificates.ts';
import type { DesiredResult, Frontends, PoolBuild, PoolRequest } from '../source/types.ts';
import { type ClusterView, routeInputs } from '../source/view.ts';

/** What a pool is built from, as one string: equal strings, equal pools. */
function signature(req: PoolRequest, ctx: PoolContext, nodeVersions: string): string {
  return [
    ctx.serviceType,
    req.health,
    req.svc.metadata.resourceVersion,
    nodeVersions,
    ...ctx.pods
      .select(req.svc)
      .map(
        (p) =>
          `${p.metadata.name}@${p.metadata.resourceVersion}${ctx.serviceType !== 'NodePort' ? `@${ctx.nodes.addressKey(p.spec.nodeName)}` : ''}`,
      ),
  ].join('|');
}

const sameL4 = (a: L4VirtualService, b: L4VirtualService): boolean =>
  a.vip === b.vip &&
  a.port === b.port &&
  a.protocol === b.protocol &&
  a.pool === b.pool &&
  a.source === b.source;

export class DesiredCache {
  private readonly pools = new Map<string, { signature: string; build: PoolBuild }>();
  private readonly l4 = new Map<string, L4VirtualService>();
  private readonly certs: CertificateMemo = new Map();
  private last: { inputs: unknown[]; front: Frontends } | undefined;

  /**
   * `changed` names the Services (namespace/name) whose pools may differ since the last call;
   * undefined: anything may have changed.
   */
  build(
    view: ClusterView,
    cfg: ControllerConfig,
    lb: LoadBalancerInfo,
    changed?: ReadonlySet<string>,
  ): DesiredResult {
    const inputs = [view.services, view.nodes, view.secrets, view.namespaces, ...routeInputs(view)];
    const last = this.last;
    const front =
      changed && last && inputs.every((x, i) => x === last.inputs[i])
        ? last.front
        : this.frontends(view, cfg, lb);
    this.last = { inputs, front };
    const ctx = poolContext(view, cfg, lb);
    const nodeVersions =
      cfg.serviceType === 'NodePort'
        ? view.nodes.map((n) => `${n.metadata.resourceVersion}~${ctx.nodes.phase(n.metadata.name)}`).join(',')
        : '';
    const builds = front.pools.map((req) => {
      const kept = changed && !changed.has(req.svcKey) ? this.pools.get(req.name) : undefined;
      if (kept) return kept.build;
      const sig = signature(req, ctx, nodeVersions);
      let entry = this.pools.get(req.name);
      if (!entry || entry.signature !== sig || !req.svc.metadata.resourceVersion) {
        entry = { signature: sig, build: buildPool(req, ctx) };
        this.pools.set(req.name, entry);
      }
      return entry.build;
    });
    // Every pool built is remembered: there are none to forget while the counts agree.
    if (this.pools.size > front.pools.length) {
      const live = new Set(front.pools.map((r) => r.name));
      for (const name of this.pools.keys()) if (!live.has(name)) this.pools.delete(name);
    }
    return assemble(front, builds);
  }

  private frontends(view: ClusterView, cfg: ControllerConfig, lb: LoadBalancerInfo): Frontends {
    const certificateOf = secretCertificates(
      view.secrets ?? [],
      cfg.clusterName,
      view.now ?? Date.now(),
      this.certs,
    );
    const front = desiredFrontends(view, cfg, lb, certificateOf);
    const live = new Set<string>();
    const virtualServices = front.virtualServices.map((vs) => {
      if (vs.kind !== 'l4') return vs;
      live.add(vs.name);
      const before = this.l4.get(vs.name);
      if (before && sameL4(before, vs)) return before;
      this.l4.set(vs.name, vs);
      return vs;
    });
    for (const name of this.l4.keys()) if (!live.has(name)) this.l4.delete(name);
    return { ...front, virtualServices };
  }
}
