/**
 * What each route kind means to the gateway source, one row each: the listener protocols that
 * carry it, whether the configured load balancer serves it, the conformance features it brings, and
 * for an L7 kind its rules (from its semantics file). With its API row beside its schema
 * (GATEWAY_ROUTES, src/kube/gateway-objects.ts) and its semantics, this is all of a route kind:
 * listeners, attachment, placement, features, annotations and status read these tables.
 */
import { GATEWAY_ROUTES, type RouteKey, type RouteObjectOf } from '../../kube/gateway-objects.ts';
import { grpcRules } from './grpc-rules.ts';
import { type HttpRuleResult, httpRules, type RuleContext } from './http-rules.ts';
import type { ListenerProtocol, ProtocolSupport } from './protocols.ts';

export interface RouteSemantics<K extends RouteKey = RouteKey> {
  key: K;
  /** The listener protocols whose listeners take it (their `supportedKinds`). */
  protocols: readonly ListenerProtocol[];
  /** Whether the configured load balancer serves it at all; absent: wherever its protocols are. */
  served?: (support: ProtocolSupport) => boolean;
  /** The upstream features it brings, claimed where it is served (features.ts). */
  features?: readonly string[];
  /**
   * An L7 kind's rules (l7-routes.ts places them); absent for the L4 kinds (l4-routes.ts).
   * (A method, so that a row of one kind is a row of any.)
   */
  rules?(route: RouteObjectOf<K>, ctx: RuleContext): HttpRuleResult;
  /** Its requests reach members in HTTP/2 (gRPC): its virtual service speaks HTTP/2. */
  http2?: true;
}

const HTTP_ROUTE: RouteSemantics<'httpRoutes'> = {
  key: 'httpRoutes',
  protocols: ['HTTP', 'HTTPS'],
  rules: httpRules,
};

/**
 * On HTTP listeners (h2c with prior knowledge) and HTTPS (ALPN), where the load balancer speaks
 * HTTP/2; GATEWAY-GRPC's core, and rule names read and carried in messages as an HTTPRoute rule's.
 */
const GRPC_ROUTE: RouteSemantics<'grpcRoutes'> = {
  key: 'grpcRoutes',
  protocols: ['HTTP', 'HTTPS'],
  served: (support) => support.http2 === true,
  features: ['GRPCRoute', 'GRPCRouteNamedRouteRule'],
  rules: grpcRules,
  http2: true,
};

export const ROUTE_SEMANTICS: readonly RouteSemantics[] = [
  HTTP_ROUTE,
  GRPC_ROUTE,
  { key: 'tcpRoutes', protocols: ['TCP'] },
  { key: 'udpRoutes', protocols: ['UDP'] },
  { key: 'tlsRoutes', protocols: ['TLS'] },
];

/** The kinds whose requests reach members in HTTP/2: their virtual service speaks it. */
export const HTTP2_KINDS: ReadonlySet<string> = new Set(
  ROUTE_SEMANTICS.filter((r) => r.http2).map((r) => GATEWAY_ROUTES[r.key].kind),
);
