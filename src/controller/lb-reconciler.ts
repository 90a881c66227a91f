/**
 * One pass of the load-balancer reconcile, level-triggered: desired state from the caches, observed
 * state from the adapter, the plan between them applied, then Service and Ingress status and Events.
 * Retryable failures throw, so the work queue backs off; terminal ones become Events.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import type { ApplyResult, LoadBalancerAdapter } from '../adapter/contract.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink, EventTarget } from '../kube/events.ts';
import { collectionPath, RESOURCES, type ResourceRef } from '../kube/paths.ts';
import { KubeApiError, mergePatch } from '../kube/raw-client.ts';
import { normalizePool, normalizeVirtualService } from '../model/normalize.ts';
import type { LbState } from '../model/types.ts';
import { type Change, type Conflict, type Observed, plan } from '../plan/diff.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import {
  buildDesired,
  type ClusterView,
  type DesiredMemo,
  newDesiredMemo,
  type DesiredResult,
  type Finding,
  type SourceStatus,
} from '../source/desired.ts';
import type { StateTracker } from './state.ts';

export interface LbReconcilerDeps {
  kubeConfig: KubeConfig;
  config: ControllerConfig;
  adapter: LoadBalancerAdapter;
  events: EventSink;
  state: StateTracker;
  /** At most one write per pool per this many milliseconds (default 100). */
  poolIntervalMs?: number;
  /**
   * How long a Service may wait for NodePortLocal mappings, or a pool for a ready member, before
   * it is a Warning (default 30 s): a new Service's first seconds are normal.
   */
  waitGraceMs?: number;
  /** Told what each pass applied, before a retryable failure makes the pass throw (for logs). */
  onApplied?: (applied: ApplyResult[], ms: number) => void;
}

type Target = EventTarget;

const objectKey = (c: Change): string => `${c.kind}/${c.name}`;
const wantedOf = (c: Change): object | 'delete' => (c.op === 'delete' ? 'delete' : c.desired);

export class LbReconciler {
  /** When each pool was last written, for the per-pool write interval. */
  private readonly poolWrites = new Map<string, number>();
  /**
   * The load balancer as we last saw it, kept up to date with what we applied since; dropped after
   * a failure and by `invalidate()` (the sweep), so the next pass observes the device again.
   */
  private observed: Observed | undefined;
  private readonly memo: DesiredMemo = newDesiredMemo();
  /**
   * Objects (kind/name) whose last apply failed terminally, with the desired object that failed
   * (the normalised, and therefore shared, instance; 'delete' for a delete): not sent again until
   * their desired state changes, so one bad object never costs every pass a doomed write.
   */
  private readonly parked = new Map<string, object | 'delete'>();
  /** Ingresses told they are fully served, with the resourceVersion and VIP they were told for. */
  private readonly served = new Map<string, string>();
  /** Since when a Service has waited for mappings, or a pool has had no ready member. */
  private readonly pendingSince = new Map<string, number>();

  invalidate(): void {
    this.observed = undefined;
  }

  constructor(private readonly d: LbReconcilerDeps) {}

