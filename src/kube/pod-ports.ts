/**
 * How Kubernetes ties Services to Pods, shared by the agent and the controller: selector matching,
 * targetPort resolution (names through the Pod's container ports) and Pod IPs and readiness.
 */
import type { Pod } from './objects.ts';

/** A Service selector selects nothing when empty, as for Endpoints. */
export function selectorMatches(
  selector: Record<string, string> | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** A Service port's targetPort on one Pod: numbers as they are, names through its container ports (same protocol). */
export function resolveTargetPort(
  pod: Pod,
  target: number | string | undefined,
  port: number,
  protocol: string,
): number | undefined {
  if (target === undefined) return port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod.spec.containers) {
    for (const p of c.ports) if (p.name === target && p.protocol === protocol) return p.containerPort;
  }
  return undefined;
}

export function podIPs(pod: Pod): string[] {
  const ips = pod.status.podIPs?.map((p) => p.ip) ?? (pod.status.podIP ? [pod.status.podIP] : []);
  return [...new Set(ips.filter((ip) => ip !== ''))];
}

export function podTerminated(pod: Pod): boolean {
  return pod.status.phase === 'Succeeded' || pod.status.phase === 'Failed';
}

export function podReady(pod: Pod): boolean {
  return pod.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The Pod readiness gate npl-lb sets: True once the load balancer serves the Pod (readiness-gate.ts). */
export const LB_READY_GATE = 'npl-lb.io/load-balancer-ready';

const conditionTrue = (pod: Pod, type: string): boolean =>
  pod.status.conditions.some((c) => c.type === type && c.status === 'True');

/** Whether the Pod lists npl-lb's readiness gate. */
export const gated = (pod: Pod): boolean =>
  pod.spec.readinessGates.some((g) => g.conditionType === LB_READY_GATE);

/**
 * Whether the Pod may take traffic from the load balancer: Ready, or, for a Pod gated by npl-lb,
 * ready in every other respect (containers ready, every other gate True). Its Ready waits for the
 * load balancer to serve it, so the load balancer cannot wait for its Ready (AWS's gates, too,
 * register a target once its containers are ready).
 */
export function podServes(pod: Pod): boolean {
  if (podReady(pod)) return true;
  if (!gated(pod) || !conditionTrue(pod, 'ContainersReady')) return false;
  return pod.spec.readinessGates.every(
    (g) => g.conditionType === LB_READY_GATE || conditionTrue(pod, g.conditionType),
  );
}
