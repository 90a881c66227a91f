/**
 * The Events of a load-balancer pass, on the objects they concern: what the validation boundary
 * found, Services waiting for NodePortLocal (Normal within a grace period, then Warning), VIP
 * problems, what was applied (the service controller's reasons), failures that are over, and a
 * fully served Ingress once per version. Written a bounded number at a time; a failed write is
 * logged by the sink and never fails the pass.
 */
import { hostPort } from '../model/names.ts';
import PQueue from 'p-queue';
import type { ApplyResult } from '../adapter/contract.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink, EventTarget, EventType } from '../kube/events.ts';
import type { Pool, VirtualService } from '../model/types.ts';
import type { Change } from '../plan/diff.ts';
import type { ClusterView, DesiredResult, Finding, SourceStatus } from '../source/desired.ts';

export interface LbEventsDeps {
  events: EventSink;
  /** The adapter's name, as the messages say where things were applied. */
  adapter: string;
  ingressHttpPort: number;
  /** The port of the HTTPS virtual services (Ingress `tls:`); 443 when absent. */
  ingressHttpsPort?: number;
  /** How long waiting for mappings, or a pool without a ready member, stays Normal (default 30 s). */
  waitGraceMs?: number;
  /** The address a VIP stands for (an `auto:` VIP: what the device allocated); the VIP itself when absent. */
  address?: (vip: string) => string | undefined;
}

/** Whether a pool has a ready member (remembered per pool object: most are the last pass's). */
const ready = new WeakMap<Pool, boolean>();
function hasReadyMember(pool: Pool): boolean {
  let r = ready.get(pool);
  if (r === undefined) ready.set(pool, (r = pool.members.some((m) => m.enabled)));
  return r;
}

/**
 * The pools without a ready member, kept by name from pass to pass: found again in full when
 * anything may have changed, otherwise only the pools that changed are looked at. Updated as each
 * pass plans (in the order of the desired states), never at its end, which passes reach out of order.
 */
export class UnreadyPools {
  private readonly byName = new Map<string, Pool>();

  /** `changed`: the pools that differ from the last call's (by name, with a lookup); undefined: any. */
  update(
    pools: readonly Pool[],
    changed?: { names: ReadonlySet<string>; pool: (name: string) => Pool | undefined },
  ): Pool[] {
    if (!changed) {
      this.byName.clear();
      for (const p of pools) if (!hasReadyMember(p)) this.byName.set(p.name, p);
    } else {
      for (const name of changed.names) {
        const p = changed.pool(name);
        if (p && !hasReadyMember(p)) this.byName.set(name, p);
        else this.byName.delete(name);
      }
    }
    return [...this.byName.values()];
  }
}

/** The entries of a status map that carry a problem (remembered per map: most are last pass's). */
const problems = new WeakMap<ReadonlyMap<string, SourceStatus>, [string, SourceStatus, string][]>();
function withProblems(m: ReadonlyMap<string, SourceStatus>): [string, SourceStatus, string][] {
  let r = problems.get(m);
  if (!r) {
    r = [];
    for (const [key, st] of m) if (st.problem) r.push([key, st, st.problem]);
    problems.set(m, r);
  }
  return r;
}

type TargetKind = 'Service' | 'Ingress' | 'Pod' | 'Secret' | 'Gateway';

type Send = (t: EventTarget, type: EventType, reason: string, message: string) => void;

type Meta = { metadata: { namespace: string; name: string; uid: string; resourceVersion?: string } };

/** Event targets by kind and namespace/name: the cache's lookups, or an index made on first use. */
class Targets {
  private readonly maps = new Map<string, Map<string, Meta>>();

  constructor(private readonly view: ClusterView) {}

