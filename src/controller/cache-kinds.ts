/**
 * The kinds the controller's cache follows, as one table (KINDS): the schema each is validated
 * against as its informer delivers it (the cache keeps the validated object, cluster-cache.ts),
 * where it is listed, and what its changes wake.
 */
import { backendTlsPolicySchema } from '../kube/backend-tls-objects.ts';
import { caConfigMapSchema } from '../kube/config-maps.ts';
import { listenerSetSchema } from '../kube/listener-set-objects.ts';
import type { z } from 'zod';
import { RESOURCES } from '../kube/paths.ts';
import { TLS_SECRET_TYPE } from '../source/certificates.ts';
import { loadBalancerParametersSchema } from '../kube/parameters-objects.ts';
import {
  crdSchema,
  GATEWAY_CLASS_CRD,
  gatewayClassSchema,
  gatewaySchema,
  namespaceSchema,
  referenceGrantSchema,
  GATEWAY_ROUTES,
  ROUTE_KEYS,
  type RouteKey,
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

/**
 * One cached kind: its schema (the informer keeps the validated object), where it is listed and
 * watched (`resource`, a key of RESOURCES), whether its CRD may be missing (`optional`), whether
 * a change of it rebuilds the routes (`routes`: Ingresses, classes, the Gateway API), and the
 * selectors its list takes.
 */
interface KindRow {
  schema: z.ZodType<unknown>;
  resource: keyof typeof RESOURCES;
  optional?: true;
  routes?: true;
  fieldSelector?: string;
  labelSelector?: string;
}

/** Only our TLS Secrets are cached. */
const SECRET_FIELD_SELECTOR = `type=${TLS_SECRET_TYPE}`;
/**
 * EndpointSlices the EndpointSlice controller does not manage (those of Services without a
 * selector, kept by hand or by another controller): the only ones the pools read.
 */
const SLICE_LABEL_SELECTOR = 'endpointslice.kubernetes.io/managed-by!=endpointslice-controller.k8s.io';

const GATEWAY_API = { optional: true, routes: true } as const;

/** A cache row per route kind: its schema, its resource (the same key), the Gateway API's. */
function routeRows(): {
  [K in RouteKey]: { schema: (typeof GATEWAY_ROUTES)[K]['schema']; resource: K } & typeof GATEWAY_API;
} {
  const out = {} as ReturnType<typeof routeRows>;
  for (const k of ROUTE_KEYS)
    (out as Record<RouteKey, unknown>)[k] = { schema: GATEWAY_ROUTES[k].schema, resource: k, ...GATEWAY_API };
  return out;
}

/**
 * Every kind the controller's cache follows, one row each: its informer, its parsed list, its
 * count, its place in the view (the same name in ClusterView) and what its events wake come from
 * here. A route kind comes from GATEWAY_ROUTES (its row beside its schema) and needs nothing here.
 */
export const KINDS = {
  services: { schema: serviceSchema, resource: 'services' },
  pods: { schema: podSchema, resource: 'pods' },
  nodes: { schema: nodeSchema, resource: 'nodes' },
  ingresses: { schema: ingressSchema, resource: 'ingresses', routes: true },
  ingressClasses: { schema: ingressClassSchema, resource: 'ingressClasses', routes: true },
  secrets: { schema: tlsSecretSchema, resource: 'secrets', fieldSelector: SECRET_FIELD_SELECTOR },
  namespaces: { schema: namespaceSchema, resource: 'namespaces', routes: true },
  endpointSlices: {
    schema: endpointSliceSchema,
    resource: 'endpointSlices',
    labelSelector: SLICE_LABEL_SELECTOR,
  },
  gatewayCrd: {
    schema: crdSchema,
    resource: 'customResourceDefinitions',
    routes: true,
    fieldSelector: `metadata.name=${GATEWAY_CLASS_CRD}`,
  },
  gatewayClasses: { schema: gatewayClassSchema, resource: 'gatewayClasses', ...GATEWAY_API },
  gateways: { schema: gatewaySchema, resource: 'gateways', ...GATEWAY_API },
  listenerSets: { schema: listenerSetSchema, resource: 'listenerSets', ...GATEWAY_API },
  // The route kinds, one row each of GATEWAY_ROUTES (gateway-objects.ts).
  ...routeRows(),
  referenceGrants: { schema: referenceGrantSchema, resource: 'referenceGrants', ...GATEWAY_API },
  backendTlsPolicies: { schema: backendTlsPolicySchema, resource: 'backendTlsPolicies', ...GATEWAY_API },
  // The CA bundles BackendTLSPolicies name: every ConfigMap, kept as its `ca.crt` alone.
  configMaps: { schema: caConfigMapSchema, resource: 'configMaps', routes: true },
  backendPolicies: { schema: backendPolicySchema, resource: 'backendPolicies', optional: true },
  loadBalancerParameters: {
    schema: loadBalancerParametersSchema,
    resource: 'loadBalancerParameters',
    optional: true,
  },
} as const satisfies Record<string, KindRow>;

export type CacheKind = keyof typeof KINDS;

/** The object type a kind's schema gives. */
export type KindObject<K extends CacheKind> = z.infer<(typeof KINDS)[K]['schema']>;

export const CACHE_KINDS = Object.keys(KINDS) as CacheKind[];

/** The kinds whose changes rebuild the routes (Ingresses, classes, namespaces, the Gateway API). */
export const ROUTE_KINDS = CACHE_KINDS.filter((k) => (KINDS[k] as KindRow).routes);
