/**
 * The controller's view of the cluster: restartable informers on Services, Pods, Nodes, Ingresses,
 * IngressClasses, TLS Secrets, Namespaces, the EndpointSlices of Services without a selector and
 * the Gateway API kinds (once their CRDs are installed). Each object is validated with zod once,
 * as its informer delivers it (a malformed one is left out): building a ClusterView parses nothing.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import {
  apiServerSource,
  Informer,
  type InformerHandlers,
  type ListWatchSource,
  objectKey,
} from '../kube/informer.ts';
import { parseOr, type Pod, type Service } from '../kube/objects.ts';
import { BUNDLE_VERSION_ANNOTATION } from '../kube/gateway-objects.ts';
import { RESOURCES } from '../kube/paths.ts';
import type { RawObject } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import { SliceIndex } from '../source/endpoint-slices.ts';
import { podTerminated, selectorMatches } from '../kube/pod-ports.ts';
import type { ClusterView } from '../source/desired.ts';
import { type PodSelector, podLabelKey } from '../source/members.ts';
import { CACHE_KINDS, type CacheKind, type KindObject, KINDS } from './cache-kinds.ts';

export { type CacheKind, ROUTE_KINDS } from './cache-kinds.ts';

/** A row of the table, its optional fields visible. */
type KindRow = (typeof KINDS)[CacheKind] & {
  optional?: true;
  fieldSelector?: string;
  labelSelector?: string;
};

/** Objects the informers' transform validated: the cache keeps them, not the raw ones. */
const validated = new WeakSet<object>();

/** The informer's transform for a kind: its validated object (a raw one that fails stays raw). */
function validating<T>(schema: z.ZodType<T>): (o: RawObject) => RawObject {
  return (o) => {
    const v = parseOr(schema, o);
    if (v === undefined || typeof v !== 'object' || v === null) return o;
    validated.add(v);
    return v as RawObject;
  };
}

/** Parsed objects of one kind, kept in step with its informer. */
class Parsed<T> {
  readonly items = new Map<string, T>();
  /** The list handed out last, kept until the next change so unchanged kinds keep their identity. */
  private snapshot: T[] | undefined;
  constructor(
    inf: Informer,
    private readonly schema: z.ZodType<T>,
    onChange?: (key: string, value: T | undefined) => void,
  ) {
    const put = (o: RawObject) => {
      this.snapshot = undefined;
      const key = objectKey(o);
      const v = validated.has(o) ? (o as T) : parseOr(this.schema, o);
      if (v === undefined) this.items.delete(key);
      else this.items.set(key, v);
      onChange?.(key, v);
    };
    const remove = (o: RawObject) => {
      this.snapshot = undefined;
      this.items.delete(objectKey(o));
      onChange?.(objectKey(o), undefined);
    };
    inf.on({ add: put, update: (_, n) => put(n), delete: remove });
  }
  /** The objects, as one array that stays the same object while nothing of this kind changes. */
  list(): T[] {
    this.snapshot ??= [...this.items.values()];
    return this.snapshot;
  }
}

/**
 * Services by namespace and the first pair of their selector, so a Pod event finds the Services
 * that select it without walking all of them. A Service with an empty selector selects no Pod.
 */
class ServiceSelectorIndex {
  private readonly byLabel = new Map<string, Map<string, Service>>();
  private readonly slot = new Map<string, string>();

  put(key: string, svc: Service | undefined): void {
    const old = this.slot.get(key);
    if (old !== undefined) {
      this.byLabel.get(old)?.delete(key);
      this.slot.delete(key);
    }
    const first = svc?.spec.selector ? Object.entries(svc.spec.selector)[0] : undefined;
    if (!svc || !first) return;
    const lk = podLabelKey(svc.metadata.namespace, first[0], first[1]);
    let set = this.byLabel.get(lk);
    if (!set) {
      set = new Map();
      this.byLabel.set(lk, set);
    }
    set.set(key, svc);
    this.slot.set(key, lk);
  }

  /** Keys (namespace/name) of the Services whose selector matches these labels. */
  selecting(namespace: string, labels: Record<string, string>, out: Set<string>): void {
    for (const [k, v] of Object.entries(labels)) {
      const candidates = this.byLabel.get(podLabelKey(namespace, k, v));
      if (!candidates) continue;
      for (const [key, svc] of candidates) if (selectorMatches(svc.spec.selector, labels)) out.add(key);
    }
  }
}

/** Pods by namespace and label, kept in step with the Pod informer (so no pass has to index them). */
class LivePodIndex implements PodSelector {
  private readonly byLabel = new Map<string, Map<string, Pod>>();
  private readonly current = new Map<string, Pod>();

  put(key: string, pod: Pod | undefined): void {
    const old = this.current.get(key);
    if (old) {
      for (const [k, v] of Object.entries(old.metadata.labels))
        this.byLabel.get(podLabelKey(old.metadata.namespace, k, v))?.delete(key);
      this.current.delete(key);
    }
    if (!pod || podTerminated(pod)) return;
    this.current.set(key, pod);
    for (const [k, v] of Object.entries(pod.metadata.labels)) {
      const lk = podLabelKey(pod.metadata.namespace, k, v);
      let set = this.byLabel.get(lk);
      if (!set) {
        set = new Map();
        this.byLabel.set(lk, set);
      }
      set.set(key, pod);
    }
  }

