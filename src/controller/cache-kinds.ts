/**
 * The kinds the controller's cache follows, and the schema each is validated against as its
 * informer delivers it (the cache keeps the validated object, cluster-cache.ts).
 */
import { backendTlsPolicySchema } from '../kube/backend-tls-objects.ts';
import type { z } from 'zod';
import { loadBalancerParametersSchema } from '../kube/parameters-objects.ts';
import {
  crdSchema,
  gatewayClassSchema,
  gatewaySchema,
  grpcRouteSchema,
  httpRouteSchema,
  l4RouteSchema,
  namespaceSchema,
  referenceGrantSchema,
} from '../kube/gateway-objects.ts';
import {
  endpointSliceSchema,
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  podSchema,
  serviceSchema,
  tlsSecretSchema,
} from '../kube/objects.ts';
import { backendPolicySchema } from '../kube/policy-objects.ts';

export type CacheKind =
  | 'services'
  | 'pods'
  | 'nodes'
  | 'ingresses'
  | 'ingressClasses'
  | 'secrets'
  | 'namespaces'
  | 'endpointSlices'
  | 'gatewayCrd'
  | 'backendPolicies'
  | 'loadBalancerParameters'
  | GatewayKind;

/** The Gateway API kinds: served only where their CRDs are installed. */
export type GatewayKind =
  | 'gatewayClasses'
  | 'gateways'
  | 'httpRoutes'
  | 'grpcRoutes'
  | 'tcpRoutes'
  | 'udpRoutes'
  | 'tlsRoutes'
  | 'referenceGrants'
  | 'backendTlsPolicies';
export const GATEWAY_KINDS: readonly GatewayKind[] = [
  'gatewayClasses',
  'gateways',
  'httpRoutes',
  'grpcRoutes',
  'tcpRoutes',
  'udpRoutes',
  'tlsRoutes',
  'referenceGrants',
  'backendTlsPolicies',
];

/** What each kind is validated against: the informer keeps the validated object. */
export const SCHEMAS: Record<CacheKind, z.ZodType<unknown>> = {
  services: serviceSchema,
  pods: podSchema,
  nodes: nodeSchema,
  ingresses: ingressSchema,
  ingressClasses: ingressClassSchema,
  secrets: tlsSecretSchema,
  namespaces: namespaceSchema,
  endpointSlices: endpointSliceSchema,
  gatewayCrd: crdSchema,
  gatewayClasses: gatewayClassSchema,
  gateways: gatewaySchema,
  httpRoutes: httpRouteSchema,
  grpcRoutes: grpcRouteSchema,
  tcpRoutes: l4RouteSchema,
  udpRoutes: l4RouteSchema,
  tlsRoutes: l4RouteSchema,
  referenceGrants: referenceGrantSchema,
  backendTlsPolicies: backendTlsPolicySchema,
  backendPolicies: backendPolicySchema,
  loadBalancerParameters: loadBalancerParametersSchema,
};
