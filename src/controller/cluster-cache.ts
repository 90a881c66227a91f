/**
 * The controller's view of the cluster: restartable informers on Services, Pods, Nodes, Ingresses,
 * IngressClasses, TLS Secrets, Namespaces, the EndpointSlices of Services without a selector and
 * the Gateway API kinds (once their CRDs are installed). Each object is validated with zod once,
 * as its informer delivers it (a malformed one is left out): building a ClusterView parses nothing.
 */
import { backendTlsPolicySchema } from '../kube/backend-tls-objects.ts';
import type { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import { type LoadBalancerParameters, loadBalancerParametersSchema } from '../kube/parameters-objects.ts';
import {
  apiServerSource,
  Informer,
  type InformerHandlers,
  type ListWatchSource,
  objectKey,
} from '../kube/informer.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  parseOr,
  podSchema,
  serviceSchema,
  tlsSecretSchema,
  endpointSliceSchema,
} from '../kube/objects.ts';
import { TLS_SECRET_TYPE } from '../source/certificates.ts';
import {
  gatewayClassSchema,
  gatewaySchema,
  BUNDLE_VERSION_ANNOTATION,
  type Crd,
  crdSchema,
  GATEWAY_CLASS_CRD,
  grpcRouteSchema,
  httpRouteSchema,
  l4RouteSchema,
  namespaceSchema,
  referenceGrantSchema,
} from '../kube/gateway-objects.ts';
import { RESOURCES } from '../kube/paths.ts';
import { type BackendPolicy, backendPolicySchema } from '../kube/policy-objects.ts';
import type { RawObject } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import type { EndpointSlice, Pod, Service } from '../kube/objects.ts';
import { SliceIndex } from '../source/endpoint-slices.ts';
import { podTerminated, selectorMatches } from '../kube/pod-ports.ts';
import type { ClusterView } from '../source/desired.ts';
import { type PodSelector, podLabelKey } from '../source/members.ts';
import { type CacheKind, GATEWAY_KINDS, SCHEMAS } from './cache-kinds.ts';

export { type CacheKind, GATEWAY_KINDS, type GatewayKind } from './cache-kinds.ts';

/** Only Secrets that can hold an Ingress's certificate are listed and kept (never any other). */
const SECRET_FIELD_SELECTOR = `type=${TLS_SECRET_TYPE}`;
/**
 * Only EndpointSlices someone other than the EndpointSlice controller writes (those of Services
 * without a selector): the controller's own, one or more per Service, are never listed.
 */
const SLICE_LABEL_SELECTOR = 'endpointslice.kubernetes.io/managed-by!=endpointslice-controller.k8s.io';

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

export class ClusterCache {
  readonly informers: Record<CacheKind, Informer>;
  private readonly parsed: {
    services: Parsed<ClusterView['services'][number]>;
    pods: Parsed<ClusterView['pods'][number]>;
    nodes: Parsed<ClusterView['nodes'][number]>;
    ingresses: Parsed<ClusterView['ingresses'][number]>;
    ingressClasses: Parsed<ClusterView['ingressClasses'][number]>;
    secrets: Parsed<NonNullable<ClusterView['secrets']>[number]>;
    namespaces: Parsed<NonNullable<ClusterView['namespaces']>[number]>;
    endpointSlices: Parsed<EndpointSlice>;
    gatewayCrd: Parsed<Crd>;
    gatewayClasses: Parsed<NonNullable<ClusterView['gatewayClasses']>[number]>;
    gateways: Parsed<NonNullable<ClusterView['gateways']>[number]>;
    httpRoutes: Parsed<NonNullable<ClusterView['httpRoutes']>[number]>;
    grpcRoutes: Parsed<NonNullable<ClusterView['grpcRoutes']>[number]>;
    tcpRoutes: Parsed<NonNullable<ClusterView['tcpRoutes']>[number]>;
    udpRoutes: Parsed<NonNullable<ClusterView['udpRoutes']>[number]>;
    tlsRoutes: Parsed<NonNullable<ClusterView['tlsRoutes']>[number]>;
    referenceGrants: Parsed<NonNullable<ClusterView['referenceGrants']>[number]>;
    backendTlsPolicies: Parsed<NonNullable<ClusterView['backendTlsPolicies']>[number]>;
    backendPolicies: Parsed<BackendPolicy>;
    loadBalancerParameters: Parsed<LoadBalancerParameters>;
  };

