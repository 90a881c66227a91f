/**
 * The sandbox's workload controllers (optional: `npl-lb sandbox --workloads`, on in the demo), as
 * kube-controller-manager, the scheduler and a kubelet would run them, with nothing actually
 * running (as KWOK does): a Deployment gets a ReplicaSet per template (`<name>-<hash>`, the older
 * ones scaled to 0), a ReplicaSet its Pods, a DaemonSet a Pod on each Node its nodeSelector takes;
 * each Pod is bound to a Ready Node and reported Running and Ready by that node's "kubelet", and
 * carries the annotation `sandbox.npl-lb.io/simulated` (no container runs, so it has no address).
 * Their statuses (and PodDisruptionBudgets') are written as the real controllers write them
 * (workload-status.ts), so `kubectl rollout status` and `helm install --wait` finish; what these
 * controllers made goes when its owner goes. A new template rolls out as kube-controller-manager
 * paces it (maxSurge, maxUnavailable, minReadySeconds: rollout.ts); a Pod's Ready waits for its
 * readiness gates and a deleted Pod stays for its preStop, within its grace period (kubelet.ts).
 * Taints and affinity are not simulated.
 */
import { RESOURCE_TYPES, type ResourceType, storageKey } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import type { Registry, WriteOptions } from './registry.ts';
import { logPassFailure, NamespaceQueue } from './namespace-queue.ts';
import {
  controllerOf,
  fits,
  gone,
  labels,
  meta,
  name,
  nodeReady,
  podFromTemplate,
  SIMULATED,
  runningStatus,
  templateHash,
  unschedulable,
} from './workload-pods.ts';
import type { Store } from './store.ts';
import { availableAt, type RolloutSet, rolloutStep } from './rollout.ts';
import { SandboxKubelet } from './kubelet-runner.ts';
import type { LogLine } from './pod-logs.ts';
import { currentAnnotations, HASH, newestRevision, newReplicaSet, REVISION } from './deployment-revisions.ts';
import type { AdmissionWebhooks } from './admission-webhooks.ts';
import { isReady, obj } from './workload-status.ts';
import { writeStatuses } from './workload-statuses.ts';

export { templateHash } from './workload-pods.ts';
export { SIMULATED } from './workload-pods.ts';
const REVISION_HASH = 'controller-revision-hash';
const RS_USER = 'system:serviceaccount:kube-system:replicaset-controller';

const type = (kind: string): ResourceType => RESOURCE_TYPES.find((t) => t.kind === kind && !t.custom)!;
const T = {
  deploy: type('Deployment'),
  rs: type('ReplicaSet'),
  ds: type('DaemonSet'),
  pod: type('Pod'),
  node: type('Node'),
  pdb: type('PodDisruptionBudget'),
};
const WATCHED = new Set(Object.values(T).map(storageKey));

export class WorkloadController {
  private readonly queue = new NamespaceQueue(
    (ns) => this.reconcile(ns),
    (namespace, err) => logPassFailure(this.registry.log, 'workload', namespace, err),
  );
  /**
   * Why an object's last step failed (a Pod the API refused), by namespace/uid: its backoff, and
   * whether it is due again. `due` is set by the retry's own timer, never by comparing clocks: a
   * timer runs on the event loop's clock, which lags the wall clock by the work of its turn, so a
   * retry that checked `Date.now()` against a deadline could wake a little early, find itself not
   * due, and never be tried again (a rollout held until something else changed).
   */
  private readonly failures = new Map<string, { message: string; delayMs: number; due: boolean }>();
  private readonly retries = new Set<NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;
  private readonly opts: WriteOptions = {
    dryRun: false,
    fieldValidation: 'Ignore',
    warnings: [],
    fieldManager: 'kube-controller-manager',
  };

  /** Pods being admitted (webhooks called) per ReplicaSet uid: counted as made meanwhile. */
  private readonly admitting = new Map<string, number>();

  constructor(
    private readonly registry: Registry,
    private readonly store: Store,
    private readonly clock: () => string = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    /** Admission webhooks (admission-webhooks.ts): the Pods a ReplicaSet makes go through them. */
    private readonly admission?: Pick<AdmissionWebhooks, 'wants' | 'admit'>,
  ) {
    this.kubelet = new SandboxKubelet(registry, this.opts);
  }

