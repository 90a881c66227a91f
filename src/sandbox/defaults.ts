/**
 * Defaulting and the per-kind create/update rules of the real registry strategies: what status a
 * new object starts with, Service cluster IPs and node ports, Pod spec defaults and immutability.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceType } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';
import type { StatusCause } from './status.ts';
import { forbidden } from './validate.ts';

export interface Allocations {
  usedClusterIPs(): Set<string>;
  usedNodePorts(): Set<number>;
}

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

function defaultService(obj: JsonObject, old: JsonObject | undefined, alloc: Allocations): void {
  const spec = asObject(obj.spec) ?? {};
  const oldSpec = asObject(old?.spec);
  spec.type ??= 'ClusterIP';
  spec.sessionAffinity ??= 'None';
  const type = spec.type;
  if (type !== 'ExternalName') {
    spec.internalTrafficPolicy ??= 'Cluster';
    if (spec.clusterIP === undefined && oldSpec?.clusterIP !== undefined) spec.clusterIP = oldSpec.clusterIP;
    if (spec.clusterIP === undefined || spec.clusterIP === '')
      spec.clusterIP = nextClusterIP(alloc.usedClusterIPs());
    spec.clusterIPs ??= [spec.clusterIP];
    spec.ipFamilies ??= oldSpec?.ipFamilies ?? ['IPv4'];
    spec.ipFamilyPolicy ??= oldSpec?.ipFamilyPolicy ?? 'SingleStack';
  }
  const withNodePorts =
    type === 'NodePort' || (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
  if (type === 'NodePort' || type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  const oldPorts = asArray(oldSpec?.ports).map(asObject);
  const used = withNodePorts ? alloc.usedNodePorts() : new Set<number>();
  for (const p0 of asArray(spec.ports)) {
    const p = asObject(p0);
    if (!p) continue;
    p.protocol ??= 'TCP';
    p.targetPort ??= p.port ?? 0;
    if (!withNodePorts) {
      delete p.nodePort;
      continue;
    }
    if (p.nodePort === undefined) {
      const prev = oldPorts.find((o) => o?.port === p.port && (o?.protocol ?? 'TCP') === p.protocol);
      if (typeof prev?.nodePort === 'number') p.nodePort = prev.nodePort;
      else {
        p.nodePort = nextNodePort(used);
        used.add(p.nodePort);
      }
    }
  }
  obj.spec = spec;
}

function nextClusterIP(used: Set<string>): string {
  for (let i = 10; i < 1 << 20; i++) {
    const ip = `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
    if ((i & 255) !== 0 && (i & 255) !== 255 && !used.has(ip)) return ip;
  }
  throw new Error('service cluster IP range exhausted');
}

function nextNodePort(used: Set<number>): number {
  for (let p = 30000; p <= 32767; p++) if (!used.has(p)) return p;
  throw new Error('service node port range exhausted');
}

/** Fills defaults in place, after a create or any update; `old` is the stored object on update. */
export function applyDefaults(
  t: ResourceType,
  obj: JsonObject,
  old: JsonObject | undefined,
  alloc: Allocations,
): void {
  if (t.group !== '') return;
  if (t.kind === 'Pod') defaultPod(obj);
  if (t.kind === 'Service') defaultService(obj, old, alloc);
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
