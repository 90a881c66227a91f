/**
 * Extended GATEWAY-HTTP tests, transcribed from upstream v1.6.1: each runs only where the
 * GatewayClass claims its feature in `status.supportedFeatures`, as the upstream suite infers them.
 * WebSocket to a Service port of appProtocol kubernetes.io/ws, named rules, routes attached by listener port, matching by query parameter and method, response
 * header modifiers, path and host rewrites.
 */
import { type Expected, expectEventually, roundTrip } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import { type ConformanceTest, expectAll, INFRA, routesReady, type Suite } from '../harness/suite.ts';
import { expectWebSocketEcho } from '../harness/websocket.ts';

const sameNs = { namespace: INFRA, name: 'same-namespace' };
const http = (feature: string) => ['Gateway', 'HTTPRoute', feature];
type R = Expected['request'];
const to = (n: 1 | 2 | 3, request: R, more: Partial<Expected> = {}): Expected => ({
  request,
  backend: `infra-backend-v${n}`,
  namespace: INFRA,
  ...more,
});
const notFound = (request: R): Expected => ({ request, response: { statusCode: 404 } });
const q = (path: string, headers?: Record<string, string>, method?: string): R => ({
  path,
  ...(headers ? { headers } : {}),
  ...(method ? { method } : {}),
});

/** The same-namespace Gateway, one route, then every case. */
const oneRoute = (route: string, cases: Expected[]) => async (s: Suite) => {
  const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: route }]);
  await expectAll(s, addr, cases);
};

/** A backend response header change seen by the client (and, optionally, a request change by the backend). */
const resp = (
  path: string,
  backendSet: Record<string, string>,
  response: { headers?: Record<string, string>; absentHeaders?: string[] },
  more: Partial<Expected> = {},
): Expected => to(1, { path }, { backendSetResponseHeaders: backendSet, response, ...more });