  /**
   * One pass. Updates of a pool written less than `poolIntervalMs` ago wait for a later pass, so a
   * pool is written at most once per interval however often its Pods change; `deferredMs` says when.
   */
  async reconcile(
    view: ClusterView,
    now: () => number = Date.now,
    changed?: ReadonlySet<string>,
  ): Promise<{ applied: ApplyResult[]; desired: DesiredResult; deferredMs: number | undefined }> {
    const desired = buildDesired(view, this.d.config, this.memo, changed);
    this.observed ??= await this.d.adapter.observe();
    const observed = this.observed;
    const p = plan(desired.state, observed);
    const interval = this.d.poolIntervalMs ?? 100;
    let deferredMs: number | undefined;
    /** Objects (kind/name) that still differ from the device after this pass. */
    const pending = new Set<string>();
    const planned = new Set(p.changes.map(objectKey));
    // A parked object whose desired state is what failed before waits; one that the device now
    // matches (no change planned) is no longer parked.
    for (const k of [...this.parked.keys()]) if (!planned.has(k)) this.parked.delete(k);
    const changes = p.changes.filter((c) => {
      const k = objectKey(c);
      const parked = this.parked.get(k);
      if (parked !== undefined && isDeepStrictEqual(parked, wantedOf(c))) {
        pending.add(k);
        return false;
      }
      if (parked !== undefined) this.parked.delete(k);
      if (c.kind !== 'pool' || c.op !== 'update') return true;
      const wait = (this.poolWrites.get(c.name) ?? -Infinity) + interval - now();
      if (wait <= 0) return true;
      deferredMs = Math.min(deferredMs ?? wait, wait);
      pending.add(k);
      return false;
    });
    const started = now();
    const applied = changes.length > 0 ? await this.d.adapter.apply(changes) : [];
    this.d.onApplied?.(applied, now() - started);
    // A create that went through gets EnsuredLoadBalancer alone; one that did not is announced as
    // being ensured before its failure is told (at a cold start of thousands of Services, one Event
    // each instead of two).
    await this.announce(
      view,
      applied.filter((r) => !r.ok).map((r) => r.change),
    ).catch(() => undefined);
    const at = now();
    for (const r of applied) {
      const k = objectKey(r.change);
      if (!r.ok) {
        pending.add(k);
        // Retrying the same thing cannot help: park it until its desired state changes.
        if (r.error?.terminal) this.parked.set(k, wantedOf(r.change));
        continue;
      }
      if (r.change.kind !== 'pool') continue;
      if (r.change.op === 'delete') this.poolWrites.delete(r.change.name);
      else this.poolWrites.set(r.change.name, at);
    }
    // A terminal failure left the device as it was; a retryable one may have left it anywhere.
    this.observed = applied.every((r) => r.ok || r.error?.terminal)
      ? afterPass(
          observed,
          applied.filter((r) => r.ok),
          desired.state,
          pending,
          p.conflicts,
        )
      : undefined;
    const cleared = this.d.state.record(desired.state, applied, p.conflicts, pending);
    await this.writeStatus(view, desired);
    await this.emitEvents(view, desired, applied, cleared);
    const retry = applied.filter((r) => !r.ok && !r.error?.terminal);
    if (retry.length > 0) {
      throw new NplError(
        ErrorCodes.APPLY_FAILED,
        `${retry.length} load-balancer change(s) failed and will be retried: ${retry
          .map((r) => `${r.change.op} ${r.change.kind} ${r.change.name}: ${r.error?.message ?? ''}`)
          .join('; ')}`,
      );
    }
    return { applied, desired, deferredMs };
  }

