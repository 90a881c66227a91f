/**
 * The pieces of the sandbox's workload controllers (workload-controller.ts) that need no store:
 * owner references, template hashes and Pod names as kube-controller-manager makes them, label
 * selectors, Node fitness, and the Pod status a kubelet reports. Pure, but for Pod names' random
 * suffix.
 */
import { randomInt } from 'node:crypto';
import type { Json, JsonObject } from './openapi.ts';
import type { LabelSelector } from './selectors.ts';
import { arr, obj } from './workload-status.ts';

export const meta = (o: JsonObject): JsonObject => obj(o.metadata);
export const name = (o: JsonObject): string => String(meta(o).name);
export const labels = (o: JsonObject): Record<string, string> =>
  obj(meta(o).labels) as Record<string, string>;
export const gone = (o: JsonObject): boolean => meta(o).deletionTimestamp !== undefined;

/** The owner a controller made this object for (its controller reference). */
export const controllerOf = (o: JsonObject): JsonObject | undefined =>
  arr(meta(o).ownerReferences).find((r) => r.controller === true);

export const ownerRef = (kind: string, owner: JsonObject): JsonObject => ({
  apiVersion: 'apps/v1',
  kind,
  name: name(owner),
  uid: String(meta(owner).uid),
  controller: true,
  blockOwnerDeletion: true,
});

/** JSON with keys sorted, so a template's hash does not depend on the order its writer used. */
function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null)
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k]!)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A template's hash as kube-controller-manager renders one: FNV-1a 32, in its safe alphabet. */
export function templateHash(template: Json): string {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(canonical(template))) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return [...String(h)].map((c) => SAFE[c.charCodeAt(0) % SAFE.length]).join('');
}

export const suffix = (): string => Array.from({ length: 5 }, () => SAFE[randomInt(SAFE.length)]).join('');

/** A LabelSelector object (matchLabels, matchExpressions) as the selector the store matches. */
export function selectorOf(sel: JsonObject): LabelSelector {
  const out: LabelSelector = Object.entries(obj(sel.matchLabels)).map(([key, v]) => ({
    key,
    op: 'eq' as const,
    value: String(v),
  }));
  for (const e of arr(sel.matchExpressions)) {
    const key = String(e.key);
    const values = Array.isArray(e.values) ? e.values.map(String) : [];
    if (e.operator === 'In') out.push({ key, op: 'in', values });
    else if (e.operator === 'NotIn') out.push({ key, op: 'notin', values });
    else if (e.operator === 'Exists') out.push({ key, op: 'exists' });
    else if (e.operator === 'DoesNotExist') out.push({ key, op: 'notexists' });
  }
  return out;
}

export const nodeReady = (n: JsonObject): boolean =>
  !gone(n) && arr(obj(n.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
export const fits = (n: JsonObject, template: JsonObject): boolean =>
  Object.entries(obj(obj(template.spec).nodeSelector)).every(([k, v]) => labels(n)[k] === v);

/**
 * What a kubelet reports for a started Pod whose containers are ready (none runs here); Ready
 * waits for the Pod's readiness gates, if it lists any (kubelet.ts).
 */
export function runningStatus(
  pod: JsonObject,
  node: JsonObject | undefined,
  now: string,
  /** The Pod's addresses when it runs for real: its containers are not ready until probed. */
  ips: string[] = [],
): JsonObject {
  const gated = arr(obj(pod.spec).readinessGates).length > 0;
  const started = ips.length > 0;
  const cond = (t: string): JsonObject =>
    started && (t === 'Ready' || t === 'ContainersReady')
      ? {
          type: t,
          status: 'False',
          lastTransitionTime: now,
          reason: 'ContainersNotReady',
          message: 'containers with unready status',
        }
      : t === 'Ready' && gated
        ? {
            type: t,
            status: 'False',
            lastTransitionTime: now,
            reason: 'ReadinessGatesNotReady',
            message: `corresponding condition of pod readiness gate "${String(arr(obj(pod.spec).readinessGates)[0]!.conditionType)}" does not exist.`,
          }
        : { type: t, status: 'True', lastTransitionTime: now };
  const hostIP = arr(obj(node?.status).addresses).find((a) => a.type === 'InternalIP')?.address;
  return {
    phase: 'Running',
    ...(hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
    ...(started ? { podIP: ips[0], podIPs: ips.map((ip) => ({ ip })) } : {}),
    startTime: now,
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      cond,
    ),
    containerStatuses: arr(obj(pod.spec).containers).map((c) => ({
      name: String(c.name),
      ready: !started,
      started: true,
      restartCount: 0,
      image: String(c.image ?? ''),
      imageID: '',
      state: { running: { startedAt: now } },
    })),
  };
}

export const unschedulable = (now: string, nodes: number): JsonObject => ({
  phase: 'Pending',
  conditions: [
    {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: `0/${nodes} nodes are available: none is Ready, schedulable and matching the Pod's nodeSelector.`,
      lastTransitionTime: now,
    },
  ],
});

/** The annotation on the Pods the sandbox's workload controllers make (and its kubelet runs). */
export const SIMULATED = 'sandbox.npl-lb.io/simulated';

/** A Pod from a template, for `owner` (a `kind`), bound to `nodeName` when given. */
export function podFromTemplate(
  owner: JsonObject,
  kind: string,
  template: JsonObject,
  extraLabels: Record<string, string>,
  nodeName: string | undefined,
): JsonObject {
  const tm = meta(template);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      // As generateName makes it: the owner's name cut to 58 characters, then 5 random ones.
      name: `${`${name(owner)}-`.slice(0, 58)}${suffix()}`,
      labels: { ...obj(tm.labels), ...extraLabels },
      annotations: { ...obj(tm.annotations), [SIMULATED]: 'true' },
      ownerReferences: [ownerRef(kind, owner)],
    },
    spec: { ...obj(template.spec), ...(nodeName ? { nodeName } : {}) },
  };
}
