/**
 * Defaulting and the per-kind create/update rules of the real registry strategies: what status a
 * new object starts with, Service cluster IPs and node ports, Pod spec defaults and immutability.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceType } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';
import type { Allocations } from './allocator.ts';
import type { StatusCause } from './status.ts';
import { forbidden, validateLoadBalancerStatus } from './validate.ts';

export type { Allocations } from './allocator.ts';

const asObject = (v: Json | undefined): JsonObject | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : undefined;
const asArray = (v: Json | undefined): Json[] => (Array.isArray(v) ? v : []);

function defaultPod(obj: JsonObject): void {
  const spec = asObject(obj.spec) ?? {};
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  for (const c0 of [...asArray(spec.containers), ...asArray(spec.initContainers)]) {
    const c = asObject(c0);
    if (!c) continue;
    const image = typeof c.image === 'string' ? c.image : '';
    const tag = image.includes('@') ? 'digest' : (image.split('/').pop()?.split(':')[1] ?? 'latest');
    c.imagePullPolicy ??= tag === 'latest' ? 'Always' : 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.resources ??= {};
    for (const p of asArray(c.ports)) {
      const port = asObject(p);
      if (port) port.protocol ??= 'TCP';
    }
  }
  obj.spec = spec;
}

/** A rolling update's knobs, defaulted as SetDefaults_Deployment / _DaemonSet (apps/v1) do. */
function defaultRollingUpdate(strategy: JsonObject, maxUnavailable: Json, maxSurge: Json): void {
  strategy.type ??= 'RollingUpdate';
  if (strategy.type !== 'RollingUpdate') return;
  const ru = asObject(strategy.rollingUpdate) ?? {};
  ru.maxUnavailable ??= maxUnavailable;
  ru.maxSurge ??= maxSurge;
  strategy.rollingUpdate = ru;
}

/** apps/v1 workloads: replicas, update strategy, history, and their Pod template's spec. */
function defaultWorkload(kind: string, obj: JsonObject): void {
  const spec = asObject(obj.spec);
  if (!spec) return;
  const template = asObject(spec.template);
  if (template && asObject(template.spec)) defaultPod(template);
  if (kind !== 'DaemonSet') spec.replicas ??= 1;
  if (kind === 'Deployment') {
    const strategy = asObject(spec.strategy) ?? {};
    defaultRollingUpdate(strategy, '25%', '25%');
    spec.strategy = strategy;
    spec.revisionHistoryLimit ??= 10;
    spec.progressDeadlineSeconds ??= 600;
  } else if (kind === 'DaemonSet') {
    const strategy = asObject(spec.updateStrategy) ?? {};
    defaultRollingUpdate(strategy, 1, 0);
    spec.updateStrategy = strategy;
    spec.revisionHistoryLimit ??= 10;
  }
}

