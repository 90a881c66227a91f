/**
 * The desired state, costing what changed: the same result as the pure assembler
 * (src/source/desired.ts `buildDesired`, its test oracle), made from the last pass's where it can.
 * - Only Pods changed (the Service, Node, Secret, Namespace, Ingress and Gateway API collections
 *   are the same objects as last pass): the frontends stand as they were, and only the pools of
 *   the changed Services are looked at, found through an index by Service; the result is last
 *   pass's with those pools replaced (the same object when none differs), and `changedPools`
 *   names them, so the plan diffs only those.
 * - A pool is rebuilt when its Service, its Pods' versions or (NodePortLocal, NodePort) its Nodes
 *   changed; otherwise it is reused, object and all, so the plan compares it by reference.
 * - An L4 virtual service equal to last pass's is last pass's object; a Secret is parsed once per
 *   version.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ControllerConfig } from '../config/controller-config.ts';
import type { L4VirtualService, Pool } from '../model/types.ts';
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
    req.backendProtocol ?? '',
    req.svc.metadata.resourceVersion,
    req.policy ? JSON.stringify(req.policy) : '',
    nodeVersions,
    ...ctx.pods
      .select(req.svc)
      .map(
        (p) =>
          `${p.metadata.name}@${p.metadata.resourceVersion}${ctx.serviceType !== 'NodePort' ? `@${ctx.nodes.addressKey(p.spec.nodeName)}` : ''}`,
      ),
  ].join('|');
}

/** Every field of an L4 virtual service (a field added to the model is compared here too). */
const sameL4 = (a: L4VirtualService, b: L4VirtualService): boolean => isDeepStrictEqual(a, b);

/** The last build: its frontends, its pools in the order asked, and indexes into them. */
interface Last {
  inputs: unknown[];
  front: Frontends;
  builds: PoolBuild[];
  /** Positions in `front.pools` by Service (namespace/name) and by pool name. */
  bySvc: Map<string, number[]>;
  byName: Map<string, number>;
  result: DesiredResult;
}

export class DesiredCache {
  private readonly pools = new Map<string, { signature: string; build: PoolBuild }>();
  private readonly l4 = new Map<string, L4VirtualService>();
  private readonly certs: CertificateMemo = new Map();
  private last: Last | undefined;
  /**
   * After a build: the pools (by name) whose object differs from the previous build's, every other
   * object of the result being the previous build's; undefined: anything may differ.
   */
  changedPools: ReadonlySet<string> | undefined;

  /** A pool of the last build, by name. */
  pool(name: string): Pool | undefined {
    const i = this.last?.byName.get(name);
    return i === undefined ? undefined : this.last!.builds[i]!.pool;
  }

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
    const ctx = poolContext(view, cfg, lb);
    if (changed && last && inputs.every((x, i) => x === last.inputs[i]))
      return this.podsOnly(last, changed, ctx, cfg, view);
    this.changedPools = undefined;
    const front = this.frontends(view, cfg, lb);
    const nodeVersions = this.nodeVersions(cfg, view, ctx);
    const builds = front.pools.map((req) => {
      const kept = changed && !changed.has(req.svcKey) ? this.pools.get(req.name) : undefined;
      return kept ? kept.build : this.pooled(req, ctx, nodeVersions());
    });
    // Every pool built is remembered: there are none to forget while the counts agree.
    if (this.pools.size > front.pools.length) {
      const live = new Set(front.pools.map((r) => r.name));
      for (const name of this.pools.keys()) if (!live.has(name)) this.pools.delete(name);
    }
    const bySvc = new Map<string, number[]>();
    const byName = new Map<string, number>();
    front.pools.forEach((r, i) => {
      const at = bySvc.get(r.svcKey);
      if (at) at.push(i);
      else bySvc.set(r.svcKey, [i]);
      byName.set(r.name, i);
    });
    const result = assemble(front, builds);
    this.last = { inputs, front, builds, bySvc, byName, result };
    return result;
  }

  /** Only Pods changed: the pools of the changed Services, looked at through the index. */
  private podsOnly(
    last: Last,
    changed: ReadonlySet<string>,
    ctx: PoolContext,
    cfg: ControllerConfig,
    view: ClusterView,
  ): DesiredResult {
    const nodeVersions = this.nodeVersions(cfg, view, ctx);
    const touched: number[] = [];
    let findingsMoved = false;
    for (const key of changed) {
      for (const i of last.bySvc.get(key) ?? []) {
        const before = last.builds[i]!;
        const after = this.pooled(last.front.pools[i]!, ctx, nodeVersions());
        if (after === before) continue;
        if (before.findings.length + after.findings.length > 0) findingsMoved = true;
        last.builds[i] = after;
        touched.push(i);
      }
    }
    this.changedPools = new Set(touched.map((i) => last.front.pools[i]!.name));
    if (touched.length === 0) return last.result;
    const prev = last.result;
    const pools = prev.state.pools.slice();
    for (const i of touched) pools[i] = last.builds[i]!.pool;
    const waiting = new Map(prev.waiting);
    for (const key of new Set(touched.map((i) => last.front.pools[i]!.svcKey))) {
      const w = last.bySvc.get(key)!.flatMap((i) => last.builds[i]!.waiting);
      if (w.length > 0) waiting.set(key, w);
      else waiting.delete(key);
    }
    last.result = {
      ...prev,
      state: { ...prev.state, pools },
      waiting,
      findings: findingsMoved
        ? [...last.front.findings, ...last.builds.flatMap((b) => b.findings)]
        : prev.findings,
    };
    return last.result;
  }

  /** The pool asked for, built again only when what it is built from changed. */
  private pooled(req: PoolRequest, ctx: PoolContext, nodeVersions: string): PoolBuild {
    const sig = signature(req, ctx, nodeVersions);
    let entry = this.pools.get(req.name);
    if (!entry || entry.signature !== sig || !req.svc.metadata.resourceVersion) {
      entry = { signature: sig, build: buildPool(req, ctx) };
      this.pools.set(req.name, entry);
    }
    return entry.build;
  }

  /** NodePort pools depend on every Node (their members are all the Nodes): their versions, once. */
  private nodeVersions(cfg: ControllerConfig, view: ClusterView, ctx: PoolContext): () => string {
    let s: string | undefined;
    return () =>
      (s ??=
        cfg.serviceType === 'NodePort'
          ? view.nodes
              .map((n) => `${n.metadata.resourceVersion}~${ctx.nodes.phase(n.metadata.name)}`)
              .join(',')
          : '');
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