  /** The kubelet's part (kubelet-runner.ts), and the wake-ups for minReadySeconds and deadlines. */
  private readonly kubelet: SandboxKubelet;
  private readonly wakeups = new Map<string, NodeJS.Timeout>();

  start(): void {
    this.registry.gracefulPod = (t, o) =>
      t === T.pod && obj(meta(o).annotations)[SIMULATED] !== undefined && obj(o.spec).nodeName !== undefined;
    this.unsubscribe = this.store.subscribe((ev) => {
      if (!WATCHED.has(ev.storage)) return;
      // A Node changes what every namespace's DaemonSets and unscheduled Pods want.
      if (ev.namespace) this.queue.add(ev.namespace);
      else this.queue.add(...this.namespaces());
    });
    this.queue.add(...this.namespaces());
  }

  /** What a Pod's container wrote, where the kubelet runs it for real (kubelet-runner.ts). */
  logs(uid: string, container?: string): LogLine[] | undefined {
    return this.kubelet.logs(uid, container);
  }

  stop(): void {
    this.registry.gracefulPod = undefined;
    this.kubelet.stop();
    for (const t of this.wakeups.values()) clearTimeout(t);
    this.wakeups.clear();
    this.unsubscribe?.();
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    this.queue.stop();
  }

  private namespaces(): string[] {
    return this.store.list(storageKey(type('Namespace')), undefined).map((s) => name(s.obj));
  }

  private list(t: ResourceType, ns: string | undefined): JsonObject[] {
    return this.store.list(storageKey(t), ns).map((s) => s.obj);
  }

  /** Makes the namespace's ReplicaSets, Pods and statuses what its workloads say. */
  reconcile(ns: string): void {
    const now = this.clock();
    // Each object on its own: one that fails (its Pods refused) never holds the others back.
    for (const d of this.list(T.deploy, ns)) if (!gone(d)) this.guard(ns, d, () => this.deployment(ns, d));
    const nodes = this.list(T.node, undefined);
    for (const rs of this.list(T.rs, ns))
      if (!gone(rs)) this.guard(ns, rs, () => this.replicaSet(ns, rs, nodes, now));
    for (const ds of this.list(T.ds, ns))
      if (!gone(ds)) this.guard(ns, ds, () => this.daemonSet(ns, ds, nodes, now));
    this.collect(ns);
    this.kubelet.step(ns, this.list(T.pod, ns), now);
    writeStatuses(
      {
        types: T,
        list: (t, at) => this.list(t, at),
        failure: (uid) => this.failures.get(`${ns}/${uid}`)?.message,
        wakeAt: (atMs) => this.wakeAt(ns, atMs),
        update: (t, o, status) => this.registry.update(t, ns, name(o), { ...o, status }, 'status', this.opts),
      },
      ns,
      now,
    );
  }

  /** Reconciles the namespace again at `atMs` (a Pod becoming available after minReadySeconds). */
  private wakeAt(ns: string, atMs: number): void {
    const key = `${ns}/${atMs}`;
    if (this.wakeups.has(key)) return;
    const timer = setTimeout(
      () => {
        this.wakeups.delete(key);
        this.queue.add(ns);
      },
      Math.max(0, atMs - Date.now()) + 5,
    );
    timer.unref();
    this.wakeups.set(key, timer);
  }

  /**
   * Runs one object's step. A failure is kept (by namespace/uid) for its status and the step is
   * not tried again before a delay that doubles from 1 s to a minute, as a controller's work queue
   * backs off; a success clears it.
   */
  private guard(ns: string, o: JsonObject, step: () => void): void {
    const k = `${ns}/${String(meta(o).uid)}`;
    const failed = this.failures.get(k);
    if (failed && !failed.due) return;
    try {
      step();
      this.failures.delete(k);
    } catch (err) {
      this.recordFailure(ns, o, err);
    }
  }

