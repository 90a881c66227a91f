/**
 * The sandbox's kubelet for the Pods its workload controllers make (kubelet.ts says what, this
 * does it): Ready kept as the kubelet computes it (containers and readiness gates), and a deleted
 * Pod stopped after its preStop, bounded by its grace period, then removed (a delete with a grace
 * of 0, guarded by its uid).
 */
import { RESOURCE_TYPES, type ResourceType } from './kinds.ts';
import { preStopSeconds, withKubeletReady } from './kubelet.ts';
import type { JsonObject } from './openapi.ts';
import type { Registry, WriteOptions } from './registry.ts';
import { gone, meta, name, SIMULATED } from './workload-pods.ts';
import { obj } from './workload-status.ts';

const POD: ResourceType = RESOURCE_TYPES.find((t) => t.kind === 'Pod' && !t.group && !t.custom)!;

export class SandboxKubelet {
  /** Pods stopping (their preStop running), by namespace/name. */
  private readonly stopping = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly registry: Registry,
    private readonly opts: WriteOptions,
  ) {}

  /** One look at a namespace's Pods (those it runs: simulated, bound to a node). */
  step(ns: string, pods: readonly JsonObject[], now: string): void {
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
    if (this.stopping.has(key)) return;
    const grace = Number(meta(p).deletionGracePeriodSeconds ?? 30);
    const ms = Math.max(0, Math.min(preStopSeconds(p), grace)) * 1000;
    const uid = String(meta(p).uid);
    const timer = setTimeout(() => {
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
    }, ms);
    timer.unref();
    this.stopping.set(key, timer);
  }

  stop(): void {
    for (const t of this.stopping.values()) clearTimeout(t);
    this.stopping.clear();
  }
}
