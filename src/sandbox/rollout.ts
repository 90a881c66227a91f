/**
 * A Deployment's rolling update as kube-controller-manager paces it (its `rolling.go`): the new
 * ReplicaSet grows while all of them together stay within `replicas + maxSurge`; old ones shrink
 * while the available Pods stay at least `replicas - maxUnavailable`, unhealthy old Pods first. A
 * Pod is available once Ready for `minReadySeconds`. `Recreate` scales the old ones to 0 and starts
 * the new one once no old Pod is left. Pure: the sandbox's workload controller applies the scales.
 */
import type { Json, JsonObject } from './openapi.ts';
import { arr, isReady, obj } from './workload-status.ts';

/** One ReplicaSet of a Deployment: its spec replicas, its available Pods, its age. */
export interface RolloutSet {
  name: string;
  replicas: number;
  available: number;
  /** Live Pods (not terminating): Recreate waits for every old one to be gone. */
  pods: number;
  created: string;
}

/** An int-or-percent of `total` (maxSurge rounds up, maxUnavailable down, as the API server does). */
export function scaledValue(v: Json | undefined, total: number, fallback: string, roundUp: boolean): number {
  const raw = v ?? fallback;
  if (typeof raw === 'number') return Math.max(0, Math.floor(raw));
  const m = /^(\d+)%$/.exec(String(raw));
  if (!m) return Math.max(0, Number.parseInt(String(raw), 10) || 0);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}

/** When a Ready Pod becomes available (ms), or undefined when it is not Ready. */
export function availableAt(pod: JsonObject, minReadySeconds: number): number | undefined {
  if (!isReady(pod)) return undefined;
  const ready = arr(obj(pod.status).conditions).find((c) => c.type === 'Ready');
  const since = Date.parse(String(ready?.lastTransitionTime ?? ''));
  return (Number.isFinite(since) ? since : 0) + minReadySeconds * 1000;
}

export interface RolloutPlan {
  /** The replicas each ReplicaSet should have now, by name (only those that change). */
  scales: Map<string, number>;
}

/**
 * The next step of a Deployment's rollout: the new ReplicaSet `current`, the `olds`, oldest first
 * by creation. Called again whenever a Pod changes, each call moves as far as the limits allow.
 */
export function rolloutStep(d: JsonObject, current: RolloutSet, olds: RolloutSet[]): RolloutPlan {
  const spec = obj(d.spec);
  const want = Number(spec.replicas ?? 1);
  const scales = new Map<string, number>();
  const set = (s: RolloutSet, n: number) => {
    if (n !== s.replicas) scales.set(s.name, n);
    s.replicas = n;
  };
  const strategy = obj(spec.strategy);
  const oldest = [...olds].sort((a, b) => a.created.localeCompare(b.created));
  if (strategy.type === 'Recreate') {
    for (const o of oldest) set(o, 0);
    // The new one starts once no old Pod runs.
    if (oldest.every((o) => o.pods === 0)) set(current, want);
    return { scales };
  }
  const ru = obj(strategy.rollingUpdate);
  const surge = scaledValue(ru.maxSurge, want, '25%', true);
  let unavailable = scaledValue(ru.maxUnavailable, want, '25%', false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  const total = () => current.replicas + oldest.reduce((n, o) => n + o.replicas, 0);
  // Scale up the new one within the surge.
  if (current.replicas > want) set(current, want);
  else if (current.replicas < want)
    set(current, Math.min(want, current.replicas + Math.max(0, want + surge - total())));
  // Scale down old ones within the unavailability: first their unhealthy Pods, then the rest.
  const minAvailable = want - unavailable;
  const newUnavailable = Math.max(0, current.replicas - current.available);
  let room = total() - minAvailable - newUnavailable;
  for (const o of oldest) {
    if (room <= 0) break;
    const unhealthy = Math.max(0, o.replicas - o.available);
    const down = Math.min(unhealthy, room);
    if (down > 0) set(o, o.replicas - down);
    room -= down;
  }
  const availableNow = current.available + oldest.reduce((n, o) => n + Math.min(o.available, o.replicas), 0);
  let spare = availableNow - minAvailable;
  for (const o of oldest) {
    if (spare <= 0) break;
    const down = Math.min(o.replicas, spare);
    if (down > 0) set(o, o.replicas - down);
    spare -= down;
  }
  return { scales };
}