  private object(kind: TargetKind, key: string): Meta | undefined {
    // The controller's cache answers by key; a view without it is indexed once.
    const byKey =
      kind === 'Service'
        ? this.view.serviceByKey
        : kind === 'Ingress'
          ? this.view.ingressByKey
          : kind === 'Pod'
            ? this.view.podByKey
            : undefined;
    if (byKey) return byKey(key);
    let m = this.maps.get(kind);
    if (!m) {
      const list: Meta[] =
        kind === 'Service'
          ? this.view.services
          : kind === 'Ingress'
            ? this.view.ingresses
            : kind === 'Pod'
              ? this.view.pods
              : kind === 'Gateway'
                ? (this.view.gateways ?? []).map((g) => ({
                    metadata: { ...g.metadata, uid: g.metadata.uid ?? '' },
                  }))
                : (this.view.secrets ?? []);
      m = new Map(list.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
      this.maps.set(kind, m);
    }
    return m.get(key);
  }

  get(kind: TargetKind, key: string): EventTarget | undefined {
    const o = this.object(kind, key);
    if (!o) return undefined;
    const apiVersion =
      kind === 'Ingress'
        ? 'networking.k8s.io/v1'
        : kind === 'Gateway'
          ? 'gateway.networking.k8s.io/v1'
          : 'v1';
    const { namespace, name, uid } = o.metadata;
    return { kind, apiVersion, namespace, name, uid };
  }

  resourceVersion(kind: 'Ingress', key: string): string {
    return this.object(kind, key)?.metadata.resourceVersion ?? '';
  }

  /** The Service, or the Ingresses, a virtual service stands for. */
  ofVirtualService(vs: VirtualService): EventTarget[] {
    const ts =
      vs.kind === 'l4'
        ? [this.get('Service', vs.source)]
        : [...new Set(vs.routes.map((r) => r.source))].map((k) => this.get('Ingress', k));
    return ts.filter((t): t is EventTarget => t !== undefined);
  }

  ofChange(c: Change): EventTarget[] {
    if (c.kind === 'virtualService') return this.ofVirtualService(c.op === 'delete' ? c.observed : c.desired);
    // A certificate is told through the virtual services that serve it (their apply waits for it).
    if (c.kind === 'certificate') return [];
    const t = this.get('Service', (c.op === 'delete' ? c.observed : c.desired).service);
    return t ? [t] : [];
  }
}

export class LbEvents {
  /** Ingresses told they are fully served, with the resourceVersion and VIP they were told for. */
  private readonly served = new Map<string, string>();
  /** Since when a Service has waited for mappings, or a pool has had no ready member. */
  private readonly pendingSince = new Map<string, number>();

  constructor(private readonly d: LbEventsDeps) {}

  /** A VIP as a message shows it: its address (an allocated one once the device gave it). */
  private shown(vip: string | undefined): string {
    return (vip && this.d.address?.(vip)) ?? vip ?? '';
  }

  private batch(): { send: Send; done: () => Promise<void> } {
    const q = new PQueue({ concurrency: 16 });
    return {
      send: (t, type, reason, message) =>
        void q.add(() => this.d.events.record(t, type, reason, message)).catch(() => undefined),
      done: () => q.onIdle(),
    };
  }

  /** `EnsuringLoadBalancer` for each virtual service whose create did not go through at once. */
  async ensuring(view: ClusterView, failed: Change[]): Promise<void> {
    const targets = new Targets(view);
    const { send, done } = this.batch();
    for (const c of failed) {
      if (c.kind !== 'virtualService' || c.op !== 'create') continue;
      for (const t of targets.ofVirtualService(c.desired)) {
        send(
          t,
          'Normal',
          EventReasons.EnsuringLoadBalancer,
          `ensuring virtual service ${c.name} on ${this.d.adapter}`,
        );
      }
    }
    await done();
  }

