/**
 * What our GatewayClasses claim in status.supportedFeatures: the upstream feature names of what
 * the configured load balancer does and the conformance harness tests, sorted as the field
 * requires; nothing a load balancer lacks (Avi's redirect codes, a load balancer without L7).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { DATAPLANE_CAPABILITIES, HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { INGRESS_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { supportedFeatures } from '../../../src/source/gateway/features.ts';
import { supportOf } from '../../../src/source/gateway/from-view.ts';
import { gatewayClass, pass, route, INFRA, parent } from './gateway-support.ts';

const of = (caps: typeof HAPROXY_CAPABILITIES) =>
  supportedFeatures(supportOf(caps), caps.http ?? INGRESS_HTTP);

describe('GatewayClass supportedFeatures', () => {
  it('HAProxy claims the core and every extended HTTP feature it serves, sorted', () => {
    for (const caps of [HAPROXY_CAPABILITIES, DATAPLANE_CAPABILITIES]) {
      const f = of(caps);
      assert.deepEqual(f, [...f].sort(), 'sorted by name');
      for (const name of [
        'Gateway',
        'HTTPRoute',
        'ReferenceGrant',
        'HTTPRouteQueryParamMatching',
        'HTTPRouteMethodMatching',
        'HTTPRouteResponseHeaderModification',
        'HTTPRoutePathRewrite',
        'HTTPRouteHostRewrite',
        'HTTPRoute303RedirectStatusCode',
        'HTTPRoute308RedirectStatusCode',
        'HTTPRouteBackendProtocolWebSocket',
        'HTTPRouteCORS',
        'TLSRoute',
        'TLSRouteModeTerminate',
        'HTTPRouteRetry',
      ])
        assert.ok(f.includes(name), name);
      // Not claimed: what npl-lb does not do, or no harness test proves yet (HAProxy bounds each
      // attempt, not the attempts together by the request's timeout).
      for (const name of ['HTTPRouteRetryBackendTimeout', 'HTTPRouteRetryConnectionError'])
        assert.ok(!f.includes(name), name);
    }
    // Request mirrors: a Lua action of ours on each transport (mirrors.ts, dataplane/mirror-layout.ts).
    const mirrors = [
      'HTTPRouteRequestMirror',
      'HTTPRouteRequestMultipleMirrors',
      'HTTPRouteRequestPercentageMirror',
    ];
    for (const name of mirrors) {
      assert.ok(of(HAPROXY_CAPABILITIES).includes(name), name);
      assert.ok(of(DATAPLANE_CAPABILITIES).includes(name), name);
    }
    // Mixed mode (both TLS modes on one port): each transport's loop (tls-mixed.ts, tls-loop.ts).
    assert.ok(of(HAPROXY_CAPABILITIES).includes('TLSRouteModeMixed'));
    assert.ok(of(DATAPLANE_CAPABILITIES).includes('TLSRouteModeMixed'));
  });

  it('route timeouts and GRPCRoute: claimed by both HAProxy transports (the Data Plane one writes the backend rule as an API object)', () => {
    for (const f of ['HTTPRouteRequestTimeout', 'HTTPRouteBackendTimeout', 'GRPCRoute']) {
      assert.ok(of(HAPROXY_CAPABILITIES).includes(f), f);
      assert.ok(of(DATAPLANE_CAPABILITIES).includes(f), f);
    }
    assert.ok(!of(F5_CAPABILITIES).includes('GRPCRoute'), 'BIG-IP: no HTTP/2');
  });

  it('a load balancer claims only what it does: Avi has no 303, 308 or several query matches; TLS passthrough alone is the GATEWAY-TLS core', () => {
    const avi = of(aviCapabilities(false));
    // No CORS filter on Avi or BIG-IP yet: a route with one is refused by name (route-support.ts).
    assert.ok(!avi.includes('HTTPRouteCORS') && !of(F5_CAPABILITIES).includes('HTTPRouteCORS'));
    // Route retries on Avi (the pool's server_reselect) and BIG-IP (an iRule: route-retry.ts).
    assert.ok(avi.includes('HTTPRouteRetry') && of(F5_CAPABILITIES).includes('HTTPRouteRetry'));
    assert.ok(avi.includes('HTTPRoute307RedirectStatusCode'));
    assert.ok(!avi.includes('HTTPRoute303RedirectStatusCode'));
    assert.ok(!avi.includes('HTTPRoute308RedirectStatusCode'));
    assert.ok(!avi.includes('HTTPRouteQueryParamMatching'), 'one query match per rule is not the feature');
    assert.ok(!avi.includes('HTTPRouteRequestTimeout'), 'no route timeouts on Avi');
    assert.ok(
      avi.includes('HTTPRouteBackendProtocolWebSocket') &&
        of(F5_CAPABILITIES).includes('HTTPRouteBackendProtocolWebSocket'),
      'WebSocket: Avi (its HTTP profiles proxy it) and BIG-IP (its WebSocket profile)',
    );
    assert.ok(of(F5_CAPABILITIES).includes('HTTPRoute'));
    assert.ok(
      !avi.includes('TLSRouteModeTerminate') && of(F5_CAPABILITIES).includes('TLSRouteModeTerminate'),
      'TLS listeners in Terminate mode: HAProxy and BIG-IP, not Avi',
    );
    assert.deepEqual(
      supportedFeatures({ HTTP: false, HTTPS: false, TLS: true, TCP: true, UDP: true }, INGRESS_HTTP),
      ['Gateway', 'ReferenceGrant', 'TLSRoute'],
      'TLS passthrough alone: the GATEWAY-TLS core',
    );
    assert.deepEqual(
      supportedFeatures({ HTTP: false, HTTPS: false, TLS: false, TCP: true, UDP: true }, INGRESS_HTTP),
      [],
    );
    const ingressOnly = supportedFeatures(
      { HTTP: true, HTTPS: true, TLS: false, TCP: true, UDP: false },
      INGRESS_HTTP,
    );
    assert.deepEqual(ingressOnly, [
      'Gateway',
      'GatewayAddressEmpty',
      'GatewayHTTPListenerIsolation',
      'GatewayPort8080',
      'GatewayStaticAddresses',
      'HTTPRoute',
      // Routes attached by listener port (a port no listener has: NoMatchingParent) and named
      // rules: read by the source, for every device.
      'HTTPRouteDestinationPortMatching',
      'HTTPRouteNamedRouteRule',
      'HTTPRouteParentRefPort',
      // ListenerSets merge into their Gateway's listeners in the source, for every device.
      'ListenerSet',
      'ReferenceGrant',
    ]);
  });

  it('is written in the class status beside its conditions', () => {
    const result = pass({
      routes: [route(INFRA, 'r', { parentRefs: [parent('same-namespace')], rules: [] })],
    });
    const st = result.classes.get(gatewayClass().metadata.name)!;
    assert.ok(st.supportedFeatures.includes('HTTPRoute'));
    assert.deepEqual(st.supportedFeatures, [...st.supportedFeatures].sort());
  });
});
