/**
 * Writes the readiness gate's condition (readiness-gate.ts) to Pods: a strategic merge patch of
 * that one condition on `pods/status` (merged by `type`, so the kubelet's conditions are never
 * touched), at most `writesPerSecond` a second with a few in flight; a Pod whose verdict changes
 * while its write waits is written once, with the latest. Tells the gate's latency (containers
 * ready to True) and, once per Pod, a Warning Event when its gate stays False past a threshold.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink } from '../kube/events.ts';
import type { Pod } from '../kube/objects.ts';
import { collectionPath, RESOURCES } from '../kube/paths.ts';
import { KubeApiError, strategicPatch } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import { type GateInputs, type GateVerdict, gateChangesFor, LB_READY_GATE } from './readiness-gate.ts';

export interface PodCondition extends GateVerdict {
  type: typeof LB_READY_GATE;
  lastTransitionTime: string;
}

/** Where the condition goes: an interface, so the writer runs in unit tests without an API server. */
export interface PodConditionSink {
  /** Patches the one condition; resolves false when the Pod is gone. */
  write(namespace: string, name: string, condition: PodCondition): Promise<boolean>;
}

export function kubePodConditionSink(kc: KubeConfig): PodConditionSink {
  return {
    async write(namespace, name, condition) {
      const path = `${collectionPath(RESOURCES.pods, namespace)}/${encodeURIComponent(name)}/status`;
      try {
        await strategicPatch(kc, path, { status: { conditions: [condition] } });
        return true;
      } catch (err) {
        if (err instanceof KubeApiError && err.statusCode === 404) return false;
        throw err;
      }
    },
  };
}

export interface GateWriterOptions {
  sink: PodConditionSink;
  events: EventSink;
  log: Logger;
  /** Patches a second at most (default 50). */
  writesPerSecond?: number;
  /** A gate False this long gets a Warning Event on its Pod (default 60 s; 0: never). */
  warnAfterMs?: number;
  /** Told each gate's latency in seconds (containers ready to True). */
  onLatency?: (seconds: number) => void;
  onWrite?: (status: 'True' | 'False', result: 'ok' | 'gone' | 'error') => void;
  now?: () => number;
}

interface Pending {
  namespace: string;
  name: string;
  uid: string;
  verdict: GateVerdict;
  /** The condition's current status and transition time on the Pod, when it has one. */
  current?: { status: string; lastTransitionTime?: string };
  containersReadyAt?: string;
}

/** How long after writing True the cache may still show the Pod without it (its watch lagging). */
const REWRITE_AFTER_MS = 5000;

export class ReadinessGateWriter {
  private readonly queue: PQueue;
  private readonly pending = new Map<string, Pending>();
  /** Since when each gated Pod's gate has been False (ms), and whether it was warned about. */
  private readonly falseSince = new Map<string, { at: number; warned: boolean }>();
  /**
   * Gates written True, per Pod uid, with when and what: True is final (never False after it).
   * While the cache catches up it is not compared again; if the cache still shows no True
   * `REWRITE_AFTER_MS` after the write, someone removed the condition (a status written whole,
   * by a merge patch or an update) and the same True is written again, never a False.
   */
  private readonly doneTrue = new Map<string, { at: number; pending: Pending; seen?: boolean }>();
  readonly stats = { writes: 0, failures: 0, rewrites: 0 };

  constructor(private readonly o: GateWriterOptions) {
    this.queue = new PQueue({ concurrency: 8, intervalCap: o.writesPerSecond ?? 50, interval: 1000 });
  }

  private now(): number {
    return (this.o.now ?? Date.now)();
  }

  /**
   * Compares every gated Pod with what the load balancer serves and queues what must change;
   * true when some gate waits for the device's health read.
   */
  update(pods: Iterable<Pod>, inputs: GateInputs): boolean {
    const seen = new Set<string>();
    const all = [...pods];
    for (const p of all) if (p.spec.readinessGates.length > 0) seen.add(p.metadata.uid);
    for (const uid of this.doneTrue.keys()) if (!seen.has(uid)) this.doneTrue.delete(uid);
    this.repairTrue(all);
    for (const [uid] of this.falseSince) if (!seen.has(uid)) this.falseSince.delete(uid);
    const { verdicts, waitingOnHealth } = gateChangesFor(all, inputs);
    for (const { pod, verdict, changed } of verdicts) {
      const uid = pod.metadata.uid;
      if (this.doneTrue.has(uid)) continue;
      this.noteFalse(pod, verdict);
      if (!changed) continue;
      const current = pod.status.conditions.find((c) => c.type === LB_READY_GATE);
      const ready = pod.status.conditions.find((c) => c.type === 'ContainersReady');
      const queued = this.pending.has(uid);
      this.pending.set(uid, {
        namespace: pod.metadata.namespace,
        name: pod.metadata.name,
        uid,
        verdict,
        ...(current ? { current } : {}),
        ...(ready?.lastTransitionTime ? { containersReadyAt: ready.lastTransitionTime } : {}),
      });
      if (!queued) void this.queue.add(() => this.write(uid));
    }
    // A gate True in the cache: no longer pending.
    for (const p of all)
      if (p.status.conditions.some((c) => c.type === LB_READY_GATE && c.status === 'True'))
        this.falseSince.delete(p.metadata.uid);
    return waitingOnHealth;
  }

