/**
 * A Deployment's revisions as kube-controller-manager keeps them on its ReplicaSets (pure): each
 * template's ReplicaSet carries its revision number; the newest one also carries the Deployment's
 * own annotations (its `kubernetes.io/change-cause`, which `kubectl rollout history` shows), all
 * but the controller's bookkeeping; a template rolled back to (`kubectl rollout undo`) makes its
 * old ReplicaSet the newest revision again, its former number kept in `revision-history`.
 */
import type { JsonObject } from './openapi.ts';
import { meta, name, ownerRef } from './workload-pods.ts';
import { obj } from './workload-status.ts';

export const REVISION = 'deployment.kubernetes.io/revision';
export const REVISION_HISTORY = 'deployment.kubernetes.io/revision-history';

/** A Deployment's annotations kube-controller-manager does not copy to its ReplicaSets. */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  REVISION_HISTORY,
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);

/** The Deployment's annotations its newest ReplicaSet carries too. */
export const copiedAnnotations = (d: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(obj(meta(d).annotations)).filter(([k]) => !NOT_COPIED.has(k)));

const revisionOf = (rs: JsonObject): number => Number(obj(meta(rs).annotations)[REVISION] ?? 0);

/** The highest revision among a Deployment's ReplicaSets (0: none yet). */
export const newestRevision = (sets: readonly JsonObject[]): number => Math.max(0, ...sets.map(revisionOf));

/**
 * The annotations the current template's ReplicaSet should carry: its own, the Deployment's, and,
 * when it is an older revision taken back while another ReplicaSet still has Pods (a rollback),
 * the next revision number with its former one in its history.
 */
export function currentAnnotations(
  d: JsonObject,
  current: JsonObject,
  sets: readonly JsonObject[],
): JsonObject {
  const has = obj(meta(current).annotations);
  const own = revisionOf(current);
  const newest = newestRevision(sets);
  const rolledBack =
    sets.includes(current) &&
    own < newest &&
    sets.some((rs) => rs !== current && Number(obj(rs.spec).replicas ?? 0) > 0);
  const history = String(has[REVISION_HISTORY] ?? '')
    .split(',')
    .filter(Boolean);
  return {
    ...has,
    ...copiedAnnotations(d),
    ...(rolledBack
      ? { [REVISION]: String(newest + 1), [REVISION_HISTORY]: [...history, String(own)].join(',') }
      : {}),
  };
}

/** The label a Deployment's ReplicaSets and their Pods carry: the hash of their template. */
export const HASH = 'pod-template-hash';

/** The ReplicaSet of a new template, at `revision`, with no replicas yet (the rollout grows it). */
export function newReplicaSet(
  d: JsonObject,
  template: JsonObject,
  hash: string,
  revision: number,
): JsonObject {
  const labels = { ...obj(meta(template).labels), [HASH]: hash };
  const selector = obj(obj(d.spec).selector);
  return {
    metadata: {
      name: `${name(d)}-${hash}`.slice(0, 253),
      labels,
      annotations: {
        ...copiedAnnotations(d),
        [REVISION]: String(revision),
        'deployment.kubernetes.io/desired-replicas': String(Number(obj(d.spec).replicas ?? 1)),
      },
      ownerReferences: [ownerRef('Deployment', d)],
    },
    spec: {
      // Grown by the rollout (rollout.ts), within the surge.
      replicas: 0,
      selector: { ...selector, matchLabels: { ...obj(selector.matchLabels), [HASH]: hash } },
      template: { ...template, metadata: { ...meta(template), labels } },
    },
  };
}