  /** `EnsuringLoadBalancer` on the Service or Ingresses of each virtual service whose create is under way. */
  private async announce(view: ClusterView, changes: Change[]): Promise<void> {
    const creates = changes.filter((c) => c.kind === 'virtualService' && c.op === 'create');
    if (creates.length === 0) return;
    const byKey = <T extends { metadata: { namespace: string; name: string; uid: string } }>(list: T[]) =>
      new Map(list.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
    const services = byKey(view.services);
    const ingresses = byKey(view.ingresses);
    const batch = new PQueue({ concurrency: 16 });
    for (const c of creates) {
      if (c.kind !== 'virtualService' || c.op !== 'create') continue;
      const vs = c.desired;
      const targets =
        vs.kind === 'l4'
          ? [['Service', 'v1', services.get(vs.source)] as const]
          : [...new Set(vs.routes.map((r) => r.source))].map(
              (k) => ['Ingress', 'networking.k8s.io/v1', ingresses.get(k)] as const,
            );
      for (const [kind, apiVersion, o] of targets) {
        if (!o) continue;
        const m = o.metadata;
        void batch
          .add(() =>
            this.d.events.record(
              { kind, apiVersion, namespace: m.namespace, name: m.name, uid: m.uid },
              'Normal',
              EventReasons.EnsuringLoadBalancer,
              `ensuring virtual service ${vs.name} on ${this.d.adapter.name}`,
            ),
          )
          .catch(() => undefined);
      }
    }
    await batch.onIdle();
  }

  private live(status: SourceStatus): boolean {
    return (
      status.vip !== undefined &&
      status.virtualServices.length > 0 &&
      status.virtualServices.every((n) => !this.d.state.failed('virtualService', n))
    );
  }

  private async writeStatus(view: ClusterView, desired: DesiredResult): Promise<void> {
    /** The status an object should show, or undefined when it already shows it. */
    const wanted = (current: { ip?: string | undefined }[], status: SourceStatus): string[] | undefined => {
      const want = this.live(status) ? [status.vip!] : [];
      return current.length === want.length && current.every((x, i) => x.ip === want[i]) ? undefined : want;
    };
    const patch = async (ref: ResourceRef, ns: string, name: string, want: string[]) => {
      const path = `${collectionPath(ref, ns)}/${encodeURIComponent(name)}/status`;
      try {
        await mergePatch(this.d.kubeConfig, path, {
          status: { loadBalancer: { ingress: want.map((ip) => ({ ip })) } },
        });
      } catch (err) {
        if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
      }
    };
    // Status writes are independent of each other: a bounded number in flight at once.
    const writes = new PQueue({ concurrency: 16 });
    let failure: unknown;
    const run = (task: () => Promise<void>) => {
      writes.add(task).catch((err: unknown) => {
        failure ??= err;
      });
    };
    for (const svc of view.services) {
      const st = desired.services.get(`${svc.metadata.namespace}/${svc.metadata.name}`);
      if (!st) continue;
      const want = wanted(svc.status.loadBalancer.ingress, st);
      if (want) run(() => patch(RESOURCES.services, svc.metadata.namespace, svc.metadata.name, want));
    }
    for (const ing of view.ingresses) {
      const st = desired.ingresses.get(`${ing.metadata.namespace}/${ing.metadata.name}`);
      if (!st) continue;
      const want = wanted(ing.status.loadBalancer.ingress, st);
      if (want) run(() => patch(RESOURCES.ingresses, ing.metadata.namespace, ing.metadata.name, want));
    }
    await writes.onIdle();
    if (failure) throw failure;
  }

  private async emitEvents(
    view: ClusterView,
    desired: DesiredResult,
    applied: ApplyResult[],
    cleared: string[],
  ): Promise<void> {
    // Events are independent of each other: a bounded number in flight, all done before the pass ends.
    const batch = new PQueue({ concurrency: 16 });
    const ev = {
      record: (...args: Parameters<EventSink['record']>): Promise<void> => {
        void batch.add(() => this.d.events.record(...args)).catch(() => undefined);
        return Promise.resolve();
      },
    };
    const index = <T extends { metadata: { namespace: string; name: string } }>(list: T[]) => {
      let m: Map<string, T> | undefined;
      return (key: string) => {
        m ??= new Map(list.map((x) => [`${x.metadata.namespace}/${x.metadata.name}`, x]));
        return m.get(key);
      };
    };
    const services = index(view.services);
    const ingresses = index(view.ingresses);
    const pods = index(view.pods);
    const target = (
      kind: string,
      apiVersion: string,
      o: { metadata: { namespace: string; name: string; uid: string } } | undefined,
    ): Target | undefined =>
      o && { kind, apiVersion, namespace: o.metadata.namespace, name: o.metadata.name, uid: o.metadata.uid };
    const svcTarget = (key: string) => target('Service', 'v1', services(key));
    const ingTarget = (key: string) => target('Ingress', 'networking.k8s.io/v1', ingresses(key));
    const targetOf = (f: Finding) =>
      f.kind === 'Service'
        ? svcTarget(f.key)
        : f.kind === 'Ingress'
          ? ingTarget(f.key)
          : target('Pod', 'v1', pods(f.key));
    // New Services first wait for their Pods' NodePortLocal mappings: Normal while that is young,
    // Warning once it lasts past the grace period (and only then "no ready member").
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
      const t = svcTarget(key);
      const late = overdue(`waiting/${key}`);
      if (t)
        await ev.record(
          t,
          late ? 'Warning' : 'Normal',
          EventReasons.WaitingForNodePortLocal,
          `${waiting.length} selected Pod(s) have no NodePortLocal mapping${late ? ` after ${Math.round(grace / 1000)} s` : ' yet'}: ${waiting.slice(0, 5).join(', ')}`,
        );
    }
    for (const pool of desired.state.pools) {
      if (pool.members.some((m) => m.enabled)) continue;
      if (!overdue(`noready/${pool.name}`)) continue;
      const t = svcTarget(pool.service);
      if (t)
        await ev.record(t, 'Warning', EventReasons.NoReadyMembers, `pool ${pool.name} has no ready member`);
    }
    for (const k of this.pendingSince.keys()) if (!seen.has(k)) this.pendingSince.delete(k);
    const warned = new Set<string>();
    for (const f of desired.findings) {
      const t = targetOf(f);
      if (!t) continue;
      if (f.type === 'Warning') warned.add(`${f.kind}/${f.key}`);
      await ev.record(t, f.type, f.reason, f.message);
    }
    for (const [key, st] of desired.services) {
      const t = svcTarget(key);
      if (t && st.problem) await ev.record(t, 'Warning', st.reason ?? EventReasons.NoVIP, st.problem);
    }
    for (const [key, st] of desired.ingresses) {
      const t = ingTarget(key);
      if (!t) continue;
      if (st.problem) await ev.record(t, 'Warning', st.reason ?? EventReasons.NoVIP, st.problem);
      else if (!warned.has(`Ingress/${key}`) && this.live(st)) {
        // Once per version of the Ingress and VIP, not once per pass.
        const mark = `${ingresses(key)?.metadata.resourceVersion ?? ''}|${st.vip}`;
        if (this.served.get(key) !== mark) {
          this.served.set(key, mark);
          await ev.record(
            t,
            'Normal',
            EventReasons.IngressServed,
            `every rule is served on ${st.vip}:${this.d.config.ingressHttpPort}`,
          );
        }
      } else this.served.delete(key);
    }
    for (const k of this.served.keys()) if (!desired.ingresses.has(k)) this.served.delete(k);
    const sourcesOf = (c: Change): (Target | undefined)[] => {
      if (c.kind === 'pool') return [svcTarget((c.op === 'delete' ? c.observed : c.desired).service)];
      const vs = c.op === 'delete' ? c.observed : c.desired;
      return vs.kind === 'l4'
        ? [svcTarget(vs.source)]
        : [...new Set(vs.routes.map((x) => x.source))].map(ingTarget);
    };
    const where = this.d.adapter.name;
    for (const r of applied) {
      const c = r.change;
      for (const t of sourcesOf(c)) {
        if (!t) continue;
        if (!r.ok) {
          await ev.record(
            t,
            'Warning',
            EventReasons.SyncLoadBalancerFailed,
            `${c.op} ${c.kind} ${c.name}: ${r.error?.code}: ${r.error?.message}`,
          );
        } else if (c.kind === 'virtualService' && c.op === 'delete') {
          await ev.record(
            t,
            'Normal',
            EventReasons.DeletedLoadBalancer,
            `deleted virtual service ${c.name} on ${where}`,
          );
        } else if (c.kind === 'virtualService') {
          await ev.record(
            t,
            'Normal',
            EventReasons.EnsuredLoadBalancer,
            `ensured virtual service ${c.name} (${c.desired.vip}:${c.desired.port}) on ${where}`,
          );
        } else if (c.op === 'update') {
          // No counts in the message: repeated member updates fold into one Event.
          await ev.record(
            t,
            'Normal',
            EventReasons.UpdatedLoadBalancer,
            `updated the members of pool ${c.name} on ${where}`,
          );
        }
      }
    }
    // A failure that is over without a write (the device already matches) is said to be over.
    const byName = new Map(desired.state.virtualServices.map((v) => [`virtualService/${v.name}`, v]));
    for (const k of cleared) {
      const vs = byName.get(k);
      if (!vs) continue;
      const ts =
        vs.kind === 'l4'
          ? [svcTarget(vs.source)]
          : [...new Set(vs.routes.map((x) => x.source))].map(ingTarget);
      for (const t of ts) {
        if (t)
          await ev.record(
            t,
            'Normal',
            EventReasons.EnsuredLoadBalancer,
            `virtual service ${vs.name} is live on ${this.d.adapter.name}`,
          );
      }
    }
    await batch.onIdle();
  }
}