  /** True gates written that the cache, long after, shows without a True: written again. */
  private repairTrue(pods: Pod[]): void {
    if (this.doneTrue.size === 0) return;
    const t = this.now();
    for (const pod of pods) {
      const done = this.doneTrue.get(pod.metadata.uid);
      if (!done) continue;
      if (pod.status.conditions.some((c) => c.type === LB_READY_GATE && c.status === 'True')) {
        done.seen = true;
        continue;
      }
      if (t - done.at < REWRITE_AFTER_MS) continue;
      this.doneTrue.delete(pod.metadata.uid);
      this.stats.rewrites++;
      this.o.log.info(
        { pod: `${pod.metadata.namespace}/${pod.metadata.name}` },
        'readiness gate True was removed from the Pod: written again',
      );
      const { current: _gone, ...rest } = done.pending;
      this.pending.set(pod.metadata.uid, rest);
      void this.queue.add(() => this.write(pod.metadata.uid));
    }
  }

  /** A gate that stays False past the threshold is said once, on its Pod. */
  private noteFalse(pod: Pod, v: GateVerdict): void {
    const uid = pod.metadata.uid;
    if (v.status === 'True') {
      this.falseSince.delete(uid);
      return;
    }
    const t = this.now();
    const f = this.falseSince.get(uid) ?? { at: t, warned: false };
    this.falseSince.set(uid, f);
    const after = this.o.warnAfterMs ?? 60_000;
    if (after <= 0 || f.warned || t - f.at < after) return;
    f.warned = true;
    const target = {
      kind: 'Pod',
      apiVersion: 'v1',
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid,
    };
    void this.o.events
      .record(
        target,
        'Warning',
        EventReasons.LoadBalancerGatePending,
        `readiness gate ${LB_READY_GATE} False for ${Math.round((t - f.at) / 1000)} s (${v.reason}): ${v.message}`,
      )
      .catch(() => undefined);
  }

  private async write(uid: string): Promise<void> {
    const p = this.pending.get(uid);
    this.pending.delete(uid);
    if (!p || this.doneTrue.has(uid)) return;
    const at = new Date(this.now()).toISOString();
    const condition: PodCondition = {
      type: LB_READY_GATE,
      ...p.verdict,
      // The transition time moves with the status only (as the kubelet's conditions).
      lastTransitionTime:
        p.current && p.current.status === p.verdict.status && p.current.lastTransitionTime
          ? p.current.lastTransitionTime
          : at,
    };
    // True is final: from the moment it is sent, no later False may follow it.
    if (p.verdict.status === 'True') this.doneTrue.set(uid, { at: this.now(), pending: p });
    try {
      const there = await this.o.sink.write(p.namespace, p.name, condition);
      this.stats.writes++;
      this.o.onWrite?.(p.verdict.status, there ? 'ok' : 'gone');
      if (!there || p.verdict.status !== 'True') return;
      if (p.containersReadyAt) {
        const since = Date.parse(p.containersReadyAt);
        if (Number.isFinite(since)) this.o.onLatency?.(Math.max(0, (this.now() - since) / 1000));
      }
    } catch (err) {
      this.doneTrue.delete(uid);
      this.stats.failures++;
      this.o.onWrite?.(p.verdict.status, 'error');
      // The next pass compares again and queues it anew.
      this.o.log.warn(
        { pod: `${p.namespace}/${p.name}`, err: (err as Error).message },
        'readiness gate write failed',
      );
    }
  }

  /**
   * Whether a True written is not yet in the cache: the controller looks again (each second)
   * until it is, or until it is written again (a True removed meanwhile).
   */
  get unconfirmed(): boolean {
    for (const d of this.doneTrue.values()) if (!d.seen) return true;
    return false;
  }

  /** Whether some gated Pod's gate is False now (the controller looks again while one is). */
  get anyFalse(): boolean {
    return this.falseSince.size > 0;
  }

  /** Resolves when every queued write is done (tests). */
  async idle(): Promise<void> {
    await this.queue.onIdle();
  }

  /** The gate's state per Pod (namespace/name) for the views: only gated Pods have one. */
  static stateOf(pod: Pod): { status: string; reason?: string } | undefined {
    if (!pod.spec.readinessGates.some((g) => g.conditionType === LB_READY_GATE)) return undefined;
    const c = pod.status.conditions.find((x) => x.type === LB_READY_GATE);
    return c ? { status: c.status, ...(c.reason ? { reason: c.reason } : {}) } : { status: 'Unknown' };
  }
}