  /** A failed step of `o`: kept for its status, tried again after a delay that doubles to a minute. */
  private recordFailure(ns: string, o: JsonObject, err: unknown): void {
    const k = `${ns}/${String(meta(o).uid)}`;
    const failed = this.failures.get(k);
    const delayMs = Math.min(60_000, failed ? failed.delayMs * 2 : 1000);
    const entry = { message: (err as Error).message.slice(0, 500), delayMs, due: false };
    this.registry.log.warn(
      { namespace: ns, kind: o.kind, name: name(o), err: entry.message, retryInMs: delayMs },
      'sandbox workload step failed; retrying',
    );
    this.failures.set(k, entry);
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      entry.due = true;
      this.queue.add(ns);
    }, delayMs);
    timer.unref();
    this.retries.add(timer);
  }

  private owned(t: ResourceType, ns: string, owner: JsonObject): JsonObject[] {
    const uid = meta(owner).uid;
    return this.list(t, ns).filter((o) => controllerOf(o)?.uid === uid);
  }

  private deployment(ns: string, d: JsonObject): void {
    const template = obj(obj(d.spec).template);
    const hash = templateHash(template);
    const sets = this.owned(T.rs, ns, d);
    let current = sets.find((rs) => labels(rs)[HASH] === hash);
    const revision = newestRevision(sets);
    if (!current) {
      current = this.registry.create(T.rs, ns, newReplicaSet(d, template, hash, revision + 1), this.opts).obj;
    }
    // Its change-cause on the newest ReplicaSet; a template rolled back to is the newest revision.
    const has = obj(meta(current).annotations);
    const wantAnnotations = currentAnnotations(d, current, sets);
    if (JSON.stringify(wantAnnotations) !== JSON.stringify(has))
      current = this.write(T.rs, ns, {
        ...current,
        metadata: { ...meta(current), annotations: wantAnnotations },
      });
    const minReady = Number(obj(d.spec).minReadySeconds ?? 0);
    const rolloutSet = (rs: JsonObject) => this.rolloutSet(ns, rs, minReady);
    // The others by uid: `current` may be the copy just written (its annotations), and a stale copy
    // of it among the olds would be scaled down as an old one and written with a stale version.
    const currentUid = meta(current).uid;
    const olds = sets.filter((rs) => meta(rs).uid !== currentUid);
    const { scales } = rolloutStep(d, rolloutSet(current), olds.map(rolloutSet));
    for (const rs of [current, ...olds]) {
      const replicas = scales.get(name(rs));
      if (replicas !== undefined) this.write(T.rs, ns, { ...rs, spec: { ...obj(rs.spec), replicas } });
    }
    const rev = obj(meta(current).annotations)[REVISION];
    if (rev !== undefined && obj(meta(d).annotations)[REVISION] !== rev)
      this.write(T.deploy, ns, {
        ...d,
        metadata: { ...meta(d), annotations: { ...obj(meta(d).annotations), [REVISION]: rev } },
      });
  }

  /** A ReplicaSet as the rollout reads it: its replicas, Pods and those available (woken when one becomes so). */
  private rolloutSet(ns: string, rs: JsonObject, minReady: number): RolloutSet {
    const nowMs = Date.now();
    const pods = this.owned(T.pod, ns, rs).filter((p) => !gone(p));
    let available = 0;
    for (const p of pods) {
      const at = availableAt(p, minReady);
      if (at === undefined) continue;
      if (at <= nowMs) available++;
      else this.wakeAt(ns, at);
    }
    return {
      name: name(rs),
      replicas: Number(obj(rs.spec).replicas ?? 0),
      available,
      pods: this.owned(T.pod, ns, rs).length,
      created: String(meta(rs).creationTimestamp ?? ''),
    };
  }

  private replicaSet(ns: string, rs: JsonObject, nodes: JsonObject[], now: string): void {
    const template = obj(obj(rs.spec).template);
    const pods = this.owned(T.pod, ns, rs).filter((p) => !gone(p));
    const ready = nodes.filter((n) => nodeReady(n) && !obj(n.spec).unschedulable && fits(n, template));
    // A Pod left unscheduled goes once a Node can take it: its replacement is bound at creation.
    const stale = ready.length > 0 ? pods.filter((p) => !obj(p.spec).nodeName) : [];
    for (const p of stale) this.registry.delete(T.pod, ns, name(p), { dryRun: false });
    const live = pods.filter((p) => !stale.includes(p));
    const want = Number(obj(rs.spec).replicas ?? 1);
    // Fewer: Pods on the least used nodes. More: the unready first, then the newest.
    const uid = String(meta(rs).uid);
    for (let i = live.length + (this.admitting.get(uid) ?? 0); i < want; i++) {
      const load = (n: JsonObject) => live.filter((p) => obj(p.spec).nodeName === name(n)).length;
      const node = [...ready].sort((a, b) => load(a) - load(b))[0];
      const body = podFromTemplate(rs, 'ReplicaSet', template, {}, node ? name(node) : undefined);
      const req = {
        type: T.pod,
        namespace: ns,
        operation: 'CREATE' as const,
        object: body,
        dryRun: false,
        user: RS_USER,
      };
      if (!this.admission?.wants(req)) {
        live.push(this.createPod(ns, body, node, now));
        continue;
      }
      // Through the admission webhooks first, as the ReplicaSet controller's creates go.
      this.admitting.set(uid, (this.admitting.get(uid) ?? 0) + 1);
      void this.admission
        .admit(req)
        .then((admitted) => void this.createPod(ns, admitted, node, this.clock()))
        .catch((err: unknown) => this.recordFailure(ns, rs, err))
        .finally(() => {
          const left = (this.admitting.get(uid) ?? 1) - 1;
          if (left > 0) this.admitting.set(uid, left);
          else this.admitting.delete(uid);
          this.queue.add(ns);
        });
    }
    const extra = [...live]
      .sort(
        (a, b) =>
          Number(isReady(a)) - Number(isReady(b)) ||
          String(meta(b).creationTimestamp).localeCompare(String(meta(a).creationTimestamp)),
      )
      .slice(0, Math.max(0, live.length - want));
    for (const p of extra) this.registry.delete(T.pod, ns, name(p), { dryRun: false });
  }

  private daemonSet(ns: string, ds: JsonObject, nodes: JsonObject[], now: string): void {
    const template = obj(obj(ds.spec).template);
    const hash = templateHash(template);
    const eligible = new Set(nodes.filter((n) => !gone(n) && fits(n, template)).map(name));
    const pods = this.owned(T.pod, ns, ds).filter((p) => !gone(p));
    const placed = new Set<string>();
    for (const p of pods) {
      const node = String(obj(p.spec).nodeName ?? '');
      if (eligible.has(node) && labels(p)[REVISION_HASH] === hash && !placed.has(node)) placed.add(node);
      else this.registry.delete(T.pod, ns, name(p), { dryRun: false });
    }
    for (const n of nodes)
      if (eligible.has(name(n)) && !placed.has(name(n)))
        this.createPod(
          ns,
          podFromTemplate(ds, 'DaemonSet', template, { [REVISION_HASH]: hash }, name(n)),
          nodeReady(n) ? n : undefined,
          now,
        );
  }

  /** Creates the Pod, reported running on `node`, or Pending without one. */
  private createPod(ns: string, body: JsonObject, node: JsonObject | undefined, now: string): JsonObject {
    const created = this.registry.create(T.pod, ns, body, this.opts).obj;
    const status = node
      ? runningStatus(created, node, now, this.kubelet.run(ns, created, node))
      : unschedulable(now, this.store.list(storageKey(T.node), undefined).length);
    return this.registry.update(T.pod, ns, name(created), { ...created, status }, 'status', this.opts).obj;
  }

  /** What these controllers made goes when its owner has gone (the garbage collector's part). */
  private collect(ns: string): void {
    const uids = new Set(
      [...this.list(T.deploy, ns), ...this.list(T.rs, ns), ...this.list(T.ds, ns)].map((o) => meta(o).uid),
    );
    for (const k of this.failures.keys())
      if (k.startsWith(`${ns}/`) && !uids.has(k.slice(ns.length + 1))) this.failures.delete(k);
    for (const rs of this.list(T.rs, ns)) {
      const owner = controllerOf(rs);
      if (owner?.kind === 'Deployment' && !uids.has(owner.uid))
        this.registry.delete(T.rs, ns, name(rs), { dryRun: false });
    }
    for (const p of this.list(T.pod, ns)) {
      const owner = controllerOf(p);
      if (obj(meta(p).annotations)[SIMULATED] && owner && !uids.has(owner.uid) && !gone(p))
        this.registry.delete(T.pod, ns, name(p), { dryRun: false });
    }
  }

  private write(t: ResourceType, ns: string, o: JsonObject): JsonObject {
    return this.registry.update(t, ns, name(o), o, undefined, this.opts).obj;
  }
}
