/**
 * The Gateway API features a GatewayClass of ours claims in `status.supportedFeatures` (v1.6; the
 * upstream `pkg/features` names), from what the configured load balancer can do. A feature is
 * claimed only where npl-lb's conformance harness (conformance/) runs its upstream tests, so every
 * claim can be checked by `npm run conformance`, as the upstream suite infers what to test from
 * this list. Sorted by name, as the field requires.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { ProtocolSupport } from './listeners.ts';
import { ROUTE_SEMANTICS } from './route-kinds.ts';

/** The core features of the GATEWAY-HTTP profile. */
const HTTP_CORE = ['Gateway', 'HTTPRoute', 'ReferenceGrant'] as const;

/** What a route's filters and rule fields bring, where the load balancer applies them. */
function filterClaims(http: HttpCapabilities): [string, boolean][] {
  return [
    ['HTTPRouteBackendRequestHeaderModification', http.backendHeaderModifiers === true],
    // The CORS filter: preflights answered by the load balancer, allowed origins echoed.
    ['HTTPRouteCORS', http.cors === true],
    // Request mirrors: every request, several mirrors on one rule, a share of requests (their
    // upstream tests read echo-basic's log lines through the sandbox's Pod logs: mirrors.ts).
    ['HTTPRouteRequestMirror', http.mirror !== undefined],
    ['HTTPRouteRequestMultipleMirrors', (http.mirror?.maxPerRoute ?? 0) > 1],
    ['HTTPRouteRequestPercentageMirror', http.mirror !== undefined],
    // A rule's retry (the experimental channel's HTTPRoute): statuses and attempts. Not
    // HTTPRouteRetryBackendTimeout (no load balancer of npl-lb bounds the attempts together by
    // timeouts.request), nor HTTPRouteRetryConnectionError (a load balancer answering 502 once every
    // attempt was reset fails its test, which wants 500 or 503: conformance/tests/retry.ts).
    ['HTTPRouteRetry', http.retry !== undefined],
  ];
}

export function supportedFeatures(support: ProtocolSupport, http: HttpCapabilities): string[] {
  // GATEWAY-TLS core: TLS listeners in Passthrough mode with TLSRoute; Terminate mode where the
  // load balancer terminates TLS listeners; Mixed (both modes on one port) where it serves that.
  const tls = support.TLS
    ? [
        'Gateway',
        'ReferenceGrant',
        'TLSRoute',
        ...(support.tlsTerminate ? ['TLSRouteModeTerminate'] : []),
        ...(support.tlsMixed ? ['TLSRouteModeMixed'] : []),
      ]
    : [];
  if (!support.HTTP) return [...new Set(tls)].sort();
  const codes = http.redirectCodes ?? [301, 302, 303, 307, 308];
  const claims: [string, boolean][] = [
    ...HTTP_CORE.map((f): [string, boolean] => [f, true]),
    ['GatewayPort8080', true],
    // Every adapter serves a request only from its most specific listener's routes (the model's
    // route table, held to each adapter by the route-table differential tests).
    ['GatewayHTTPListenerIsolation', true],
    // spec.addresses: static addresses inside vip.cidrs (AddressNotUsable outside), and an
    // address of a type with no value (one is allocated).
    ['GatewayStaticAddresses', true],
    ['GatewayAddressEmpty', true],
    // Claimed only without a limit on matches per rule (a device may take one; the feature means any).
    ['HTTPRouteQueryParamMatching', http.queryMatches && http.maxQueryMatches === undefined],
    ['HTTPRouteMethodMatching', http.methodMatches],
    ['HTTPRouteResponseHeaderModification', http.headerModifiers],
    ['HTTPRoutePathRewrite', http.rewrites],
    ['HTTPRouteHostRewrite', http.rewrites],
    ['HTTPRouteSchemeRedirect', http.redirects],
    ['HTTPRoutePathRedirect', http.redirects],
    ['HTTPRoutePortRedirect', http.redirects],
    ['HTTPRoute303RedirectStatusCode', http.redirects && codes.includes(303)],
    ['HTTPRoute307RedirectStatusCode', http.redirects && codes.includes(307)],
    ['HTTPRoute308RedirectStatusCode', http.redirects && codes.includes(308)],
    ['HTTPRouteRequestTimeout', http.timeouts === true],
    ['HTTPRouteBackendTimeout', http.timeouts === true],
    // What each route kind brings where it is served (its row, route-kinds.ts).
    ...ROUTE_SEMANTICS.flatMap((r) =>
      (r.features ?? []).map((f): [string, boolean] => [f, r.served?.(support) ?? true]),
    ),
    ['HTTPRouteBackendProtocolH2C', http.http2 === true],
    ['HTTPRouteBackendProtocolWebSocket', http.webSocket === true],
    // A rule's `name` is read and carried; a parentRef's `port` attaches the route to that port's
    // listeners only, and a port no listener has is NoMatchingParent (HTTPRouteParentRefPort, and
    // the experimental HTTPRouteDestinationPortMatching, whose one test is that refusal: the
    // parentRef's `port` is a field of the standard CRD, so it holds on either channel).
    // TLS to backends as a BackendTLSPolicy asks (its hostname as SNI and verified, a ConfigMap's
    // CA); SAN validation (BackendTLSPolicySANValidation: URI names, names apart from the SNI) is
    // not claimed by any adapter.
    ['BackendTLSPolicy', http.backendTls !== undefined],
    // A Gateway's spec.tls.backend.clientCertificateRef presented to TLS members (its reference
    // judged on the Gateway's ResolvedRefs condition).
    [
      'GatewayBackendClientCertificate',
      support.backendClientCertificates === true && http.backendTls !== undefined,
    ],
    // Client certificates at HTTPS listeners (a Gateway's spec.tls.frontend), required or with
    // the insecure fallback (InsecureFrontendValidationMode said on the Gateway).
    ['GatewayFrontendClientCertificateValidation', support.clientCertificates === true],
    ['GatewayFrontendClientCertificateValidationInsecureFallback', support.clientCertificates === true],
    // A request whose TLS server name selects another HTTPS listener than its Host: 421.
    ['GatewayHTTPSListenerDetectMisdirectedRequests', support.HTTPS && http.misdirectedRequests === true],
    ...filterClaims(http),
    // ListenerSets merge into their Gateway's listeners before any device sees them (listener-sets.ts).
    ['ListenerSet', true],
    ['HTTPRouteNamedRouteRule', true],
    ['HTTPRouteParentRefPort', true],
    ['HTTPRouteDestinationPortMatching', true],
  ];
  return [...new Set([...tls, ...claims.filter(([, yes]) => yes).map(([name]) => name)])].sort();
}
