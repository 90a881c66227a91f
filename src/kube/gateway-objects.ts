/**
 * zod schemas for the Gateway API objects npl-lb reads (gateway.networking.k8s.io/v1, standard
 * channel v1.6): GatewayClass, Gateway, HTTPRoute, GRPCRoute, TLSRoute, TCPRoute, ReferenceGrant, and the
 * Namespace labels a listener's allowedRoutes selector reads. Only the fields we use are typed;
 * the API server's CRD schema has already checked their shapes, we still parse them.
 */
import { z } from 'zod';
import { objectMetaSchema } from './objects.ts';
import { httpRouteFilterSchema, objectRefSchema } from './route-filter-objects.ts';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';

export const gatewayMeta = objectMetaSchema.extend({ generation: z.number().int().default(0) });

/** A status condition (metav1.Condition), as the Gateway API and policy kinds write it. */
export const condition = z
  .object({
    type: z.string(),
    status: z.string(),
    reason: z.string().default(''),
    message: z.string().default(''),
    observedGeneration: z.number().optional(),
    lastTransitionTime: z.string().optional(),
  })
  .loose();
export type Condition = z.infer<typeof condition>;

export const gatewayClassSchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        controllerName: z.string(),
        parametersRef: z
          .object({ group: z.string(), kind: z.string(), name: z.string(), namespace: z.string().optional() })
          .loose()
          .optional(),
      })
      .loose(),
    status: z
      .object({
        conditions: z.array(condition).default([]),
        supportedFeatures: z.array(z.object({ name: z.string() }).loose()).optional(),
      })
      .loose()
      .default({ conditions: [] }),
  })
  .loose();
export type GatewayClass = z.infer<typeof gatewayClassSchema>;

const secretRef = z
  .object({
    group: z.string().default(''),
    kind: z.string().default('Secret'),
    name: z.string(),
    namespace: z.string().optional(),
  })
  .loose();
export type SecretObjectReference = z.infer<typeof secretRef>;

const routeGroupKind = z.object({ group: z.string().default(GATEWAY_GROUP), kind: z.string() }).loose();
export type RouteGroupKind = z.infer<typeof routeGroupKind>;

const labelSelector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).default({}),
    matchExpressions: z
      .array(
        z.object({ key: z.string(), operator: z.string(), values: z.array(z.string()).default([]) }).loose(),
      )
      .default([]),
  })
  .loose();
export type LabelSelector = z.infer<typeof labelSelector>;

export const listenerSchema = z
  .object({
    name: z.string(),
    hostname: z.string().optional(),
    port: z.number().int(),
    protocol: z.string(),
    tls: z
      .object({
        mode: z.enum(['Terminate', 'Passthrough']).default('Terminate'),
        certificateRefs: z.array(secretRef).default([]),
      })
      .loose()
      .optional(),
    allowedRoutes: z
      .object({
        namespaces: z
          .object({
            from: z.enum(['All', 'Same', 'Selector']).default('Same'),
            selector: labelSelector.optional(),
          })
          .loose()
          .default({ from: 'Same' }),
        kinds: z.array(routeGroupKind).default([]),
      })
      .loose()
      .default({ namespaces: { from: 'Same' }, kinds: [] }),
  })
  .loose();
export type Listener = z.infer<typeof listenerSchema>;

/** Client certificate validation (FrontendTLSValidation): the mode judged in frontend-tls.ts. */
const frontendValidation = z
  .object({
    caCertificateRefs: z
      .array(
        z
          .object({
            group: z.string().default(''),
            kind: z.string(),
            name: z.string(),
            namespace: z.string().optional(),
          })
          .loose(),
      )
      .default([]),
    mode: z.string().default('AllowValidOnly'),
  })
  .loose();

