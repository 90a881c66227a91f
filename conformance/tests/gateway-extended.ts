/**
 * Extended Gateway tests, transcribed from upstream v1.6.1: listener isolation (a request is
 * served only by the routes of the most specific listener its host matches) and listeners on
 * port 8080. Run where the GatewayClass claims them.
 */
import type { Expected } from '../harness/http.ts';
import { type ConformanceTest, expectAll, INFRA, routesReady } from '../harness/suite.ts';

const ref = (name: string) => ({ namespace: INFRA, name });
const PATHS = [
  '/empty-hostname',
  '/wildcard-example-com',
  '/wildcard-foo-example-com',
  '/abc-foo-example-com',
];
/** Each host is served by exactly one of the four routes: the one of its most specific listener. */
const isolation: Expected[] = (
  [
    ['bar.com', '/empty-hostname'],
    ['bar.example.com', '/wildcard-example-com'],
    ['bar.foo.example.com', '/wildcard-foo-example-com'],
    ['abc.foo.example.com', '/abc-foo-example-com'],
  ] as const
).flatMap(([host, served]) =>
  PATHS.map((path): Expected =>
    path === served
      ? { request: { host, path }, backend: 'infra-backend-v1', namespace: INFRA }
      : { request: { host, path }, response: { statusCode: 404 } },
  ),
);

export const gatewayExtendedTests: ConformanceTest[] = [
  {
    shortName: 'GatewayHTTPListenerIsolation',
    description: 'Listener isolation for HTTP listeners with multiple listeners and HTTPRoutes',
    features: ['Gateway', 'GatewayHTTPListenerIsolation', 'HTTPRoute'],
    manifests: [
      'gateway-http-listener-isolation.yaml',
      'gateway-http-listener-isolation-with-hostname-intersection.yaml',
    ],
    traffic: true,
    run: async (s) => {
      for (const [gw, suffix] of [
        ['http-listener-isolation', ''],
        ['http-listener-isolation-with-hostname-intersection', '-with-hostname-intersection'],
      ] as const) {
        const addr = await routesReady(
          s,
          ref(gw),
          ['empty-hostname', 'wildcard-example-com', 'wildcard-foo-example-com', 'abc-foo-example-com'].map(
            (r) => ref(`attaches-to-${r}${suffix}`),
          ),
        );
        await expectAll(s, addr, isolation);
      }
    },
  },
  {
    shortName: 'GatewayWithAttachedRoutesWithPort8080',
    description: 'A Gateway in the gateway-conformance-infra namespace should be attached to routes.',
    features: ['Gateway', 'GatewayPort8080', 'HTTPRoute'],
    manifests: ['gateway-with-attached-routes-with-port-8080.yaml'],
    traffic: false,
    run: (s) => {
      const listener = (name: string, attachedRoutes: number) => ({
        name,
        supportedKinds: [{ kind: 'HTTPRoute' }],
        attachedRoutes,
        conditions: [
          { type: 'Accepted', status: 'True' },
          { type: 'ResolvedRefs', status: 'True' },
        ],
      });
      return s.status.gatewayListeners(ref('gateway-with-two-listeners-and-one-attached-route'), [
        listener('http-unattached', 0),
        listener('http', 1),
      ]);
    },
  },
];
