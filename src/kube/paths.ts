/**
 * REST paths of Kubernetes resources.
 */
import { GATEWAY_GROUP, ROUTE_KEYS, GATEWAY_ROUTES, type RouteKey } from './gateway-objects.ts';
export interface ResourceRef {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Plural resource name, e.g. `pods`. */
  resource: string;
  /** Kind, e.g. `Pod`. */
  kind: string;
}

export function collectionPath(ref: ResourceRef, namespace?: string): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${ref.resource}`;
}

export function apiVersion(ref: Pick<ResourceRef, 'group' | 'version'>): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/** The resource of each route kind of GATEWAY_ROUTES (all `gateway.networking.k8s.io/v1`). */
function routeResources(): { [K in RouteKey]: ResourceRef } {
  const out = {} as { [K in RouteKey]: ResourceRef };
  for (const k of ROUTE_KEYS) {
    const row = GATEWAY_ROUTES[k];
    out[k] = { group: GATEWAY_GROUP, version: 'v1', resource: row.resource, kind: row.kind };
  }
  return out;
}

export const RESOURCES = {
  pods: { group: '', version: 'v1', resource: 'pods', kind: 'Pod' },
  services: { group: '', version: 'v1', resource: 'services', kind: 'Service' },
  nodes: { group: '', version: 'v1', resource: 'nodes', kind: 'Node' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace' },
  events: { group: '', version: 'v1', resource: 'events', kind: 'Event' },
  ingresses: { group: 'networking.k8s.io', version: 'v1', resource: 'ingresses', kind: 'Ingress' },
  ingressClasses: {
    group: 'networking.k8s.io',
    version: 'v1',
    resource: 'ingressclasses',
    kind: 'IngressClass',
  },
  secrets: { group: '', version: 'v1', resource: 'secrets', kind: 'Secret' },
  configMaps: { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
  endpointSlices: {
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    kind: 'EndpointSlice',
  },
  gatewayClasses: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    resource: 'gatewayclasses',
    kind: 'GatewayClass',
  },
  gateways: { group: 'gateway.networking.k8s.io', version: 'v1', resource: 'gateways', kind: 'Gateway' },
  // The Gateway API's route kinds, from their table (gateway-objects.ts).
  ...routeResources(),
  backendPolicies: {
    group: 'npl-lb.io',
    version: 'v1alpha1',
    resource: 'backendpolicies',
    kind: 'BackendPolicy',
  },
  loadBalancerParameters: {
    group: 'npl-lb.io',
    version: 'v1alpha1',
    resource: 'loadbalancerparameters',
    kind: 'LoadBalancerParameters',
  },
  // v1beta1: served by every Gateway API release since v0.6 (v1 only from v1.5).
  referenceGrants: {
    group: 'gateway.networking.k8s.io',
    version: 'v1beta1',
    resource: 'referencegrants',
    kind: 'ReferenceGrant',
  },
  backendTlsPolicies: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    resource: 'backendtlspolicies',
    kind: 'BackendTLSPolicy',
  },
  listenerSets: {
    group: 'gateway.networking.k8s.io',
    version: 'v1',
    resource: 'listenersets',
    kind: 'ListenerSet',
  },
  customResourceDefinitions: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
  },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease' },
} as const satisfies Record<string, ResourceRef>;
