/**
 * The sandbox's EndpointSlice controller (optional: `npl-lb sandbox --endpoint-slices`, on in the
 * demo), keeping Services' EndpointSlices as kube-controller-manager does: for every Service with
 * a selector, one slice per address family of its Pods, labelled with the Service's name and this
 * controller, listing each selected Pod (its address, node, `targetRef`, and ready / serving /
 * terminating conditions) and the Service's ports resolved to the Pods' port numbers. Slices of
 * Services without a selector are their writers', never touched. Runs on the store's changes,
 * batched per namespace, writing through the registry as field manager
 * `endpointslice-controller.k8s.io`.
 */
import { isDeepStrictEqual } from 'node:util';
import { RESOURCE_TYPES, type ResourceType, storageKey } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';
import type { Registry, WriteOptions } from './registry.ts';
import { logPassFailure, NamespaceQueue } from './namespace-queue.ts';
import type { Store } from './store.ts';
import { isJsonObject } from './json.ts';

export const MANAGED_BY = 'endpointslice-controller.k8s.io';
const SERVICE_NAME = 'kubernetes.io/service-name';

const type = (kind: string): ResourceType => RESOURCE_TYPES.find((t) => t.kind === kind && !t.custom)!;
const obj = (v: Json | undefined): JsonObject => (isJsonObject(v) ? v : {});
const arr = (v: Json | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);

function selects(selector: JsonObject, labels: JsonObject): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** A Service port's target as a number on this Pod (a named port looked up in its containers). */
function targetPort(port: JsonObject, pod: JsonObject): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  for (const c of arr(obj(pod.spec).containers))
    for (const p of arr(c.ports)) if (p.name === target) return Number(p.containerPort);
  return undefined;
}

const familyOf = (ip: string): 'IPv4' | 'IPv6' => (ip.includes(':') ? 'IPv6' : 'IPv4');

/** The slices a Service should have, by name. */
function desiredSlices(svc: JsonObject, pods: JsonObject[]): Map<string, JsonObject> {
  const meta = obj(svc.metadata);
  const name = String(meta.name);
  const selector = obj(obj(svc.spec).selector);
  const selected = pods.filter((p) => selects(selector, obj(obj(p.metadata).labels)));
  const ports = arr(obj(svc.spec).ports);
  const out = new Map<string, JsonObject>();
  for (const family of ['IPv4', 'IPv6'] as const) {
    const endpoints: JsonObject[] = [];
    for (const p of selected) {
      const ip = arr(obj(p.status).podIPs)
        .map((x) => String(x.ip ?? ''))
        .find((x) => x && familyOf(x) === family);
      if (!ip) continue;
      const pm = obj(p.metadata);
      const ready = arr(obj(p.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True');
      const terminating = pm.deletionTimestamp !== undefined;
      endpoints.push({
        addresses: [ip],
        conditions: { ready: ready && !terminating, serving: ready, terminating },
        ...(obj(p.spec).nodeName ? { nodeName: obj(p.spec).nodeName! } : {}),
        targetRef: {
          kind: 'Pod',
          namespace: String(pm.namespace),
          name: String(pm.name),
          uid: String(pm.uid ?? ''),
        },
      });
    }
    if (endpoints.length === 0 && family === 'IPv6') continue;
    const first = selected[0];
    const slicePorts = ports.map((sp) => {
      const port = first ? targetPort(sp, first) : undefined;
      return {
        ...(sp.name ? { name: sp.name } : {}),
        protocol: sp.protocol ?? 'TCP',
        ...(port !== undefined ? { port } : {}),
      };
    });
    const sliceName = `${name}-${family === 'IPv4' ? 'ipv4' : 'ipv6'}`.slice(0, 63);
    out.set(sliceName, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: sliceName,
        namespace: String(meta.namespace),
        labels: { [SERVICE_NAME]: name, 'endpointslice.kubernetes.io/managed-by': MANAGED_BY },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name,
            uid: String(meta.uid ?? ''),
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: family,
      endpoints,
      ports: slicePorts,
    });
  }
  return out;
}

export class EndpointSliceController {
  private readonly queue = new NamespaceQueue(
    (ns) => this.reconcile(ns),
    (namespace, err) => logPassFailure(this.registry.log, 'EndpointSlice', namespace, err),
  );
  private unsubscribe: (() => void) | undefined;
  private readonly opts: WriteOptions = {
    dryRun: false,
    fieldValidation: 'Ignore',
    warnings: [],
    fieldManager: 'endpointslice-controller',
  };

  constructor(
    private readonly registry: Registry,
    private readonly store: Store,
  ) {}

  start(): void {
    const watched = new Set([storageKey(type('Service')), storageKey(type('Pod'))]);
    this.unsubscribe = this.store.subscribe((ev) => {
      if (watched.has(ev.storage) && ev.namespace) this.queue.add(ev.namespace);
    });
    this.queue.add(
      ...this.store
        .list(storageKey(type('Service')), undefined)
        .map((s) => String(obj(s.obj.metadata).namespace)),
    );
  }

  stop(): void {
    this.unsubscribe?.();
    this.queue.stop();
  }

  /** Makes the namespace's managed slices what its Services and Pods say. */
  reconcile(namespace: string): void {
    const sliceType = type('EndpointSlice');
    const services = this.store.list(storageKey(type('Service')), namespace).map((s) => s.obj);
    const pods = this.store.list(storageKey(type('Pod')), namespace).map((s) => s.obj);
    const want = new Map<string, JsonObject>();
    for (const svc of services)
      if (Object.keys(obj(obj(svc.spec).selector)).length > 0)
        for (const [n, s] of desiredSlices(svc, pods)) want.set(n, s);
    const have = this.store
      .list(storageKey(sliceType), namespace)
      .map((s) => s.obj)
      .filter((s) => obj(obj(s.metadata).labels)['endpointslice.kubernetes.io/managed-by'] === MANAGED_BY);
    for (const s of have) {
      const name = String(obj(s.metadata).name);
      const next = want.get(name);
      if (!next) this.registry.delete(sliceType, namespace, name, { dryRun: false });
      else if (!isDeepStrictEqual([s.endpoints ?? [], s.ports ?? []], [next.endpoints, next.ports]))
        this.registry.update(
          sliceType,
          namespace,
          name,
          { ...next, metadata: { ...obj(next.metadata), resourceVersion: obj(s.metadata).resourceVersion! } },
          undefined,
          this.opts,
        );
      want.delete(name);
    }
    for (const [, s] of want) this.registry.create(sliceType, namespace, s, this.opts);
  }
}
