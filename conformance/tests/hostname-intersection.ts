/**
 * HTTPRouteHostnameIntersection, transcribed from upstream v1.6.1
 * (conformance/tests/httproute-hostname-intersection.go): routes are served on the hostnames they
 * share with a listener, a route sharing none is not accepted, and only accepted routes count.
 */
import type { Expected } from '../harness/http.ts';
import {
  type ConformanceTest,
  expectAll,
  HTTP_CORE,
  INFRA,
  readyListener,
  routesReady,
} from '../harness/suite.ts';

const ref = (name: string) => ({ namespace: INFRA, name });
const at = (host: string, path: string, backend: string): Expected => ({
  request: { host, path },
  backend: `infra-backend-${backend}`,
  namespace: INFRA,
});
const none = (host: string, path: string): Expected => ({
  request: { host, path },
  response: { statusCode: 404 },
});

export const hostnameIntersection: ConformanceTest = {
  shortName: 'HTTPRouteHostnameIntersection',
  description:
    'HTTPRoutes should attach to listeners only if they have intersecting hostnames, and should accept requests only for the intersecting hostnames',
  features: HTTP_CORE,
  manifests: ['httproute-hostname-intersection.yaml'],
  traffic: true,
  run: async (s) => {
    const gw = ref('httproute-hostname-intersection');
    // Routes that intersect with the listeners' hostnames.
    const addr = await routesReady(s, gw, [
      ref('specific-host-matches-listener-specific-host'),
      ref('specific-host-matches-listener-wildcard-host'),
      ref('wildcard-host-matches-listener-specific-host'),
      ref('wildcard-host-matches-listener-wildcard-host'),
    ]);
    await expectAll(s, addr, [
      at('very.specific.com', '/s1', 'v1'),
      at('very.specific.com:1234', '/s1', 'v1'),
      none('non.matching.com', '/s1'),
      none('foo.nonmatchingwildcard.io', '/s1'),
      none('foo.wildcard.io', '/s1'),
      none('very.specific.com', '/non-matching-prefix'),
      at('foo.wildcard.io', '/s2', 'v2'),
      at('bar.wildcard.io', '/s2', 'v2'),
      at('foo.bar.wildcard.io', '/s2', 'v2'),
      none('non.matching.com', '/s2'),
      none('wildcard.io', '/s2'),
      none('very.specific.com', '/s2'),
      none('foo.wildcard.io', '/non-matching-prefix'),
      at('very.specific.com', '/s3', 'v3'),
      none('non.matching.com', '/s3'),
      none('foo.specific.com', '/s3'),
      none('foo.wildcard.io', '/s3'),
      none('very.specific.com', '/non-matching-prefix'),
      at('foo.anotherwildcard.io', '/s4', 'v1'),
      at('bar.anotherwildcard.io', '/s4', 'v1'),
      at('foo.bar.anotherwildcard.io', '/s4', 'v1'),
      none('anotherwildcard.io', '/s4'),
      none('foo.wildcard.io', '/s4'),
      none('very.specific.com', '/s4'),
      none('foo.anotherwildcard.io', '/non-matching-prefix'),
    ]);
    // A route that intersects with none.
    await s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', []);
    await s.status.routeParents(
      'HTTPRoute',
      ref('no-intersecting-hosts'),
      [
        {
          parent: gw,
          conditions: [{ type: 'Accepted', status: 'False', reason: 'NoMatchingListenerHostname' }],
        },
      ],
      true,
    );
    await expectAll(s, addr, [none('specific.but.wrong.com', '/s5'), none('wildcard.io', '/s5')]);
    // Only accepted routes are counted.
    await s.status.gatewayListeners(gw, [
      readyListener('listener-1', 2),
      readyListener('listener-2', 1),
      readyListener('listener-3', 1),
    ]);
    // Routes intersect with a listener that names no hostname.
    const all = ref('httproute-hostname-intersection-all');
    const allAddr = await routesReady(s, all, [ref('httproute-hostname-intersection-all')]);
    await expectAll(s, allAddr, [
      at('first.com', '/', 'v2'),
      at('sub.first.com', '/', 'v2'),
      at('second.com', '/', 'v2'),
      at('sub.second.com', '/', 'v2'),
      none('third.com', '/'),
      none('sub.third.com', '/'),
    ]);
  },
};
