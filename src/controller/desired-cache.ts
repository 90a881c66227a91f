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
 * - A Service whose change leaves the frontends as they are counts as unchanged: its resourceVersion
 *   and its status, as long as the addresses the status shows are the ones it showed or the VIPs
 *   last pass gave it (the sources keep a VIP its status publishes, so publishing the VIP it was
 *   given changes no allocation). The cold start's thousands of status writes come back as Service
 *   events, and each would otherwise build every frontend again.
 * - An L4 virtual service equal to last pass's is last pass's object; a Secret is parsed once per
 *   version.
 * - The sweep plans everything but builds the frontends again only once a certificate they hold has
 *   expired: the clock is all they read beyond the collections, through certificates' expiry alone.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Service } from '../kube/objects.ts';
import type { L4VirtualService, Pool } from '../model/types.ts';
import { assemble } from '../source/desired.ts';
import { desiredFrontends } from '../source/frontends.ts';
import type { LoadBalancerInfo } from '../source/gateway/from-view.ts';
import { buildPool, type PoolContext, poolContext } from '../source/pools.ts';
import { type CertificateMemo, secretCertificates } from '../source/secret-certificates.ts';
import type { DesiredResult, Frontends, PoolBuild, PoolRequest, SourceStatus } from '../source/types.ts';
import { type ClusterView, routeInputs } from '../source/view.ts';

/** What a pool is built from, as one string: equal strings, equal pools. */
function signature(req: PoolRequest, ctx: PoolContext, nodeVersions: string): string {
  return [
    ctx.serviceType,
    req.health,
    req.backendProtocol ?? '',
    req.backendTls ? JSON.stringify(req.backendTls) : '',
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

/**
 * Whether two versions of a Service are the same to the sources but for their statuses' addresses:
 * everything but the status and the resourceVersion (which only this cache's signatures read).
 */
function sameServiceSpec(a: Service, b: Service): boolean {
  const { status: _s, metadata: am, ...ar } = a;
  const { status: _t, metadata: bm, ...br } = b;
  const { resourceVersion: _u, managedFields: _m, ...amRest } = am as typeof am & { managedFields?: unknown };
  const { resourceVersion: _v, managedFields: _n, ...bmRest } = bm as typeof bm & { managedFields?: unknown };
  return isDeepStrictEqual(amRest, bmRest) && isDeepStrictEqual(ar, br);
}

/** The addresses a Service's status shows, sorted (what the VIP allocation reads of it). */
const shownIps = (s: Service): string[] => s.status.loadBalancer.ingress.map((i) => i.ip ?? '').sort();

/** The VIPs a source status gives, sorted; an `auto:` one (the device's, unresolved) as itself. */
const givenIps = (st: SourceStatus | undefined): string[] =>
  [st?.vip, ...(st?.moreVips ?? [])].filter((v): v is string => v !== undefined).sort();

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
  /** The Services the frontends were built from, by key (kept current through status-only changes). */
  services: Map<string, Service>;
  result: DesiredResult;
}

export class DesiredCache {
  private readonly pools = new Map<string, { signature: string; build: PoolBuild }>();
  private readonly l4 = new Map<string, L4VirtualService>();
  private readonly certs: CertificateMemo = new Map();
  private last: Last | undefined;
  /** The first certificate expiry the last frontends hold (ms since the epoch; none: Infinity). */
  private expiresAt = Infinity;
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
   * undefined: anything may have changed. `frontends` (the sweep): the frontends are built again
   * even if no collection they read changed, when a certificate they hold has expired since, and
   * everything is planned (`changedPools` undefined); the pools of the Services not in `changed`
   * are kept as they are.
   */
  build(
    view: ClusterView,
    cfg: ControllerConfig,
    lb: LoadBalancerInfo,
    changed?: ReadonlySet<string>,
    o: { frontends?: boolean } = {},
  ): DesiredResult {
    const inputs = [view.services, view.nodes, view.secrets, view.namespaces, ...routeInputs(view)];
    const last = this.last;
    const ctx = poolContext(view, cfg, lb);
    const now = view.now ?? Date.now();
    // Only Pods changed, or Services only where the frontends do not read (then taken as the same).
    // The sweep's frontends too, while no certificate they hold has expired since: the clock is
    // all they read that the collections do not carry, and only through certificates' expiry.
    if (
      changed &&
      (!o.frontends || now < this.expiresAt) &&
      last &&
      inputs.every((x, i) => i === 0 || x === last.inputs[i]) &&
      (inputs[0] === last.inputs[0] || this.statusOnly(last, view, changed))
    ) {
      const result = this.podsOnly(last, changed, ctx, cfg, view);
      // The sweep plans everything, whatever was built again.
      if (o.frontends) this.changedPools = undefined;
      return result;
    }
    this.changedPools = undefined;
    const front = this.frontends(view, cfg, lb, now);
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
    const services = new Map(view.services.map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
    this.last = { inputs, front, builds, bySvc, byName, services, result };
    return result;
  }

  /**
   * The Services list is new, but every Service it changed in (all are named in `changed`, as the
   * controller names them) differs from the one the frontends were built from only in its
   * resourceVersion and its status, the status showing the addresses it showed or those the last
   * build gave it: the list counts as last pass's. Needs the view's index by key.
   */
  private statusOnly(last: Last, view: ClusterView, changed: ReadonlySet<string>): boolean {
    const byKey = view.serviceByKey;
    if (!byKey || view.services.length !== last.services.size) return false;
    const now: Service[] = [];
    for (const key of changed) {
      const before = last.services.get(key);
      const after = byKey(key);
      if (before === after) continue;
      if (!before || !after || !sameServiceSpec(before, after)) return false;
      const shown = shownIps(after);
      if (
        !isDeepStrictEqual(shown, shownIps(before)) &&
        !isDeepStrictEqual(shown, givenIps(last.result.services.get(key)))
      )
        return false;
      now.push(after);
    }
    for (const svc of now) last.services.set(`${svc.metadata.namespace}/${svc.metadata.name}`, svc);
    last.inputs[0] = view.services;
    return true;
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

  private frontends(view: ClusterView, cfg: ControllerConfig, lb: LoadBalancerInfo, now: number): Frontends {
    const read = secretCertificates(view.secrets ?? [], cfg.clusterName, now, this.certs);
    // The first expiry among the certificates these frontends hold: built at or after it, they differ.
    this.expiresAt = Infinity;
    const certificateOf: typeof read = (secretKey) => {
      const r = read(secretKey);
      if (r && 'certificate' in r)
        this.expiresAt = Math.min(this.expiresAt, Date.parse(r.certificate.notAfter));
      return r;
    };
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
