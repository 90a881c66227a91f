/**
 * The sandbox's kubelet for the Pods its workload controllers make (kubelet.ts says what, this
 * does it): Ready kept as the kubelet computes it (containers and readiness gates), and a deleted
 * Pod stopped after its preStop, bounded by its grace period, then removed (a delete with a grace
 * of 0, guarded by its uid). A Pod whose images the catalogue has (pod-images.ts), on a node with
 * a loopback Pod CIDR, runs for real: its processes on addresses of that CIDR, its containers
 * ready when their readiness probe answers, SIGTERM after the preStop and SIGKILL when the grace
 * period is spent (pod-processes.ts); any other Pod is simulated, its containers ready at once.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, normalize } from 'node:path';
import { RESOURCE_TYPES, type ResourceType } from './kinds.ts';
import { preStopSeconds, withKubeletReady } from './kubelet.ts';
import type { JsonObject } from './openapi.ts';
import type { Registry, WriteOptions } from './registry.ts';
import { PodAddresses } from './pod-addresses.ts';
import { type ContainersState, PodProcesses, runnableContainers } from './pod-processes.ts';
import type { LogLine } from './pod-logs.ts';
import { gone, meta, name, SIMULATED } from './workload-pods.ts';
import { arr, obj } from './workload-status.ts';

const core = (kind: string): ResourceType =>
  RESOURCE_TYPES.find((t) => t.kind === kind && !t.group && !t.custom)!;
const POD = core('Pod');
const SECRET = core('Secret');
const CONFIG_MAP = core('ConfigMap');

/** A file name from a volume's items or keys that stays inside its directory (else undefined). */
function inside(path: unknown): string | undefined {
  if (typeof path !== 'string' || path === '' || isAbsolute(path)) return undefined;
  const n = normalize(path);
  return n.startsWith('..') ? undefined : n;
}

export class SandboxKubelet {
  /** Pods stopping (their preStop running), by namespace/name: the timer, its grace and start. */
  private readonly stopping = new Map<string, { timer: NodeJS.Timeout; grace: number; since: number }>();
  private readonly processes = new PodProcesses();
  private readonly addresses = new PodAddresses();
  /** The namespace of each Pod running for real, by uid. */
  private readonly running = new Map<string, string>();
  /** The directory holding each running Pod's volumes, by uid. */
  private readonly podDirs = new Map<string, string>();

  constructor(
    private readonly registry: Registry,
    private readonly opts: WriteOptions,
  ) {}

  /**
   * Starts a Pod bound to `node` for real where it can: its addresses (empty: simulated, nothing
   * started). Its status then follows its containers (`report`).
   */
  run(ns: string, pod: JsonObject, node: JsonObject): string[] {
    const uid = String(meta(pod).uid);
    if (!runnableContainers(pod)) return [];
    const ips = this.addresses.take(node, uid);
    if (ips.length === 0) return [];
    const podName = name(pod);
    this.running.set(uid, ns);
    this.processes.start(
      uid,
      pod,
      ips,
      (state) => this.report(ns, podName, uid, state),
      () => this.writeVolumes(ns, pod, uid),
    );
    return ips;
  }

  /**
   * The Pod's Secret and ConfigMap volumes written out as the kubelet projects them (every key,
   * or the items listed, at their paths), each in a directory of its own; a volume whose object is
   * missing is left out (the container that reads it fails, and is restarted).
   */
  private writeVolumes(ns: string, pod: JsonObject, uid: string): Map<string, string> {
    let base = this.podDirs.get(uid);
    if (!base) {
      base = mkdtempSync(join(tmpdir(), 'npl-lb-pod-'));
      this.podDirs.set(uid, base);
    }
    const out = new Map<string, string>();
    for (const v of arr(obj(pod.spec).volumes)) {
      const src = v.secret ? obj(v.secret) : v.configMap ? obj(v.configMap) : undefined;
      const ref = v.secret ? src?.secretName : src?.name;
      if (!src || typeof v.name !== 'string' || typeof ref !== 'string') continue;
      const found = this.registry.find(v.secret ? SECRET : CONFIG_MAP, ns, ref)?.obj;
      if (!found) continue;
      const data = new Map<string, Buffer>();
      for (const [k, val] of Object.entries(obj(found.data)))
        if (typeof val === 'string') data.set(k, v.secret ? Buffer.from(val, 'base64') : Buffer.from(val));
      for (const [k, val] of Object.entries(obj(found.binaryData)))
        if (typeof val === 'string') data.set(k, Buffer.from(val, 'base64'));
      const items = arr(src.items);
      const files =
        items.length > 0
          ? items.map((i) => [i.key, i.path] as const)
          : [...data.keys()].map((k) => [k, k] as const);
      const dir = join(base, inside(v.name) ?? 'volume');
      mkdirSync(dir, { recursive: true });
      for (const [key, path] of files) {
        const file = inside(path);
        const content = typeof key === 'string' ? data.get(key) : undefined;
        if (!file || !content) continue;
        mkdirSync(join(dir, file, '..'), { recursive: true });
        writeFileSync(join(dir, file), content, { mode: 0o600 });
      }
      out.set(v.name, dir);
    }
    return out;
  }