export const gatewaySchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        gatewayClassName: z.string(),
        // A value is optional (v1.6): an address of that type, any one, is asked for.
        addresses: z
          .array(z.object({ type: z.string().default('IPAddress'), value: z.string().optional() }).loose())
          .default([]),
        listeners: z.array(listenerSchema).default([]),
        // Which namespaces' ListenerSets may attach (GEP-1713): none unless asked.
        allowedListeners: z
          .object({
            namespaces: z
              .object({
                from: z.enum(['All', 'Same', 'Selector', 'None']).default('None'),
                selector: labelSelector.optional(),
              })
              .loose()
              .default({ from: 'None' }),
          })
          .loose()
          .optional(),
        // TLS for the whole Gateway (v1.6 standard, extended support): client certificates asked
        // at the front door, by default or per port, and the certificate presented to backends.
        // What npl-lb does with each field is decided in listeners.ts and frontend-tls.ts (served
        // where the load balancer can, else refused by name), never dropped by a parse.
        tls: z
          .object({
            frontend: z
              .object({
                default: z.object({ validation: frontendValidation.optional() }).loose().optional(),
                perPort: z
                  .array(
                    z
                      .object({
                        port: z.number(),
                        tls: z.object({ validation: frontendValidation.optional() }).loose(),
                      })
                      .loose(),
                  )
                  .optional(),
              })
              .loose()
              .optional(),
            // The certificate presented to backends (judged in backend-client-certificate.ts).
            backend: z.object({ clientCertificateRef: secretRef.optional() }).loose().optional(),
          })
          .loose()
          .optional(),
        infrastructure: z
          .object({
            parametersRef: z
              .object({ group: z.string(), kind: z.string(), name: z.string() })
              .loose()
              .optional(),
          })
          .loose()
          .optional(),
      })
      .loose(),
    status: z
      .object({
        addresses: z.array(z.object({ type: z.string().optional(), value: z.string() }).loose()).default([]),
      })
      .loose()
      .default({ addresses: [] }),
  })
  .loose();
export type Gateway = z.infer<typeof gatewaySchema>;

const parentRef = z
  .object({
    group: z.string().default(GATEWAY_GROUP),
    kind: z.string().default('Gateway'),
    namespace: z.string().optional(),
    name: z.string(),
    sectionName: z.string().optional(),
    port: z.number().int().optional(),
  })
  .loose();
export type ParentReference = z.infer<typeof parentRef>;

const backendRef = objectRefSchema.extend({ weight: z.number().int().default(1) });
export type BackendRef = z.infer<typeof backendRef>;

export { httpRouteFilterSchema, type HttpRouteFilter } from './route-filter-objects.ts';

const valueMatch = z
  .object({ type: z.string().default('Exact'), name: z.string(), value: z.string() })
  .loose();

export const httpRouteMatchSchema = z
  .object({
    path: z
      .object({ type: z.string().default('PathPrefix'), value: z.string().default('/') })
      .loose()
      .default({ type: 'PathPrefix', value: '/' }),
    headers: z.array(valueMatch).default([]),
    queryParams: z.array(valueMatch).default([]),
    method: z.string().optional(),
  })
  .loose();
export type HttpRouteMatch = z.infer<typeof httpRouteMatchSchema>;

/** A rule without matches matches every path (PathPrefix /). */
const matchAll = (): HttpRouteMatch[] => [
  { path: { type: 'PathPrefix', value: '/' }, headers: [], queryParams: [] },
];

const routeStatus = z
  .object({
    parents: z
      .array(
        z
          .object({
            parentRef: parentRef,
            controllerName: z.string(),
            conditions: z.array(condition).default([]),
          })
          .loose(),
      )
      .default([]),
  })
  .loose()
  .default({ parents: [] });

export const httpRouteSchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        parentRefs: z.array(parentRef).default([]),
        hostnames: z.array(z.string()).default([]),
        rules: z
          .array(
            z
              .object({
                name: z.string().optional(),
                matches: z.array(httpRouteMatchSchema).default(matchAll),
                filters: z.array(httpRouteFilterSchema).default([]),
                backendRefs: z
                  .array(backendRef.extend({ filters: z.array(httpRouteFilterSchema).default([]) }))
                  .default([]),
              })
              .loose(),
          )
          .default(() => [{ matches: matchAll(), filters: [], backendRefs: [] }]),
      })
      .loose(),
    status: routeStatus,
  })
  .loose();
export type HttpRouteObject = z.infer<typeof httpRouteSchema>;

/** A GRPCRoute match: the gRPC service and method (either may be absent), and headers. */
const grpcMethodMatch = z
  .object({
    type: z.string().default('Exact'),
    service: z.string().optional(),
    method: z.string().optional(),
  })
  .loose();