export const extendedHttpTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRequestHeaderModifierBackendWeights',
    description:
      'An HTTPRoute with backend request header modifier filter sends traffic to the correct backends',
    features: http('HTTPRouteBackendRequestHeaderModification'),
    manifests: ['httproute-request-header-modifier-backend-weights.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [
        { namespace: INFRA, name: 'request-header-modifier-backend-weights' },
      ]);
      if (!s.sendsTraffic) return;
      await expectEventually(
        addr,
        { request: { path: '/' }, response: { statusCode: 200 }, namespace: INFRA },
        s.timeouts,
      );
      // Each backend's own filter names it: every request reaches the backend whose header it carries.
      for (let i = 0; i < 100; i++) {
        const rt = await roundTrip(addr, { path: '/' });
        const said = rt.captured?.headers.Backend ?? rt.captured?.headers.backend ?? [];
        if (said.length !== 1)
          throw new ConformanceFailure(
            `expected a single 'Backend' header to have been set, got ${said.length}`,
          );
        if (!rt.captured!.pod.startsWith(said[0]!))
          throw new ConformanceFailure(
            `expected the backendRef to have set the correct headers and sent the request to the correct pod, got ${rt.captured!.pod}, want ${said[0]}`,
          );
      }
    },
  },
  {
    shortName: 'HTTPRouteBackendProtocolWebSocket',
    description:
      'A HTTPRoute with a BackendRef that has an appProtocol kubernetes.io/ws should be functional',
    features: http('HTTPRouteBackendProtocolWebSocket'),
    manifests: ['httproute-backend-protocol-websocket.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await s.status.gatewayAndRoutesAccepted(sameNs, 'HTTPRoute', [
        { namespace: INFRA, name: 'backend-protocol-ws' },
      ]);
      if (!s.sendsTraffic) return;
      await expectWebSocketEcho(addr, 'ws://gateway/HTTPRouteBackendProtocolWebSocket', s.timeouts);
    },
  },
  {
    shortName: 'HTTPRouteNamedRule',
    description: 'An HTTPRoute with a named HTTPRouteRule',
    features: http('HTTPRouteNamedRouteRule'),
    manifests: ['httproute-named-rule.yaml'],
    traffic: true,
    run: oneRoute('http-named-rules', [
      { request: { path: '/named' }, response: { statusCode: 200 }, namespace: INFRA },
      { request: { path: '/unnamed' }, response: { statusCode: 200 }, namespace: INFRA },
    ]),
  },
  {
    shortName: 'HTTPRouteListenerPortMatching',
    description: 'Multiple HTTP listeners with different ports, each with a different HTTPRoute',
    features: http('HTTPRouteParentRefPort'),
    manifests: ['httproute-listener-port-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = { namespace: INFRA, name: 'httproute-listener-port-matching' };
      const route = (name: string) => [{ namespace: INFRA, name }];
      const at80 = await routesReady(s, { ...gw, listeners: ['listener-1'] }, route('backend-v1'));
      const at8080 = await routesReady(s, { ...gw, listeners: ['listener-2'] }, route('backend-v2'));
      const at8090 = await routesReady(s, { ...gw, listeners: ['listener-4'] }, route('backend-v3'));
      // As upstream: the request's Host names the port, and is sent to the Gateway on that port.
      await expectAll(s, at80, [to(1, { host: 'foo.com', path: '/' })]);
      await expectAll(s, at8080, [
        to(2, { host: 'foo.com:8080', path: '/' }),
        to(2, { host: 'bar.com:8080', path: '/' }),
      ]);
      await expectAll(s, at8090, [
        to(3, { host: 'foo.com:8090', path: '/' }),
        notFound({ host: 'bar.com:8090', path: '/' }),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteQueryParamMatching',
    description: 'A single HTTPRoute with query param matching for different backends',
    features: http('HTTPRouteQueryParamMatching'),
    manifests: ['httproute-query-param-matching.yaml'],
    traffic: true,
    run: oneRoute('query-param-matching', [
      to(1, q('/?animal=whale')),
      to(2, q('/?animal=dolphin')),
      to(3, q('/?animal=dolphin&color=blue')),
      to(3, q('/?ANIMAL=Whale')),
      to(1, q('/?animal=whale&otherparam=irrelevant')),
      to(2, q('/?animal=dolphin&color=yellow')),
      notFound(q('/?color=blue')),
      notFound(q('/?animal=dog')),
      notFound(q('/?animal=whaledolphin')),
      notFound(q('/')),
      to(1, q('/path1?animal=whale')),
      to(2, q('/?animal=whale', { version: 'one' })),
      to(3, q('/path2?animal=whale', { version: 'two' })),
      to(1, q('/path3?animal=shark')),
      to(1, q('/path4?animal=kraken', { version: 'three' })),
      notFound(q('/?animal=shark')),
      notFound(q('/path4?animal=kraken')),
      to(1, q('/path5?animal=hydra')),
      to(3, q('/?animal=hydra', { version: 'four' })),
    ]),
  },
  {
    shortName: 'HTTPRouteMethodMatching',
    description: 'A single HTTPRoute with method matching for different backends',
    features: http('HTTPRouteMethodMatching'),
    manifests: ['httproute-method-matching.yaml'],
    traffic: true,
    run: oneRoute('method-matching', [
      to(1, q('/', undefined, 'POST')),
      to(2, q('/', undefined, 'GET')),
      notFound(q('/', undefined, 'HEAD')),
      to(1, q('/path1', undefined, 'GET')),
      to(2, q('/', { version: 'one' }, 'PUT')),
      to(3, q('/path2', { version: 'two' }, 'POST')),
      to(1, q('/path3', undefined, 'PATCH')),
      to(1, q('/path4', { version: 'three' }, 'DELETE')),
      notFound(q('/', undefined, 'PUT')),
      notFound(q('/path4', undefined, 'DELETE')),
      to(1, q('/path5', undefined, 'PATCH')),
      to(2, q('/', { version: 'four' }, 'PATCH')),
    ]),
  },
  {
    shortName: 'HTTPRouteResponseHeaderModifier',
    description: 'An HTTPRoute has response header modifier filters applied correctly',
    features: http('HTTPRouteResponseHeaderModification'),
    manifests: ['httproute-response-header-modifier.yaml'],
    traffic: true,
    run: oneRoute('response-header-modifier', [
      resp(
        '/set',
        { 'Some-Other-Header': 'val' },
        { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
      ),
      resp(
        '/set',
        { 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' },
        { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
      ),
      resp(
        '/add',
        { 'Some-Other-Header': 'val' },
        { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'add-appends-values' } },
      ),
      resp(
        '/add',
        { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value' },
        { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value,add-appends-values' } },
      ),
      resp('/remove', { 'X-Header-Remove': 'val' }, { absentHeaders: ['X-Header-Remove'] }),
      resp(
        '/multiple',
        {
          'X-Header-Set-2': 'set-val-2',
          'X-Header-Add-2': 'add-val-2',
          'X-Header-Remove-2': 'remove-val-2',
          'Another-Header': 'another-header-val',
          'X-Header-Remove-1': 'val',
        },
        {
          headers: {
            'X-Header-Set-1': 'header-set-1',
            'X-Header-Set-2': 'header-set-2',
            'X-Header-Add-1': 'header-add-1',
            'X-Header-Add-2': 'add-val-2,header-add-2',
            'X-Header-Add-3': 'header-add-3',
            'Another-Header': 'another-header-val',
          },
          absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
        },
      ),
      resp(
        '/case-insensitivity',
        {
          'x-header-set': 'original-val-set',
          'x-header-add': 'original-val-add',
          'x-header-remove': 'original-val-remove',
          'Another-Header': 'another-header-val',
        },
        {
          headers: {
            'X-Header-Set': 'header-set',
            'X-Header-Add': 'original-val-add,header-add',
            'X-Lowercase-Add': 'lowercase-add',
            'X-Mixedcase-Add-1': 'mixedcase-add-1',
            'X-Mixedcase-Add-2': 'mixedcase-add-2',
            'X-Uppercase-Add': 'uppercase-add',
            'Another-Header': 'another-header-val',
          },
          absentHeaders: ['x-header-remove', 'X-Header-Remove'],
        },
      ),
      to(
        1,
        {
          path: '/response-and-request-header-modifiers',
          headers: {
            'X-Header-Remove': 'remove-val',
            'X-Header-Add-Append': 'append-val-1',
            'X-Header-Echo': 'echo',
          },
        },
        {
          backendSetResponseHeaders: {
            'X-Header-Set-2': 'set-val-2',
            'X-Header-Add-2': 'add-val-2',
            'X-Header-Remove-2': 'remove-val-2',
            'Another-Header': 'another-header-val',
            'X-Header-Remove-1': 'remove-val-1',
            'X-Header-Echo': 'echo',
          },
          expectedRequest: {
            path: '/response-and-request-header-modifiers',
            headers: {
              'X-Header-Add': 'header-val-1',
              'X-Header-Set': 'set-overwrites-values',
              'X-Header-Add-Append': 'append-val-1,header-val-2',
              'X-Header-Echo': 'echo',
            },
            absentHeaders: ['X-Header-Remove'],
          },
          response: {
            headers: {
              'X-Header-Set-1': 'header-set-1',
              'X-Header-Set-2': 'header-set-2',
              'X-Header-Add-1': 'header-add-1',
              'X-Header-Add-2': 'add-val-2,header-add-2',
              'Another-Header': 'another-header-val',
              'X-Header-Echo': 'echo',
            },
            absentHeaders: ['X-Header-Remove-1', 'X-Header-Remove-2'],
          },
        },
      ),
    ]),
  },
  {
    shortName: 'HTTPRouteRewritePath',
    description: 'An HTTPRoute with path rewrite filter',
    features: http('HTTPRoutePathRewrite'),
    manifests: ['httproute-rewrite-path.yaml'],
    traffic: true,
    run: oneRoute('rewrite-path', [
      to(1, { path: '/prefix/one/two' }, { expectedRequest: { path: '/one/two' } }),
      to(1, { path: '/strip-prefix/three' }, { expectedRequest: { path: '/three' } }),
      to(1, { path: '/strip-prefix' }, { expectedRequest: { path: '/' } }),
      to(1, { path: '/full/one/two' }, { expectedRequest: { path: '/one' } }),
      ...['/full/rewrite-path-and-modify-headers/test', '/prefix/rewrite-path-and-modify-headers/one'].map(
        (path, i) =>
          to(
            1,
            {
              path,
              headers: {
                'X-Header-Remove': 'remove-val',
                'X-Header-Add-Append': 'append-val-1',
                'X-Header-Set': 'set-val',
              },
            },
            {
              expectedRequest: {
                path: i === 0 ? '/test' : '/prefix/one',
                headers: {
                  'X-Header-Add': 'header-val-1',
                  'X-Header-Add-Append': 'append-val-1,header-val-2',
                  'X-Header-Set': 'set-overwrites-values',
                },
                absentHeaders: ['X-Header-Remove'],
              },
            },
          ),
      ),
    ]),
  },
  {
    shortName: 'HTTPRouteRewriteHost',
    description: 'An HTTPRoute with hostname rewrite filter',
    features: http('HTTPRouteHostRewrite'),
    manifests: ['httproute-rewrite-host.yaml'],
    traffic: true,
    run: oneRoute('rewrite-host', [
      to(
        1,
        { path: '/one', host: 'rewrite.example' },
        { expectedRequest: { path: '/one', host: 'one.example.org' } },
      ),
      to(
        2,
        { path: '/two', host: 'rewrite.example' },
        { expectedRequest: { path: '/two', host: 'example.org' } },
      ),
      to(
        2,
        {
          path: '/rewrite-host-and-modify-headers',
          host: 'rewrite.example',
          headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' },
        },
        {
          expectedRequest: {
            path: '/rewrite-host-and-modify-headers',
            host: 'test.example.org',
            headers: {
              'X-Header-Add': 'header-val-1',
              'X-Header-Add-Append': 'append-val-1,header-val-2',
              'X-Header-Set': 'set-overwrites-values',
            },
            absentHeaders: ['X-Header-Remove'],
          },
        },
      ),
    ]),
  },
  ...(
    [
      [
        'HTTPRouteTimeoutRequest',
        'HTTPRouteRequestTimeout',
        'httproute-timeout-request.yaml',
        'request-timeout',
        '/request-timeout',
        '/disable-request-timeout',
      ],
      [
        'HTTPRouteTimeoutBackendRequest',
        'HTTPRouteBackendTimeout',
        'httproute-timeout-backend-request.yaml',
        'backend-request-timeout',
        '/backend-timeout',
        '/disable-backend-timeout',
      ],
    ] as const
  ).map(([shortName, feature, file, route, limited, lifted]): ConformanceTest => ({
    shortName,
    description: `An HTTPRoute with a ${feature === 'HTTPRouteRequestTimeout' ? 'request' : 'backend request'} timeout: a slower answer is a 504, a timeout of 0s lifts it`,
    features: http(feature),
    manifests: [file],
    traffic: true,
    run: oneRoute(route, [
      { request: { path: limited }, response: { statusCode: 200 }, namespace: INFRA },
      { request: { path: `${limited}?delay=1s` }, response: { statusCode: 504 }, namespace: INFRA },
      { request: { path: `${lifted}?delay=1s` }, response: { statusCode: 200 }, namespace: INFRA },
    ]),
  })),
  {
    shortName: 'HTTPRouteBackendProtocolH2C',
    description: 'A HTTPRoute with a BackendRef that has an appProtocol kubernetes.io/h2c',
    features: http('HTTPRouteBackendProtocolH2C'),
    manifests: ['httproute-backend-protocol-h2c.yaml'],
    traffic: true,
    // The HTTP/2 prior knowledge request reaches infra-backend-v1's h2c port (echo-basic's 3001).
    run: oneRoute('backend-protocol-h2c', [
      to(
        1,
        { path: '/', protocol: 'h2c' },
        { response: { statusCode: 200 }, expectedRequest: { path: '/' } },
      ),
    ]),
  },
];