  /** What the containers of a Pod running for real say, written to its status. */
  private report(ns: string, podName: string, uid: string, state: ContainersState): void {
    const p = this.registry.find(POD, ns, podName)?.obj;
    if (!p || String(meta(p).uid) !== uid || gone(p)) return;
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const status = obj(p.status);
    const conds = arr(status.conditions);
    const was = conds.find((c) => c.type === 'ContainersReady');
    const want = state.ready ? 'True' : 'False';
    const containersReady = {
      type: 'ContainersReady',
      status: want,
      lastTransitionTime: was?.status === want ? (was.lastTransitionTime ?? now) : now,
      ...(state.ready ? {} : { reason: 'ContainersNotReady', message: 'containers with unready status' }),
    };
    const next: JsonObject = {
      ...p,
      status: {
        ...status,
        conditions: [...conds.filter((c) => c.type !== 'ContainersReady'), containersReady],
        containerStatuses: arr(status.containerStatuses).map((c) => ({
          ...c,
          ready: state.ready,
          restartCount: state.restartCount,
          state: { running: { startedAt: state.startedAt } },
        })),
      },
    };
    const withReady = withKubeletReady(next, now);
    try {
      this.registry.update(
        POD,
        ns,
        podName,
        withReady ? { ...next, status: withReady } : next,
        'status',
        this.opts,
      );
    } catch {
      // Gone meanwhile: nothing to report on.
    }
  }

  /** One look at a namespace's Pods (those it runs: simulated, bound to a node). */
  step(ns: string, pods: readonly JsonObject[], now: string): void {
    // A Pod removed at once (a delete with a grace of 0): its processes go too.
    const here = new Set(pods.map((p) => String(meta(p).uid)));
    for (const [uid, where] of this.running) if (where === ns && !here.has(uid)) void this.halt(uid, 0);
    for (const p of pods) {
      if (obj(meta(p).annotations)[SIMULATED] === undefined || !obj(p.spec).nodeName) continue;
      if (gone(p)) {
        this.stopLater(ns, p);
        continue;
      }
      if (obj(p.status).phase !== 'Running') continue;
      const status = withKubeletReady(p, now);
      if (status) this.registry.update(POD, ns, name(p), { ...p, status }, 'status', this.opts);
    }
  }

  /** preStop runs, bounded by the grace period; then the containers stop and the Pod goes. */
  private stopLater(ns: string, p: JsonObject): void {
    const key = `${ns}/${name(p)}`;
    const grace = Number(meta(p).deletionGracePeriodSeconds ?? 30);
    const was = this.stopping.get(key);
    // Deleted again with a shorter grace period (`kubectl delete --grace-period=1` of a terminating
    // Pod): the time already spent counts, the rest is cut to the new period, as the kubelet does.
    if (was && grace >= was.grace) return;
    const since = was?.since ?? Date.now();
    if (was) clearTimeout(was.timer);
    const spent = Date.now() - since;
    const ms = Math.max(0, Math.min(preStopSeconds(p), grace) * 1000 - spent);
    const uid = String(meta(p).uid);
    const timer = setTimeout(() => {
      // The containers get SIGTERM once the preStop is done, and what is left of the grace period.
      void this.halt(uid, Math.max(0, grace * 1000 - spent - ms)).then(() => {
        this.stopping.delete(key);
        try {
          this.registry.delete(POD, ns, name(p), {
            dryRun: false,
            gracePeriodSeconds: 0,
            preconditions: { uid },
          });
        } catch {
          // Gone already, or another Pod of that name now.
        }
      });
    }, ms);
    timer.unref();
    this.stopping.set(key, { timer, grace, since });
  }

  /** Stops a Pod's processes (none: at once) and lets its addresses go. */
  private async halt(uid: string, graceMs: number): Promise<void> {
    if (!this.running.has(uid)) return;
    this.running.delete(uid);
    await this.processes.stop(uid, graceMs);
    this.addresses.release(uid);
    this.removeDir(uid);
  }

  private removeDir(uid: string): void {
    const dir = this.podDirs.get(uid);
    if (dir) rmSync(dir, { recursive: true, force: true });
    this.podDirs.delete(uid);
  }

  /** What a running Pod's container wrote (pod-processes.ts); undefined where it runs no process. */
  logs(uid: string, container?: string): LogLine[] | undefined {
    return this.processes.logs(uid, container);
  }

  stop(): void {
    for (const s of this.stopping.values()) clearTimeout(s.timer);
    this.stopping.clear();
    this.processes.stopAll();
    this.running.clear();
    for (const uid of [...this.podDirs.keys()]) this.removeDir(uid);
  }
}