/**
 * The observed state after a fully successful pass, without asking the device: what we applied,
 * and for every other desired object we own (not deferred, not in conflict) the desired object
 * itself, which the device now equals; keeping those objects lets the next pass compare them by
 * reference.
 */
function afterPass(
  observed: Observed,
  applied: ApplyResult[],
  desired: LbState,
  pending: Set<string>,
  conflicts: Conflict[],
): Observed {
  const pools = new Map(observed.owned.pools.map((p) => [p.name, p]));
  const vss = new Map(observed.owned.virtualServices.map((v) => [v.name, v]));
  const put = (c: Change) => {
    if (c.kind === 'pool') {
      if (c.op === 'delete') pools.delete(c.name);
      else pools.set(c.name, c.desired);
    } else if (c.op === 'delete') vss.delete(c.name);
    else vss.set(c.name, c.desired);
  };
  for (const r of applied) put(r.change);
  const clash = new Set(conflicts.map((c) => `${c.kind}/${c.name}`));
  for (const p of desired.pools) {
    if (!pending.has(`pool/${p.name}`) && !clash.has(`pool/${p.name}`) && pools.has(p.name))
      pools.set(p.name, normalizePool(p));
  }
  for (const v of desired.virtualServices) {
    const k = `virtualService/${v.name}`;
    if (!pending.has(k) && !clash.has(k) && vss.has(v.name)) vss.set(v.name, normalizeVirtualService(v));
  }
  return {
    owned: { pools: [...pools.values()], virtualServices: [...vss.values()] },
    foreign: observed.foreign,
  };
}