/** Defaults a Service; returns the causes of a 422 (allocation failures, ports out of range). */
function defaultService(obj: JsonObject, old: JsonObject | undefined, alloc: Allocations): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const oldSpec = asObject(old?.spec);
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  const type = spec.type;
  if (type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    if (spec.clusterIP === undefined && oldSpec?.clusterIP !== undefined) spec.clusterIP = oldSpec.clusterIP;
    if (spec.clusterIP === undefined || spec.clusterIP === '') {
      const ip = alloc.clusterIP();
      if (typeof ip === 'string') spec.clusterIP = ip;
      else causes.push(ip.cause);
    }
    if (spec.clusterIP !== undefined) spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= oldSpec?.ipFamilies ?? ['IPv4'];
    spec.ipFamilyPolicy ??= oldSpec?.ipFamilyPolicy ?? 'SingleStack';
  }
  const withNodePorts =
    type === 'NodePort' || (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
  if (type === 'NodePort' || type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  const oldPorts = asArray(oldSpec?.ports).map(asObject);
  const mine = new Set(oldPorts.map((o) => Number(o?.nodePort ?? 0)).filter((n) => n > 0));
  const taken = new Set<number>();
  const { start, end } = alloc.nodePortRange;
  asArray(spec.ports).forEach((p0, i) => {
    const p = asObject(p0);
    if (!p) return;
    p.protocol ??= 'TCP';
    p.targetPort ??= p.port ?? 0;
    if (!withNodePorts) {
      delete p.nodePort;
      return;
    }
    const field = `spec.ports[${i}].nodePort`;
    if (typeof p.nodePort === 'number' && p.nodePort !== 0) {
      // Asked for: in range, and not another Service's (this one may keep its own).
      if (p.nodePort < start || p.nodePort > end) {
        causes.push({
          reason: 'FieldValueInvalid',
          field,
          message: `Invalid value: ${p.nodePort}: provided port is not in the valid range. The range of valid ports is ${start}-${end}`,
        });
      } else if (!mine.has(p.nodePort) && !alloc.nodePortFree(p.nodePort)) {
        causes.push({
          reason: 'FieldValueInvalid',
          field,
          message: `Invalid value: ${p.nodePort}: provided port is already allocated`,
        });
      }
      taken.add(p.nodePort);
      return;
    }
    const prev = oldPorts.find((o) => o?.port === p.port && (o?.protocol ?? 'TCP') === p.protocol);
    if (typeof prev?.nodePort === 'number') p.nodePort = prev.nodePort;
    else {
      const got = alloc.nodePort(taken, field);
      if (typeof got === 'number') p.nodePort = got;
      else causes.push(got.cause);
    }
    if (typeof p.nodePort === 'number') taken.add(p.nodePort);
  });
  obj.spec = spec;
  return causes;
}

/**
 * Fills defaults in place, after a create or any update; `old` is the stored object on update.
 * Returns the causes of a 422 (a Service whose cluster IP or node port cannot be allocated).
 */
export function applyDefaults(
  t: ResourceType,
  obj: JsonObject,
  old: JsonObject | undefined,
  alloc: Allocations,
): StatusCause[] {
  if (t.group === 'apps' && !t.custom) defaultWorkload(t.kind, obj);
  if (t.group !== '') return [];
  if (t.kind === 'Pod') defaultPod(obj);
  if (t.kind === 'Service') {
    defaultLoadBalancerStatus(obj);
    return defaultService(obj, old, alloc);
  }
  return [];
}

/** An ingress point with an ip and no ipMode gets VIP, as the API server defaults it. */
function defaultLoadBalancerStatus(obj: JsonObject): void {
  const ingress = asObject(asObject(obj.status)?.loadBalancer)?.ingress;
  for (const e of asArray(ingress)) {
    const o = asObject(e);
    if (o && typeof o.ip === 'string' && o.ip !== '' && o.ipMode === undefined) o.ipMode = 'VIP';
  }
}

/** The status a new object starts with (PrepareForCreate). */
export function initialStatus(t: ResourceType, obj: JsonObject): Json | undefined {
  if (!t.hasStatus || t.keepsStatusOnCreate) return obj.status;
  if (t.group === '' && t.kind === 'Pod') return { phase: 'Pending', qosClass: 'BestEffort' };
  if (t.group === '' && t.kind === 'Namespace') return { phase: 'Active' };
  if (t.kind === 'Service' || t.kind === 'Ingress') return { loadBalancer: {} };
  return undefined;
}

const POD_MUTABLE_SPEC = ['activeDeadlineSeconds', 'tolerations', 'terminationGracePeriodSeconds'];

function withoutImages(spec: JsonObject): JsonObject {
  const copy = structuredClone(spec);
  for (const key of ['containers', 'initContainers']) {
    for (const c of asArray(copy[key])) {
      const o = asObject(c);
      if (o) delete o.image;
    }
  }
  for (const k of POD_MUTABLE_SPEC) delete copy[k];
  return copy;
}

/** Update rules the strategies enforce beyond validation (immutable fields). */
export function validateUpdate(t: ResourceType, next: JsonObject, old: JsonObject): StatusCause[] {
  if (t.group !== '') return [];
  if (t.kind === 'Pod') {
    const a = asObject(next.spec) ?? {};
    const b = asObject(old.spec) ?? {};
    if (!isDeepStrictEqual(withoutImages(a), withoutImages(b))) {
      return [
        forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
        ),
      ];
    }
  }
  if (t.kind === 'Service') {
    const status = validateLoadBalancerStatus(asObject(next.status));
    if (status.length > 0) return status;
    const a = asObject(next.spec)?.clusterIP;
    const b = asObject(old.spec)?.clusterIP;
    if (b !== undefined && a !== b && asObject(next.spec)?.type !== 'ExternalName') {
      return [
        {
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(a)}: field is immutable`,
          field: 'spec.clusterIPs[0]',
        },
      ];
    }
  }
  return [];
}
