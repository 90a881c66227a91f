/**
 * What the Gateway API source gives a pass: the virtual services and certificates of our Gateways,
 * and the statuses of our classes, Gateways, listeners and routes. Types only, so the source's
 * shared types (../types.ts) can name them without importing the Gateway code.
 */
import type { TlsPolicyAncestor } from './backend-tls.ts';
import type { PoolPolicy } from '../backend-policies.ts';
import type { HttpRouteObject, RouteGroupKind } from '../../kube/gateway-objects.ts';
import type { Certificate, VirtualService } from '../../model/types.ts';
import type { ConditionSpec } from './conditions.ts';

export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: ConditionSpec[];
}

export interface GatewayStatus {
  generation: number;
  vip: string | undefined;
  /** The addresses of its further families (IPv6 beside IPv4). */
  moreVips?: string[];
  conditions: ConditionSpec[];
  listeners: ListenerStatus[];
  /** ListenerSets allowed and accepted on it (GEP-1713). */
  attachedListenerSets: number;
}

/** A ListenerSet's status (GEP-1713), with the Gateway whose VIP serves its listeners. */
export interface ListenerSetStatus {
  generation: number;
  gateway: { namespace: string; name: string };
  conditions: ConditionSpec[];
  listeners: ListenerStatus[];
}

export interface RouteParentStatus {
  parentRef: HttpRouteObject['spec']['parentRefs'][number];
  conditions: ConditionSpec[];
}

export interface GatewayResult {
  virtualServices: VirtualService[];
  certificates: Certificate[];
  /** Our classes' status: conditions, and the features claimed (sorted names). */
  classes: Map<string, { generation: number; conditions: ConditionSpec[]; supportedFeatures: string[] }>;
  gateways: Map<string, GatewayStatus>;
  /** ListenerSets naming one of our Gateways, by namespace/name. */
  listenerSets?: Map<string, ListenerSetStatus>;
  /** By `Kind namespace/name` (HTTPRoute, TCPRoute, UDPRoute, TLSRoute). */
  routes: Map<string, { generation: number; parents: RouteParentStatus[] }>;
  /** Services (namespace/name) our routes send to: auto-annotated for NodePortLocal. */
  backends: Set<string>;
  /** The pool defaults of a virtual service's Gateway (its parameters, its class's), by its name. */
  defaults?: Map<string, PoolPolicy>;
  /** BackendTLSPolicies (namespace/name) a route hit, with their ancestors' status (backend-tls.ts). */
  tlsPolicies?: Map<string, TlsPolicyAncestor[]>;
}