  select(svc: Service): Pod[] {
    const selector = svc.spec.selector;
    const first = selector ? Object.entries(selector)[0] : undefined;
    if (!first) return [];
    const candidates = this.byLabel.get(podLabelKey(svc.metadata.namespace, first[0], first[1]));
    return candidates
      ? [...candidates.values()].filter((p) => selectorMatches(selector, p.metadata.labels))
      : [];
  }
}

type ParsedKinds = { [K in CacheKind]: Parsed<KindObject<K>> };

const mapKinds = <T>(f: (k: CacheKind) => T): Record<CacheKind, T> =>
  Object.fromEntries(CACHE_KINDS.map((k) => [k, f(k)])) as Record<CacheKind, T>;

export class ClusterCache {
  readonly informers: Record<CacheKind, Informer>;
  private readonly parsed: ParsedKinds;

  private readonly podIndex = new LivePodIndex();
  /** The Pods with a readiness gate (any), apart: the gate writer looks at them after every pass. */
  private readonly gated = new Map<string, Pod>();
  private readonly serviceIndex = new ServiceSelectorIndex();
  private readonly sliceIndex = new SliceIndex();

  private readonly log: Logger;

  constructor(kc: KubeConfig, logger: Logger, sources?: Partial<Record<CacheKind, ListWatchSource>>) {
    this.log = logger;
    this.informers = mapKinds((kind) => {
      const row: KindRow = KINDS[kind];
      return new Informer({
        name: kind,
        logger,
        transform: validating(row.schema),
        // Kinds of CRDs that may not be installed (yet).
        optional: row.optional === true,
        source:
          sources?.[kind] ??
          apiServerSource({
            kubeConfig: kc,
            resource: RESOURCES[row.resource],
            ...(row.fieldSelector ? { fieldSelector: row.fieldSelector } : {}),
            ...(row.labelSelector ? { labelSelector: row.labelSelector } : {}),
          }),
      });
    });
    // Registered before any other handler, so handlers that read the view see the new object;
    // three kinds keep an index beside their list.
    const indexes: { [K in CacheKind]?: (key: string, v: KindObject<K> | undefined) => void } = {
      services: (key, svc) => this.serviceIndex.put(key, svc),
      pods: (key, pod) => {
        this.podIndex.put(key, pod);
        if (pod && pod.spec.readinessGates.length > 0) this.gated.set(key, pod);
        else this.gated.delete(key);
      },
      endpointSlices: (key, sl) => this.sliceIndex.put(key, sl),
    };
    this.parsed = mapKinds(
      (kind) =>
        new Parsed<unknown>(
          this.informers[kind],
          KINDS[kind].schema as z.ZodType<unknown>,
          indexes[kind] as ((key: string, v: unknown) => void) | undefined,
        ),
    ) as ParsedKinds;
  }

  on(kind: CacheKind, h: InformerHandlers): void {
    this.informers[kind].on(h);
  }

  /** Objects held per kind, for progress and the synced log line. */
  counts(): Record<CacheKind, number> {
    return mapKinds((k) => this.parsed[k].items.size);
  }

  /** Starts every informer and waits for all to list; a long first sync logs progress every 5 s. */
  async start(progressMs = 5000): Promise<void> {
    const started = performance.now();
    const since = () => Math.round(performance.now() - started);
    for (const inf of Object.values(this.informers)) inf.start();
    const progress = setInterval(
      () => this.log.info({ ...this.counts(), elapsedMs: since() }, 'waiting for caches to sync'),
      progressMs,
    );
    progress.unref();
    try {
      await Promise.all(Object.values(this.informers).map((i) => i.waitForSync()));
    } finally {
      clearInterval(progress);
    }
    this.log.info({ ...this.counts(), tookMs: since() }, 'caches synced');
  }

  async stop(): Promise<void> {
    await Promise.all(Object.values(this.informers).map((i) => i.stop()));
  }

  /**
   * The Pods that carry a readiness gate, without a copy or a walk of every Pod: what the gate
   * writer reads after each pass and health read costs what is gated, not the cluster's size.
   */
  gatedPods(): IterableIterator<Pod> {
    return this.gated.values();
  }

  /** The parsed Services alone (event handlers need them without building a whole view). */
  services(): ClusterView['services'] {
    return this.parsed.services.list();
  }

  /** Adds to `out` the keys of the Services that select a Pod with these labels. */
  servicesSelecting(namespace: string, labels: Record<string, string>, out: Set<string>): void {
    this.serviceIndex.selecting(namespace, labels, out);
  }

  /** Adds to `out` the keys of the Services (without a selector) whose EndpointSlices name a Pod. */
  servicesNaming(pod: string, out: Set<string>): void {
    this.sliceIndex.servicesOf(pod, out);
  }

  /**
   * A snapshot of the parsed objects: every kind's list under its own name (the Pod list only
   * copied if someone reads it), the CRD's release, and lookups by key.
   */
  view(): ClusterView {
    const p = this.parsed;
    const lists = mapKinds((k) => (k === 'pods' || k === 'gatewayCrd' ? undefined : p[k].list()));
    const crd = p.gatewayCrd.list()[0];
    return {
      ...(lists as unknown as Omit<ClusterView, 'pods'>),
      get pods() {
        return p.pods.list();
      },
      gatewayApiVersion: crd?.metadata.annotations[BUNDLE_VERSION_ANNOTATION],
      gatewayApiInstalled: crd !== undefined,
      podIndex: this.podIndex,
      sliceIndex: this.sliceIndex,
      serviceByKey: (key) => p.services.items.get(key),
      ingressByKey: (key) => p.ingresses.items.get(key),
      podByKey: (key) => p.pods.items.get(key),
    };
  }
}