  private readonly podIndex = new LivePodIndex();
  private readonly serviceIndex = new ServiceSelectorIndex();
  private readonly sliceIndex = new SliceIndex();

  private readonly log: Logger;

  constructor(kc: KubeConfig, logger: Logger, sources?: Partial<Record<CacheKind, ListWatchSource>>) {
    this.log = logger;
    const make = (kind: CacheKind) =>
      new Informer({
        name: kind,
        logger,
        transform: validating(SCHEMAS[kind]),
        // Kinds of CRDs that may not be installed (yet).
        optional:
          kind === 'backendPolicies' ||
          kind === 'loadBalancerParameters' ||
          (GATEWAY_KINDS as readonly string[]).includes(kind),
        source:
          sources?.[kind] ??
          apiServerSource({
            kubeConfig: kc,
            resource: RESOURCES[kind === 'gatewayCrd' ? 'customResourceDefinitions' : kind],
            ...(kind === 'secrets' ? { fieldSelector: SECRET_FIELD_SELECTOR } : {}),
            ...(kind === 'endpointSlices' ? { labelSelector: SLICE_LABEL_SELECTOR } : {}),
            // The GatewayClass CRD alone: the Gateway API release installed.
            ...(kind === 'gatewayCrd' ? { fieldSelector: `metadata.name=${GATEWAY_CLASS_CRD}` } : {}),
          }),
      });
    this.informers = {
      services: make('services'),
      pods: make('pods'),
      nodes: make('nodes'),
      ingresses: make('ingresses'),
      ingressClasses: make('ingressClasses'),
      secrets: make('secrets'),
      namespaces: make('namespaces'),
      endpointSlices: make('endpointSlices'),
      gatewayCrd: make('gatewayCrd'),
      gatewayClasses: make('gatewayClasses'),
      gateways: make('gateways'),
      httpRoutes: make('httpRoutes'),
      grpcRoutes: make('grpcRoutes'),
      tcpRoutes: make('tcpRoutes'),
      udpRoutes: make('udpRoutes'),
      tlsRoutes: make('tlsRoutes'),
      referenceGrants: make('referenceGrants'),
      backendTlsPolicies: make('backendTlsPolicies'),
      backendPolicies: make('backendPolicies'),
      loadBalancerParameters: make('loadBalancerParameters'),
    };
    // Registered before any other handler, so handlers that read the view see the new object.
    const i = this.informers;
    this.parsed = {
      services: new Parsed(i.services, serviceSchema, (key, svc) => this.serviceIndex.put(key, svc)),
      pods: new Parsed(i.pods, podSchema, (key, pod) => this.podIndex.put(key, pod)),
      nodes: new Parsed(i.nodes, nodeSchema),
      ingresses: new Parsed(i.ingresses, ingressSchema),
      ingressClasses: new Parsed(i.ingressClasses, ingressClassSchema),
      secrets: new Parsed(i.secrets, tlsSecretSchema),
      namespaces: new Parsed(i.namespaces, namespaceSchema),
      endpointSlices: new Parsed(i.endpointSlices, endpointSliceSchema, (key, sl) =>
        this.sliceIndex.put(key, sl),
      ),
      gatewayCrd: new Parsed(i.gatewayCrd, crdSchema),
      gatewayClasses: new Parsed(i.gatewayClasses, gatewayClassSchema),
      gateways: new Parsed(i.gateways, gatewaySchema),
      httpRoutes: new Parsed(i.httpRoutes, httpRouteSchema),
      grpcRoutes: new Parsed(i.grpcRoutes, grpcRouteSchema),
      tcpRoutes: new Parsed(i.tcpRoutes, l4RouteSchema),
      udpRoutes: new Parsed(i.udpRoutes, l4RouteSchema),
      tlsRoutes: new Parsed(i.tlsRoutes, l4RouteSchema),
      referenceGrants: new Parsed(i.referenceGrants, referenceGrantSchema),
      backendTlsPolicies: new Parsed(i.backendTlsPolicies, backendTlsPolicySchema),
      backendPolicies: new Parsed(i.backendPolicies, backendPolicySchema),
      loadBalancerParameters: new Parsed(i.loadBalancerParameters, loadBalancerParametersSchema),
    };
  }

