/**
 * What kube-controller-manager writes in the status of a Deployment, ReplicaSet, DaemonSet and
 * PodDisruptionBudget, computed from the Pods the sandbox's workload controller made for them
 * (workload-controller.ts). The fields are those `kubectl rollout status`, `kubectl get` and Helm's
 * `--wait` (kstatus, and Helm 3's legacy checker) read. Conditions keep their lastTransitionTime
 * while their status stays the same, as the real controllers keep it. Pure.
 */
import type { Json, JsonObject } from './openapi.ts';
import { isJsonObject } from './json.ts';

export const obj = (v: Json | undefined): JsonObject => (isJsonObject(v) ? v : {});
export const arr = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);

export const isReady = (pod: JsonObject): boolean =>
  !obj(pod.metadata).deletionTimestamp &&
  arr(obj(pod.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');

const generation = (o: JsonObject): number => Number(obj(o.metadata).generation ?? 1);

interface Condition {
  type: string;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** The conditions, each keeping the time it last changed status (and its last update when equal). */
function conditions(old: JsonObject, next: Condition[], now: string, withUpdate: boolean): JsonObject[] {
  const before = new Map(arr(old.conditions).map((c) => [String(c.type), c]));
  return next.map((c) => {
    const prev = before.get(c.type);
    const same = prev?.status === c.status;
    const unchanged = same && prev?.reason === c.reason && prev?.message === c.message;
    return {
      type: c.type,
      status: c.status,
      ...(withUpdate ? { lastUpdateTime: unchanged ? (prev.lastUpdateTime ?? now) : now } : {}),
      lastTransitionTime: same ? (prev.lastTransitionTime ?? now) : now,
      reason: c.reason,
      message: c.message,
    };
  });
}

/** A ReplicaSet's status; `failure` is why its last Pod creation failed (ReplicaFailure). */
export function replicaSetStatus(
  rs: JsonObject,
  pods: JsonObject[],
  failure: string | undefined,
  now: string,
): JsonObject {
  const live = pods.filter((p) => !obj(p.metadata).deletionTimestamp);
  const ready = live.filter(isReady).length;
  const failed: Condition[] = failure
    ? [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: failure }]
    : [];
  return {
    replicas: live.length,
    fullyLabeledReplicas: live.length,
    readyReplicas: ready,
    availableReplicas: ready,
    observedGeneration: generation(rs),
    ...(failed.length > 0 ? { conditions: conditions(obj(rs.status), failed, now, false) } : {}),
  };
}

/** A Deployment's status from its ReplicaSets (the newest first) and their Pods. */
export function deploymentStatus(
  d: JsonObject,
  newRs: JsonObject | undefined,
  sets: { rs: JsonObject; pods: JsonObject[] }[],
  now: string,
): JsonObject {
  const want = Number(obj(d.spec).replicas ?? 1);
  const live = sets.flatMap((s) => s.pods).filter((p) => !obj(p.metadata).deletionTimestamp);
  const ready = live.filter(isReady).length;
  const newName = newRs ? String(obj(newRs.metadata).name) : '';
  const updated = sets.find((s) => obj(s.rs.metadata).name === newName)?.pods ?? [];
  const updatedLive = updated.filter((p) => !obj(p.metadata).deletionTimestamp);
  const updatedReady = updatedLive.filter(isReady).length;
  const done = updatedReady >= want && live.length === want;
  const available = ready >= want;
  const conds: Condition[] = [
    available
      ? {
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
        }
      : {
          type: 'Available',
          status: 'False',
          reason: 'MinimumReplicasUnavailable',
          message: 'Deployment does not have minimum availability.',
        },
    done
      ? {
          type: 'Progressing',
          status: 'True',
          reason: 'NewReplicaSetAvailable',
          message: `ReplicaSet "${newName}" has successfully progressed.`,
        }
      : {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicaSetUpdated',
          message: `ReplicaSet "${newName}" is progressing.`,
        },
  ];
  const failure = arr(obj(newRs?.status).conditions).find((c) => c.type === 'ReplicaFailure');
  if (failure)
    conds.push({
      type: 'ReplicaFailure',
      status: 'True',
      reason: 'FailedCreate',
      message: String(failure.message),
    });
  const old = obj(d.status);
  // progressDeadlineSeconds (default 600): a rollout that has made no progress (no new Pod updated,
  // ready or available, the template unchanged) for that long is ProgressDeadlineExceeded.
  const progressing = arr(old.conditions).find((c) => c.type === 'Progressing');
  const moved =
    old.updatedReplicas !== updatedLive.length ||
    old.readyReplicas !== ready ||
    old.observedGeneration !== generation(d) ||
    (progressing?.reason !== 'ReplicaSetUpdated' && progressing?.reason !== 'ProgressDeadlineExceeded');
  const deadline = Number(obj(d.spec).progressDeadlineSeconds ?? 600);
  const since = Date.parse(String(progressing?.lastUpdateTime ?? now));
  // Once exceeded it stays so until the rollout moves again.
  const stalled =
    !done &&
    !moved &&
    (progressing?.reason === 'ProgressDeadlineExceeded' ||
      (Number.isFinite(since) && Date.parse(now) - since > deadline * 1000));
  if (stalled)
    conds[1] = {
      type: 'Progressing',
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: `ReplicaSet "${newName}" has timed out progressing.`,
    };
  // Progress moves the condition's update time (its message says the same).
  const conditionsOut = conditions(old, conds, now, true).map((c) =>
    c.type === 'Progressing' && !stalled && moved && !done ? { ...c, lastUpdateTime: now } : c,
  );
  return {
    observedGeneration: generation(d),
    replicas: live.length,
    updatedReplicas: updatedLive.length,
    readyReplicas: ready,
    availableReplicas: ready,
    ...(live.length - ready > 0 || want - ready > 0
      ? { unavailableReplicas: Math.max(live.length, want) - ready }
      : {}),
    conditions: conditionsOut,
  };
}

export function daemonSetStatus(
  ds: JsonObject,
  desired: number,
  pods: JsonObject[],
  hash: string,
): JsonObject {
  const live = pods.filter((p) => !obj(p.metadata).deletionTimestamp);
  const ready = live.filter(isReady).length;
  const updated = live.filter((p) => obj(obj(p.metadata).labels)['controller-revision-hash'] === hash).length;
  return {
    currentNumberScheduled: live.length,
    numberMisscheduled: 0,
    desiredNumberScheduled: desired,
    numberReady: ready,
    observedGeneration: generation(ds),
    updatedNumberScheduled: updated,
    numberAvailable: ready,
    ...(desired - ready > 0 ? { numberUnavailable: desired - ready } : {}),
  };
}

/** minAvailable / maxUnavailable: an integer, or a percentage of the expected Pods rounded up. */
function scaled(v: Json | undefined, of: number): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^\d+%$/.test(v)) return Math.ceil((Number(v.slice(0, -1)) * of) / 100);
  return undefined;
}

export function pdbStatus(pdb: JsonObject, pods: JsonObject[], now: string): JsonObject {
  const spec = obj(pdb.spec);
  const expected = pods.filter((p) => !obj(p.metadata).deletionTimestamp).length;
  const healthy = pods.filter(isReady).length;
  const minAvailable = scaled(spec.minAvailable, expected);
  const maxUnavailable = scaled(spec.maxUnavailable, expected);
  const desired =
    minAvailable ?? (maxUnavailable !== undefined ? Math.max(0, expected - maxUnavailable) : expected);
  const allowed = Math.max(0, healthy - desired);
  const cond: Condition =
    allowed > 0
      ? { type: 'DisruptionAllowed', status: 'True', reason: 'SufficientPods', message: '' }
      : { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '' };
  return {
    observedGeneration: generation(pdb),
    disruptionsAllowed: allowed,
    currentHealthy: healthy,
    desiredHealthy: desired,
    expectedPods: expected,
    conditions: conditions(obj(pdb.status), [cond], now, false),
  };
}