  /** Everything a pass has to say; `live` tells whether an object's virtual services are live. */
  async pass(
    view: ClusterView,
    desired: DesiredResult,
    applied: ApplyResult[],
    cleared: string[],
    live: (s: SourceStatus) => boolean,
    unready: readonly Pool[] = new UnreadyPools().update(desired.state.pools),
  ): Promise<void> {
    const targets = new Targets(view);
    const { send, done } = this.batch();
    const on = (kind: Finding['kind'], key: string) => targets.get(kind, key);

    this.tellWaiting(desired, unready, targets, send);

    const warned = new Set<string>();
    for (const f of desired.findings) {
      const t = on(f.kind, f.key);
      if (!t) continue;
      if (f.type === 'Warning') warned.add(`${f.kind}/${f.key}`);
      send(t, f.type, f.reason, f.message);
    }
    // A listener refused for a value the load balancer cannot serve (a TLS field it lacks, a
    // hostname, a mode) is said on its Gateway too, beside the listener's condition.
    for (const [key, gw] of desired.gateways?.gateways ?? []) {
      const refused = gw.listeners.flatMap((l) =>
        l.conditions
          .filter((c) => c.type === 'Accepted' && !c.status && c.reason === 'UnsupportedValue')
          .map((c) => `listener ${l.name}: ${c.message}`),
      );
      const t = refused.length > 0 ? targets.get('Gateway', key) : undefined;
      for (const message of t ? refused : [])
        send(t!, 'Warning', EventReasons.UnsupportedByLoadBalancer, message);
    }
    for (const [key, st, problem] of withProblems(desired.services)) {
      const t = on('Service', key);
      if (t) send(t, 'Warning', st.reason ?? EventReasons.NoVIP, problem);
    }
    this.tellIngresses(desired, targets, warned, live, send);

    const where = this.d.adapter;
    for (const r of applied) this.tellApplied(r, targets, desired, send);
    // A failure that is over without a write (the device already matches) is said to be over.
    const byName =
      cleared.length > 0
        ? new Map(desired.state.virtualServices.map((v) => [`virtualService/${v.name}`, v]))
        : new Map<string, VirtualService>();
    for (const k of cleared) {
      const vs = byName.get(k);
      if (!vs) continue;
      for (const t of targets.ofVirtualService(vs))
        send(t, 'Normal', EventReasons.EnsuredLoadBalancer, `virtual service ${vs.name} is live on ${where}`);
    }
    await done();
  }

  /**
   * New Services first wait for their Pods' NodePortLocal mappings: Normal while that is young,
   * Warning once it lasts past the grace period (and only then "no ready member").
   */
  private tellWaiting(desired: DesiredResult, unready: readonly Pool[], targets: Targets, send: Send): void {
    const on = (kind: Finding['kind'], key: string) => targets.get(kind, key);
    const now = Date.now();
    const grace = this.d.waitGraceMs ?? 30_000;
    const seen = new Set<string>();
    const overdue = (key: string): boolean => {
      seen.add(key);
      const first = this.pendingSince.get(key) ?? now;
      this.pendingSince.set(key, first);
      return now - first >= grace;
    };
    for (const [key, waiting] of desired.waiting) {
      const late = overdue(`waiting/${key}`);
      const t = on('Service', key);
      if (t)
        send(
          t,
          late ? 'Warning' : 'Normal',
          EventReasons.WaitingForNodePortLocal,
          `${waiting.length} selected Pod(s) have no NodePortLocal mapping${late ? ` after ${Math.round(grace / 1000)} s` : ' yet'}: ${waiting.slice(0, 5).join(', ')}`,
        );
    }
    for (const pool of unready) {
      if (!overdue(`noready/${pool.name}`)) continue;
      const t = on('Service', pool.service);
      if (t) send(t, 'Warning', EventReasons.NoReadyMembers, `pool ${pool.name} has no ready member`);
    }
    for (const k of this.pendingSince.keys()) if (!seen.has(k)) this.pendingSince.delete(k);
  }