  on(kind: CacheKind, h: InformerHandlers): void {
    this.informers[kind].on(h);
  }

  /** Objects held per kind, for progress and the synced log line. */
  counts(): Record<CacheKind, number> {
    const p = this.parsed;
    return {
      services: p.services.items.size,
      pods: p.pods.items.size,
      nodes: p.nodes.items.size,
      ingresses: p.ingresses.items.size,
      ingressClasses: p.ingressClasses.items.size,
      secrets: p.secrets.items.size,
      namespaces: p.namespaces.items.size,
      endpointSlices: p.endpointSlices.items.size,
      gatewayCrd: p.gatewayCrd.items.size,
      gatewayClasses: p.gatewayClasses.items.size,
      gateways: p.gateways.items.size,
      httpRoutes: p.httpRoutes.items.size,
      grpcRoutes: p.grpcRoutes.items.size,
      tcpRoutes: p.tcpRoutes.items.size,
      udpRoutes: p.udpRoutes.items.size,
      tlsRoutes: p.tlsRoutes.items.size,
      referenceGrants: p.referenceGrants.items.size,
      backendTlsPolicies: p.backendTlsPolicies.items.size,
      backendPolicies: p.backendPolicies.items.size,
      loadBalancerParameters: p.loadBalancerParameters.items.size,
    };
  }

  /** Starts every informer and waits for all to list; a long first sync logs progress every 5 s. */
  async start(progressMs = 5000): Promise<void> {
    const started = Date.now();
    for (const inf of Object.values(this.informers)) inf.start();
    const progress = setInterval(
      () =>
        this.log.info({ ...this.counts(), elapsedMs: Date.now() - started }, 'waiting for caches to sync'),
      progressMs,
    );
    progress.unref();
    try {
      await Promise.all(Object.values(this.informers).map((i) => i.waitForSync()));
    } finally {
      clearInterval(progress);
    }
    this.log.info({ ...this.counts(), tookMs: Date.now() - started }, 'caches synced');
  }

  async stop(): Promise<void> {
    await Promise.all(Object.values(this.informers).map((i) => i.stop()));
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

  /** A snapshot of the parsed objects; the Pod list is only copied if someone reads it. */
  view(): ClusterView {
    const p = this.parsed;
    return {
      services: p.services.list(),
      get pods() {
        return p.pods.list();
      },
      nodes: p.nodes.list(),
      ingresses: p.ingresses.list(),
      ingressClasses: p.ingressClasses.list(),
      secrets: p.secrets.list(),
      namespaces: p.namespaces.list(),
      gatewayApiVersion: p.gatewayCrd.list()[0]?.metadata.annotations[BUNDLE_VERSION_ANNOTATION],
      gatewayApiInstalled: p.gatewayCrd.list().length > 0,
      gatewayClasses: p.gatewayClasses.list(),
      gateways: p.gateways.list(),
      httpRoutes: p.httpRoutes.list(),
      grpcRoutes: p.grpcRoutes.list(),
      tcpRoutes: p.tcpRoutes.list(),
      udpRoutes: p.udpRoutes.list(),
      tlsRoutes: p.tlsRoutes.list(),
      referenceGrants: p.referenceGrants.list(),
      backendTlsPolicies: p.backendTlsPolicies.list(),
      backendPolicies: p.backendPolicies.list(),
      loadBalancerParameters: p.loadBalancerParameters.list(),
      podIndex: this.podIndex,
      endpointSlices: p.endpointSlices.list(),
      sliceIndex: this.sliceIndex,
      serviceByKey: (key) => p.services.items.get(key),
      ingressByKey: (key) => p.ingresses.items.get(key),
      podByKey: (key) => p.pods.items.get(key),
    };
  }
}
