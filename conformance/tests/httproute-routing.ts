/**
 * Core HTTPRoute routing tests, transcribed from upstream v1.6.1 (conformance/tests/<file>.go):
 * which backend answers which request, with real traffic through the Gateway's address.
 */
import type { Expected } from '../harness/http.ts';
import { compare, expectEventually, roundTrip } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import { deploymentOf, expectWeightedDistribution } from '../harness/weight.ts';
import { type ConformanceTest, expectAll, HTTP_CORE, INFRA, routesReady, WEB } from '../harness/suite.ts';

const V1 = 'infra-backend-v1';
const V2 = 'infra-backend-v2';
const V3 = 'infra-backend-v3';
const sameNs = { namespace: INFRA, name: 'same-namespace' };
const to = (backend: string, path: string, more: Partial<Expected['request']> = {}): Expected => ({
  request: { path, ...more },
  backend,
  namespace: INFRA,
});
const notFound = (path: string, more: Partial<Expected['request']> = {}): Expected => ({
  request: { path, ...more },
  response: { statusCode: 404 },
});

export const routingTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteSimpleSameNamespace',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace attaches to a Gateway in the same namespace',
    features: HTTP_CORE,
    manifests: ['httproute-simple-same-namespace.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [
        { namespace: INFRA, name: 'gateway-conformance-infra-test' },
      ]);
      await expectAll(s, addr, [{ ...to(V1, '/'), response: { statusCode: 200 } }]);
    },
  },
  {
    shortName: 'HTTPRouteCrossNamespace',
    description:
      'A single HTTPRoute in the gateway-conformance-web-backend namespace attaches to a Gateway in another namespace',
    features: HTTP_CORE,
    manifests: ['httproute-cross-namespace.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, { namespace: INFRA, name: 'backend-namespaces' }, [
        { namespace: WEB, name: 'cross-namespace' },
      ]);
      await expectAll(s, addr, [
        { request: { path: '/' }, response: { statusCode: 200 }, backend: 'web-backend', namespace: WEB },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteExactPathMatching',
    description: 'A single HTTPRoute with exact path matching for different backends',
    features: HTTP_CORE,
    manifests: ['httproute-exact-path-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'exact-matching' }]);
      await expectAll(s, addr, [
        to(V1, '/one'),
        to(V2, '/two'),
        notFound('/'),
        notFound('/one/example'),
        notFound('/two/'),
        notFound('/Two'),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteMatching',
    description: 'A single HTTPRoute with path and header matching for different backends',
    features: HTTP_CORE,
    manifests: ['httproute-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'matching' }]);
      await expectAll(s, addr, [
        to(V1, '/'),
        to(V1, '/example'),
        to(V1, '/', { headers: { Version: 'one' } }),
        to(V2, '/v2'),
        to(V2, '/v2/example'),
        to(V2, '/', { headers: { Version: 'two' } }),
        to(V2, '/v2/'),
        to(V1, '/v2example'),
        to(V1, '/foo/v2/example'),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteHeaderMatching',
    description: 'A single HTTPRoute with header matching for different backends',
    features: HTTP_CORE,
    manifests: ['httproute-header-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'header-matching' }]);
      const h = (headers: Record<string, string>) => ({ headers });
      await expectAll(s, addr, [
        to(V1, '/', h({ Version: 'one' })),
        to(V2, '/', h({ Version: 'two' })),
        to(V1, '/', h({ Version: 'two', Color: 'orange' })),
        to(V2, '/', h({ Version: 'two', Color: 'blue' })),
        notFound('/', h({ Color: 'orange' })),
        notFound('/', h({ 'Some-Other-Header': 'one' })),
        to(V1, '/', h({ Color: 'blue' })),
        to(V1, '/', h({ Color: 'green' })),
        to(V2, '/', h({ Color: 'red' })),
        to(V2, '/', h({ Color: 'yellow' })),
        notFound('/', h({ Color: 'purple' })),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteMatchingAcrossRoutes',
    description: 'Two HTTPRoutes with path matching for different backends',
    features: HTTP_CORE,
    manifests: ['httproute-matching-across-routes.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [
        { namespace: INFRA, name: 'matching-part1' },
        { namespace: INFRA, name: 'matching-part2' },
      ]);
      const at = (host: string, headers?: Record<string, string>) => ({
        host,
        ...(headers ? { headers } : {}),
      });
      await expectAll(s, addr, [
        to(V1, '/', at('example.com')),
        to(V1, '/example', at('example.com')),
        to(V1, '/example', at('example.net')),
        to(V1, '/example', at('example.com', { Version: 'one' })),
        to(V2, '/v2', at('example.com')),
        to(V1, '/v2', at('example.net')),
        to(V2, '/v2/example', at('example.com')),
        to(V2, '/', at('example.com', { Version: 'two' })),
      ]);
    },
  },
  {
    shortName: 'HTTPRoutePathMatchOrder',
    description: 'An HTTPRoute where there are multiple matches routing to any different backends',
    features: HTTP_CORE,
    manifests: ['httproute-path-match-order.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'path-matching-order' }]);
      await expectAll(s, addr, [
        to(V3, '/match/exact/one'),
        to(V2, '/match/exact'),
        to(V1, '/match'),
        to(V2, '/match/prefix/one/any'),
        to(V1, '/match/prefix/any'),
        to(V3, '/match/any'),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteMultipleGateways',
    description: 'An HTTPRoute attached to two Gateways, and a route dedicated to each',
    features: HTTP_CORE,
    manifests: ['httproute-multiple-gateways.yaml'],
    traffic: true,
    run: async (s) => {
      const one = async (gw: string, dedicated: string, backend: string) => {
        const addr = await s.status.gatewayAndRoutesAccepted({ namespace: INFRA, name: gw }, 'HTTPRoute', [
          { namespace: INFRA, name: 'multiple-gateways-shared-route' },
          { namespace: INFRA, name: dedicated },
        ]);
        await expectAll(s, addr, [
          { ...to(V1, '/shared'), response: { statusCode: 200 } },
          { ...to(backend, '/'), response: { statusCode: 200 } },
        ]);
      };
      await Promise.all([
        one('same-namespace', 'same-namespace-dedicated-route', V2),
        one('all-namespaces', 'all-namespaces-dedicated-route', V3),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteWeight',
    description: 'An HTTPRoute with weighted backends',
    features: HTTP_CORE,
    manifests: ['httproute-weight.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'weighted-backends' }]);
      const expected: Expected = {
        request: { path: '/' },
        response: { statusCodes: [200] },
        namespace: INFRA,
      };
      if (!s.sendsTraffic) return;
      await expectEventually(addr, expected, s.timeouts);
      // As upstream: 500 requests, 10 at a time, each share within 5 points; up to 10 tries.
      // Entropy as upstream adds it: a random header, so connections are not reused alike.
      await expectWeightedDistribution(
        { [V1]: 0.7, [V2]: 0.3, [V3]: 0 },
        async () => {
          const rt = await roundTrip(addr, { path: '/', headers: { 'X-Entropy': String(Math.random()) } });
          const why = compare(addr, rt, { ...expected, expectedRequest: { path: '/' } });
          if (why) throw new ConformanceFailure(why);
          return deploymentOf(rt.captured!.pod);
        },
        s.log,
        () => expectEventually(addr, expected, s.timeouts),
      );
    },
  },
];