export const grpcRouteMatchSchema = z
  .object({ method: grpcMethodMatch.optional(), headers: z.array(valueMatch).default([]) })
  .loose();
export type GrpcRouteMatch = z.infer<typeof grpcRouteMatchSchema>;

/** GRPCRoute (v1): gRPC requests by service, method and header, over HTTP/2. */
export const grpcRouteSchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        parentRefs: z.array(parentRef).default([]),
        hostnames: z.array(z.string()).default([]),
        rules: z
          .array(
            z
              .object({
                name: z.string().optional(),
                // A rule without matches takes every request.
                matches: z.array(grpcRouteMatchSchema).default(() => [{ headers: [] }]),
                filters: z.array(httpRouteFilterSchema).default([]),
                backendRefs: z
                  .array(backendRef.extend({ filters: z.array(httpRouteFilterSchema).default([]) }))
                  .default([]),
              })
              .loose(),
          )
          .default(() => [{ matches: [{ headers: [] }], filters: [], backendRefs: [] }]),
      })
      .loose(),
    status: routeStatus,
  })
  .loose();
export type GrpcRouteObject = z.infer<typeof grpcRouteSchema>;

/** TLSRoute (by SNI, passthrough) and TCPRoute: parents, hostnames (TLS only) and backends. */
export const l4RouteSchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        parentRefs: z.array(parentRef).default([]),
        hostnames: z.array(z.string()).default([]),
        rules: z.array(z.object({ backendRefs: z.array(backendRef).default([]) }).loose()).default([]),
      })
      .loose(),
    status: routeStatus,
  })
  .loose();
export type L4RouteObject = z.infer<typeof l4RouteSchema>;

/**
 * The Gateway API's route kinds as the API serves them, one row each: the kind, its resource and
 * schema, keyed by its name in the controller's cache and the pass's view. The cache, the view,
 * the served resources, the RBAC and the route status writer all iterate this table; what a kind
 * means is its semantics row (src/source/gateway/route-kinds.ts).
 */
export const GATEWAY_ROUTES = {
  httpRoutes: { kind: 'HTTPRoute', resource: 'httproutes', schema: httpRouteSchema },
  grpcRoutes: { kind: 'GRPCRoute', resource: 'grpcroutes', schema: grpcRouteSchema },
  tcpRoutes: { kind: 'TCPRoute', resource: 'tcproutes', schema: l4RouteSchema },
  udpRoutes: { kind: 'UDPRoute', resource: 'udproutes', schema: l4RouteSchema },
  tlsRoutes: { kind: 'TLSRoute', resource: 'tlsroutes', schema: l4RouteSchema },
} as const;

export type RouteKey = keyof typeof GATEWAY_ROUTES;
export type RouteKindName = (typeof GATEWAY_ROUTES)[RouteKey]['kind'];
export type RouteObjectOf<K extends RouteKey> = z.infer<(typeof GATEWAY_ROUTES)[K]['schema']>;
/** Any route object. */
export type RouteObject = RouteObjectOf<RouteKey>;
/** Each route kind's objects, by its key (absent: the CRD not installed). */
export type RouteLists = { [K in RouteKey]?: RouteObjectOf<K>[] };
export const ROUTE_KEYS = Object.keys(GATEWAY_ROUTES) as RouteKey[];

export const referenceGrantSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        from: z
          .array(z.object({ group: z.string(), kind: z.string(), namespace: z.string() }).loose())
          .default([]),
        to: z
          .array(z.object({ group: z.string(), kind: z.string(), name: z.string().optional() }).loose())
          .default([]),
      })
      .loose(),
  })
  .loose();
export type ReferenceGrant = z.infer<typeof referenceGrantSchema>;

export const namespaceSchema = z.object({ metadata: objectMetaSchema }).loose();
export type Namespace = z.infer<typeof namespaceSchema>;

/** The GatewayClass CRD, for the Gateway API release installed (its bundle-version annotation). */
export const GATEWAY_CLASS_CRD = 'gatewayclasses.gateway.networking.k8s.io';
export const BUNDLE_VERSION_ANNOTATION = 'gateway.networking.k8s.io/bundle-version';
export const crdSchema = z.object({ metadata: objectMetaSchema }).loose();
export type Crd = z.infer<typeof crdSchema>;
