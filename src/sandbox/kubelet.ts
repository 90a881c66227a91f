/**
 * The parts of a kubelet the sandbox's workload controller plays for the Pods it runs (those
 * annotated `sandbox.npl-lb.io/simulated`): Ready as the kubelet computes it (containers ready and
 * every readiness gate's condition True), and graceful termination (a deleted Pod stays, with its
 * deletionTimestamp, for its preStop hook, bounded by its grace period, then goes). Pure.
 */
import type { JsonObject } from './openapi.ts';
import { arr, obj } from './workload-status.ts';

const conditionOf = (pod: JsonObject, type: string) =>
  arr(obj(pod.status).conditions).find((c) => c.type === type);

/** The Ready condition a kubelet would report now: status, and why not where it is False. */
export function kubeletReady(pod: JsonObject): {
  status: 'True' | 'False';
  reason?: string;
  message?: string;
} {
  if (conditionOf(pod, 'ContainersReady')?.status !== 'True')
    return { status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status' };
  const gates = arr(obj(pod.spec).readinessGates).map((g) => String(g.conditionType));
  const missing = gates.filter((g) => conditionOf(pod, g)?.status !== 'True');
  if (missing.length === 0) return { status: 'True' };
  const first = missing[0]!;
  return {
    status: 'False',
    reason: 'ReadinessGatesNotReady',
    message: conditionOf(pod, first)
      ? `the status of pod readiness gate "${first}" is not "True", but ${String(conditionOf(pod, first)!.status)}`
      : `corresponding condition of pod readiness gate "${first}" does not exist.`,
  };
}

/** The Pod's status with its Ready condition as `kubeletReady` says (undefined when it already is). */
export function withKubeletReady(pod: JsonObject, now: string): JsonObject | undefined {
  const want = kubeletReady(pod);
  const status = obj(pod.status);
  const conds = arr(status.conditions);
  const ready = conds.find((c) => c.type === 'Ready');
  if (ready && ready.status === want.status && (want.status === 'True' || ready.reason === want.reason))
    return undefined;
  const next = {
    type: 'Ready',
    status: want.status,
    lastTransitionTime: ready?.status === want.status ? (ready.lastTransitionTime ?? now) : now,
    ...(want.reason ? { reason: want.reason, message: want.message ?? '' } : {}),
  };
  return { ...status, conditions: [...conds.filter((c) => c.type !== 'Ready'), next] };
}

/**
 * How long the Pod's preStop hooks run (s): a `sleep` action, or an exec of `sleep N` (directly or
 * through a shell), the longest of its containers'. Anything else counts as instant.
 */
export function preStopSeconds(pod: JsonObject): number {
  let most = 0;
  for (const c of arr(obj(pod.spec).containers)) {
    const pre = obj(obj(c.lifecycle).preStop);
    const sleep = Number(obj(pre.sleep).seconds ?? NaN);
    if (Number.isFinite(sleep)) most = Math.max(most, sleep);
    const cmd = Array.isArray(obj(pre.exec).command) ? (obj(pre.exec).command as unknown[]).map(String) : [];
    const m = /(?:^|\s)sleep\s+(\d+(?:\.\d+)?)\b/.exec(cmd.join(' '));
    if (m) most = Math.max(most, Number(m[1]));
  }
  return most;
}

/** The grace period a deleted Pod is given (s): the request's, else its spec's, else 30. */
export function graceSeconds(pod: JsonObject, requested: number | undefined): number {
  if (requested !== undefined) return Math.max(0, requested);
  const spec = Number(obj(pod.spec).terminationGracePeriodSeconds ?? 30);
  return Number.isFinite(spec) ? Math.max(0, spec) : 30;
}
