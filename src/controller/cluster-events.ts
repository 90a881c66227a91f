/**
 * What each cluster event means for the controller's work: which Services' pools may have changed
 * (a Service, the Pods it selects or its EndpointSlices name, a Node's addresses), when anything
 * may have (Ingresses, classes, Namespaces, the Gateway API kinds, Secrets, a Node in NodePort
 * mode or in maintenance), and which keys the work queue gets. Every event asks for a pass; the
 * pass scheduler coalesces them.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { NPL_POD_ANNOTATION } from '../kube/annotations.ts';
import { objectKey } from '../kube/informer.ts';
import { SERVICE_NAME_LABEL } from '../kube/objects.ts';
import type { RawObject } from '../kube/raw-client.ts';
import { type ClusterCache, ROUTE_KINDS } from './cluster-cache.ts';

/** Where the events go: the controller's change set, work queue and pass scheduler. */
export interface ClusterEventSink {
  serviceType: ControllerConfig['serviceType'];
  /** Services (namespace/name) whose pools may have changed since the last pass. */
  changed: Set<string>;
  /** Anything may have changed: the next pass builds everything. */
  everything(): void;
  /**
   * Whether the next pass builds everything anyway (a cold start, a relist, a failed pass): what
   * changed need not be named until it has started.
   */
  all(): boolean;
  enqueue(key: string): void;
  /** Asks for a load-balancer pass. */
  pass(): void;
  /**
   * When each Pod's NodePortLocal annotation was last seen changing on a Pod already known (for the
   * latency metric: a listed Pod's annotation, at a cold start, is not a change).
   */
  annotationSeen: Map<string, number>;
  /** Whether a Node's change moves it in maintenance (node-maintenance.ts). */
  nodeMoved(before: RawObject | undefined, after: RawObject | undefined): boolean;
}

/** The work-queue key of the auto-annotation candidates (one per burst of Ingress events). */
export const CANDIDATES_KEY = 'annotation-candidates';

const meta = (o: RawObject | undefined) =>
  (o?.metadata ?? {}) as {
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
const labels = (o: RawObject | undefined): Record<string, string> => meta(o).labels ?? {};
const nplText = (o: RawObject) => (meta(o).annotations ?? {})[NPL_POD_ANNOTATION];
/** A Node's addresses, as one comparable string. */
const addresses = (o: RawObject | undefined) =>
  JSON.stringify((o?.status as { addresses?: unknown } | undefined)?.addresses ?? null);

/** What of the cluster cache the events are followed through. */
export type EventSource = Pick<ClusterCache, 'on' | 'servicesSelecting' | 'servicesNaming'>;

export function followCluster(cache: EventSource, s: ClusterEventSink): void {
  const svc = (o: RawObject) => {
    s.enqueue(`svc/${objectKey(o)}`);
    s.changed.add(objectKey(o));
    s.pass();
  };
  cache.on('services', { add: svc, update: (a, b) => (svc(a), svc(b)), delete: svc });

  /** The Services that select a Pod before or after a change, or name it, have pools to recompute. */
  const touch = (before: RawObject | undefined, after: RawObject) => {
    const ns = String(meta(after).namespace ?? '');
    if (before) cache.servicesSelecting(ns, labels(before), s.changed);
    cache.servicesSelecting(ns, labels(after), s.changed);
    cache.servicesNaming(objectKey(after), s.changed);
  };
  // A cold start lists every Pod: while the next pass builds everything, none is looked up.
  const pod = (before: RawObject | undefined, after: RawObject) => {
    if (before && nplText(after) !== nplText(before)) s.annotationSeen.set(objectKey(after), Date.now());
    if (!s.all()) touch(before, after);
    s.pass();
  };
  cache.on('pods', {
    add: (o) => pod(undefined, o),
    update: pod,
    delete: (o) => {
      if (!s.all()) touch(undefined, o);
      s.pass();
    },
  });

  // An EndpointSlice of a Service without a selector: that Service's Pods changed.
  const slice = (o: RawObject) => {
    const name = labels(o)[SERVICE_NAME_LABEL];
    if (name) s.changed.add(`${String(meta(o).namespace ?? '')}/${name}`);
    s.pass();
  };
  cache.on('endpointSlices', { add: slice, update: (a, b) => (slice(a), slice(b)), delete: slice });

  // Nodes are members in NodePort mode: any change may touch every pool. In NodePortLocal mode a
  // member's nodeIP must be an address of its Pod's Node: a Node that comes, goes or changes its
  // addresses may change which entries count.
  const node = (before: RawObject | undefined, after: RawObject | undefined) => {
    if (s.serviceType === 'NodePort') s.everything();
    else if (s.serviceType === 'NodePortLocal' && addresses(before) !== addresses(after)) s.everything();
    if (s.nodeMoved(before, after)) s.everything();
    s.pass();
  };
  cache.on('nodes', {
    add: (o) => node(undefined, o),
    update: (a, b) => node(a, b),
    delete: (o) => node(o, undefined),
  });

  // A BackendPolicy may change the pools of any Service it names (or named).
  const policy = () => {
    s.everything();
    s.pass();
  };
  cache.on('backendPolicies', { add: policy, update: policy, delete: policy });
  // LoadBalancerParameters may move any class's virtual services.
  cache.on('loadBalancerParameters', { add: policy, update: policy, delete: policy });

  for (const kind of ROUTE_KINDS) {
    const h = () => {
      // Once per burst of Ingress events, not once per event (a cold start lists them all).
      s.enqueue(CANDIDATES_KEY);
      s.everything();
      s.pass();
    };
    cache.on(kind, { add: h, update: h, delete: h });
  }
  // A certificate comes, goes or rotates: the virtual services that serve it are built again.
  const secret = () => {
    s.everything();
    s.pass();
  };
  cache.on('secrets', { add: secret, update: secret, delete: secret });
}