  /**
   * Each Ingress of ours: its VIP problem, or once per version of it and its VIP that every rule
   * is served (not when a Warning was said on it this pass, nor while it is not live).
   */
  private tellIngresses(
    desired: DesiredResult,
    targets: Targets,
    warned: ReadonlySet<string>,
    live: (s: SourceStatus) => boolean,
    send: Send,
  ): void {
    for (const [key, st] of desired.ingresses) {
      const t = targets.get('Ingress', key);
      if (!t) continue;
      if (st.problem) send(t, 'Warning', st.reason ?? EventReasons.NoVIP, st.problem);
      else if (!warned.has(`Ingress/${key}`) && live(st)) {
        const vips = [st.vip, ...(st.moreVips ?? [])].map((v) => this.shown(v));
        const mark = `${targets.resourceVersion('Ingress', key)}|${vips.join(',')}`;
        if (this.served.get(key) !== mark) {
          this.served.set(key, mark);
          // The class's virtual services per family: HTTP, and HTTPS where it has TLS hosts.
          const https = st.virtualServices.length / vips.length > 1;
          const on = (port: number) => vips.map((v) => hostPort(v, port)).join(' and ');
          send(
            t,
            'Normal',
            EventReasons.IngressServed,
            `every rule is served on ${on(this.d.ingressHttpPort)}${https ? `, its TLS hosts on ${on(this.d.ingressHttpsPort ?? 443)} too` : ''}`,
          );
        }
      } else this.served.delete(key);
    }
    for (const k of this.served.keys()) if (!desired.ingresses.has(k)) this.served.delete(k);
  }

  /**
   * The objects an applied change concerns; for a shared virtual service the device refused for
   * some sources' routes only (`error.sources`), those sources: the others' routes are served.
   */
  private concerned(r: ApplyResult, targets: Targets): EventTarget[] {
    const c = r.change;
    const only = r.error?.sources;
    if (r.ok || !only || c.kind !== 'virtualService' || c.op === 'delete' || c.desired.kind !== 'l7')
      return targets.ofChange(c);
    return targets.ofVirtualService({
      ...c.desired,
      routes: c.desired.routes.filter((x) => only.includes(x.source)),
    });
  }

  private tellApplied(r: ApplyResult, targets: Targets, desired: DesiredResult, send: Send): void {
    const where = this.d.adapter;
    const c = r.change;
    if (c.kind === 'certificate' && !r.ok && c.op !== 'delete') {
      // A certificate that did not reach the device (a rotation keeps the one served before):
      // said on its Secret, and on the objects served with it, whose authors may not watch Secrets.
      const secret = targets.get('Secret', c.desired.source);
      const served = desired.state.virtualServices
        .filter((v) => v.kind === 'l7' && v.certificates?.includes(c.name))
        .flatMap((v) => targets.ofVirtualService(v));
      const message = `certificate ${c.desired.subject} (${c.desired.fingerprint.slice(0, 23)}…, from Secret ${c.desired.source}) ${c.op === 'update' ? 'did not replace the one served' : 'was not uploaded'} on ${where}: ${r.error?.code}: ${r.error?.message}${r.error?.terminal ? '' : ' (retried)'}`;
      for (const t of [secret, ...served])
        if (t) send(t, 'Warning', EventReasons.CertificateRotationFailed, message);
      return;
    }
    for (const t of this.concerned(r, targets)) {
      if (!r.ok) {
        send(
          t,
          'Warning',
          EventReasons.SyncLoadBalancerFailed,
          `${c.op} ${c.kind} ${c.name}: ${r.error?.code}: ${r.error?.message}`,
        );
      } else if (c.kind === 'virtualService' && c.op === 'delete') {
        send(t, 'Normal', EventReasons.DeletedLoadBalancer, `deleted virtual service ${c.name} on ${where}`);
      } else if (c.kind === 'virtualService') {
        send(
          t,
          'Normal',
          EventReasons.EnsuredLoadBalancer,
          `ensured virtual service ${c.name} (${hostPort(this.shown(c.desired.vip), c.desired.port)}) on ${where}`,
        );
      } else if (c.op === 'update') {
        // No counts in the message: repeated member updates fold into one Event.
        send(
          t,
          'Normal',
          EventReasons.UpdatedLoadBalancer,
          `updated the members of pool ${c.name} on ${where}`,
        );
      }
    }
  }
}
