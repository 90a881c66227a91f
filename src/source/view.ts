/**
 * What a desired-state pass reads of the cluster: the controller's caches, or plain arrays in tests.
 */
import type { BackendTlsPolicy } from '../kube/backend-tls-objects.ts';
import type { CaConfigMap } from '../kube/config-maps.ts';
import type { ListenerSet } from '../kube/listener-set-objects.ts';
import type { LoadBalancerParameters } from '../kube/parameters-objects.ts';
import {
  type Gateway,
  type GatewayClass,
  type Namespace,
  type ReferenceGrant,
  ROUTE_KEYS,
  type RouteLists,
} from '../kube/gateway-objects.ts';
import type { EndpointSlice, Ingress, IngressClass, Node, Pod, Service, TlsSecret } from '../kube/objects.ts';
import type { BackendPolicy } from '../kube/policy-objects.ts';
import type { SliceIndex } from './endpoint-slices.ts';
import type { DrainPhase } from './maintenance.ts';
import type { PodSelector } from './members.ts';

/** The cluster as a pass reads it; the route kinds' lists by their keys (RouteLists). */
export interface ClusterView extends RouteLists {
  services: Service[];
  ingresses: Ingress[];
  ingressClasses: IngressClass[];
  pods: Pod[];
  nodes: Node[];
  /** An index over `pods` kept by the caller (the controller's cache); built per pass otherwise. */
  podIndex?: PodSelector;
  /**
   * EndpointSlices not managed by the EndpointSlice controller: the Pods of Services without a
   * selector (endpoint-slices.ts). None when absent.
   */
  endpointSlices?: EndpointSlice[];
  /** An index over `endpointSlices` kept by the caller; built per pass otherwise. */
  sliceIndex?: SliceIndex;
  /** Where each node stands in maintenance (the controller's drain clock); serving when absent. */
  drainPhase?: (node: string) => DrainPhase;
  /** One Service by namespace/name without a scan (the controller's cache); a scan otherwise. */
  serviceByKey?: (key: string) => Service | undefined;
  /** One Ingress, or one Pod, by namespace/name without a scan (the controller's cache). */
  ingressByKey?: (key: string) => Ingress | undefined;
  podByKey?: (key: string) => Pod | undefined;
  /** Secrets of type kubernetes.io/tls (the certificates of Ingress `tls:`); none when absent. */
  secrets?: TlsSecret[];
  /** The time certificates are checked against (ms since the epoch); now when absent. */
  now?: number;
  /** Namespaces (their labels: allowedRoutes selectors of Gateway listeners). */
  namespaces?: Namespace[];
  /** The Gateway API objects; none when absent (the CRDs not installed). */
  gatewayClasses?: GatewayClass[];
  gateways?: Gateway[];
  /** ListenerSets (gateway.networking.k8s.io/v1): listeners attached to Gateways that allow them. */
  listenerSets?: ListenerSet[];
  referenceGrants?: ReferenceGrant[];
  /** BackendTLSPolicies (gateway.networking.k8s.io/v1); none when absent. */
  backendTlsPolicies?: BackendTlsPolicy[];
  /** ConfigMaps, each as its `ca.crt` alone (the CA bundles of BackendTLSPolicies); none when absent. */
  configMaps?: CaConfigMap[];
  /** BackendPolicies (npl-lb.io); none when absent (the CRD not installed). */
  backendPolicies?: BackendPolicy[];
  /** LoadBalancerParameters (npl-lb.io); none when absent (the CRD not installed). */
  loadBalancerParameters?: LoadBalancerParameters[];
  /** The Gateway API release installed (the CRDs' bundle-version), when known. */
  gatewayApiVersion?: string | undefined;
  /** Whether the Gateway API is installed (its GatewayClass CRD exists). */
  gatewayApiInstalled?: boolean;
}

/** The route-side inputs (Ingresses, classes, the Gateway API objects, BackendPolicies): a pass that reuses what it
 * built from them compares these by identity. */
export const routeInputs = (v: ClusterView): unknown[] => [
  v.ingresses,
  v.ingressClasses,
  v.gatewayClasses,
  v.gateways,
  v.listenerSets,
  ...ROUTE_KEYS.map((k) => v[k]),
  v.referenceGrants,
  v.backendTlsPolicies,
  v.configMaps,
  v.backendPolicies,
  v.loadBalancerParameters,
  v.gatewayApiVersion,
];
