/**
 * Core tests of listeners and what they carry, transcribed from upstream v1.6.1: attached routes,
 * listeners added and removed, hostnames, HTTPS with SNI, header modifiers, redirects, and
 * Services whose members come from EndpointSlices.
 */
import type { Expected } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import {
  type ConformanceTest,
  expectAll,
  HTTP_CORE,
  INFRA,
  readyListener,
  routesReady,
  type Suite,
} from '../harness/suite.ts';

const GW_V1 = '/apis/gateway.networking.k8s.io/v1';
const HTTP_ROUTE = [{ kind: 'HTTPRoute' }];
const gw = (name: string) => ({ namespace: INFRA, name });
const sameNs = gw('same-namespace');
const v1 = (
  path: string,
  request: Partial<Expected['request']>,
  expectedRequest?: Expected['expectedRequest'],
): Expected => ({
  request: { path, ...request },
  ...(expectedRequest ? { expectedRequest: { path, ...expectedRequest } } : {}),
  backend: 'infra-backend-v1',
  namespace: INFRA,
});

/** Patches a Gateway's listeners; checks the listener status and that the generation moved. */
async function modifyListeners(
  s: Suite,
  name: string,
  edit: (ls: { name: string }[]) => object[],
  want: Parameters<Suite['status']['gatewayListeners']>[1],
): Promise<void> {
  const path = `${GW_V1}/namespaces/${INFRA}/gateways/${name}`;
  await s.status.gatewayLatest(gw(name));
  const original = (await s.rig.api.get(path)) as {
    metadata: { generation: number };
    spec: { listeners: { name: string }[] };
  };
  await s.rig.api.patch(path, { spec: { listeners: edit(original.spec.listeners) } });
  await s.status.gatewayListeners(gw(name), want);
  await s.status.gatewayLatest(gw(name));
  const updated = (await s.rig.api.get(path)) as { metadata: { generation: number } };
  if (updated.metadata.generation === original.metadata.generation)
    throw new ConformanceFailure('generation should change after an update');
}

/** HTTPRouteRequestHeaderModifier's assertions (upstream's Test, shared with the backendRef variant). */
const requestHeaderModifier = async (s: Suite): Promise<void> => {
  const addr = await routesReady(s, sameNs, [gw('request-header-modifier')]);
  await expectAll(s, addr, [
    v1(
      '/set',
      { headers: { 'Some-Other-Header': 'val' } },
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    ),
    v1(
      '/set',
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'some-other-value' } },
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Set': 'set-overwrites-values' } },
    ),
    v1(
      '/add',
      { headers: { 'Some-Other-Header': 'val' } },
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'add-appends-values' } },
    ),
    v1(
      '/add',
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value' } },
      { headers: { 'Some-Other-Header': 'val', 'X-Header-Add': 'some-other-value,add-appends-values' } },
    ),
    v1('/remove', { headers: { 'X-Header-Remove': 'val' } }, { absentHeaders: ['X-Header-Remove'] }),
    v1(
      '/multiple',
      {
        headers: {
          'X-Header-Set-2': 'set-val-2',
          'X-Header-Add-2': 'add-val-2',
          'X-Header-Remove-2': 'remove-val-2',
          'Another-Header': 'another-header-val',
        },
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
    v1(
      '/case-insensitivity',
      {
        headers: {
          'x-header-set': 'original-val-set',
          'x-header-add': 'original-val-add',
          'x-header-remove': 'original-val-remove',
          'Another-Header': 'another-header-val',
        },
      },
      {
        headers: {
          'X-Header-Set': 'header-set',
          'X-Header-Add': 'original-val-add,header-add',
          'Another-Header': 'another-header-val',
        },
        absentHeaders: ['x-header-remove', 'X-Header-Remove'],
      },
    ),
  ]);
};

export const listenerTests: ConformanceTest[] = [
  {
    shortName: 'GatewayWithAttachedRoutes',
    description: 'A Gateway in the gateway-conformance-infra namespace should be attached to routes.',
    features: HTTP_CORE,
    manifests: ['gateway-with-attached-routes.yaml'],
    traffic: false,
    run: async (s) => {
      await s.status.gatewayListeners(gw('gateway-with-one-attached-route'), [readyListener('http', 1)]);
      const two = gw('gateway-with-two-attached-routes');
      await s.status.gatewayListeners(two, [readyListener('http', 2)]);
      await s.status.routeCondition('HTTPRoute', gw('http-route-not-accepted'), two, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoMatchingListenerHostname',
      });
      const unresolved = gw('unresolved-gateway-with-one-attached-unresolved-route');
      await s.status.gatewayListeners(unresolved, [
        {
          name: 'tls',
          supportedKinds: HTTP_ROUTE,
          attachedRoutes: 1,
          conditions: [
            { type: 'Programmed', status: 'False' },
            { type: 'ResolvedRefs', status: 'False' },
          ],
        },
      ]);
      await s.status.routeCondition('HTTPRoute', gw('http-route-4'), unresolved, {
        type: 'ResolvedRefs',
        status: 'False',
      });
    },
  },
  {
    shortName: 'GatewayModifyListeners',
    description:
      'A Gateway in the gateway-conformance-infra namespace should handle adding and removing listeners.',
    features: ['Gateway'],
    manifests: ['gateway-modify-listeners.yaml'],
    traffic: false,
    run: async (s) => {
      await modifyListeners(
        s,
        'gateway-add-listener',
        (ls) => [
          ...ls,
          {
            name: 'http',
            port: 80,
            protocol: 'HTTP',
            hostname: 'data.test.com',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
        ],
        [readyListener('https', 1), readyListener('http', 1)],
      );
      await modifyListeners(
        s,
        'gateway-remove-listener',
        (ls) => {
          if (ls.length !== 2) throw new ConformanceFailure('the gateway must have 2 listeners');
          return ls.filter((l) => l.name === 'http');
        },
        [readyListener('http', 1)],
      );
    },
  },
  {
    shortName: 'HTTPRouteListenerHostnameMatching',
    description:
      'Multiple HTTP listeners with the same port and different hostnames, each with a different HTTPRoute',
    features: HTTP_CORE,
    manifests: ['httproute-listener-hostname-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const ref = gw('httproute-listener-hostname-matching');
      await routesReady(s, { ...ref, listeners: ['listener-1'] }, [gw('backend-v1')]);
      await routesReady(s, { ...ref, listeners: ['listener-2'] }, [gw('backend-v2')]);
      const addr = await routesReady(s, { ...ref, listeners: ['listener-3', 'listener-4'] }, [
        gw('backend-v3'),
      ]);
      const at = (host: string, backend: string): Expected => ({
        request: { host, path: '/' },
        backend,
        namespace: INFRA,
      });
      const none = (host: string): Expected => ({
        request: { host, path: '/' },
        response: { statusCode: 404 },
      });
      await expectAll(s, addr, [
        at('bar.com', 'infra-backend-v1'),
        at('foo.bar.com', 'infra-backend-v2'),
        at('baz.bar.com', 'infra-backend-v3'),
        at('boo.bar.com', 'infra-backend-v3'),
        at('multiple.prefixes.bar.com', 'infra-backend-v3'),
        at('multiple.prefixes.foo.com', 'infra-backend-v3'),
        none('foo.com'),
        none('no.matching.host'),
      ]);
    },
  },
  {
    shortName: 'HTTPRouteHTTPSListener',
    description:
      'An HTTPRoute attaches to a single Gateway with an HTTPS listener, a request is routed by its SNI and Host',
    features: HTTP_CORE,
    manifests: ['httproute-https-listener.yaml'],
    traffic: true,
    run: async (s) => {
      const ref = gw('same-namespace-with-https-listener');
      const addr = await routesReady(s, ref, [
        gw('httproute-https-test'),
        gw('httproute-https-test-no-hostname'),
      ]);
      const secret = (await s.rig.api.get(
        `/api/v1/namespaces/${INFRA}/secrets/tls-validity-checks-certificate`,
      )) as {
        data?: Record<string, string>;
      };
      const ca = Buffer.from(secret.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
      if (!ca) throw new ConformanceFailure('missing required server certificate pem for the test');
      const cases: [string, number, string][] = [
        ['example.org', 200, 'infra-backend-v1'],
        ['unknown-example.org', 404, ''],
        ['second-example.org', 200, 'infra-backend-v2'],
      ];
      // Each case with its own SNI, as upstream's TLS round tripper sends the host as server name.
      for (const [host, statusCode, backend] of cases) {
        await expectAll(
          s,
          addr,
          [{ request: { host, path: '/' }, response: { statusCode }, backend, namespace: INFRA }],
          {
            ca,
            servername: host,
          },
        );
      }
    },
  },
  {
    shortName: 'HTTPRouteRequestHeaderModifier',
    description: 'An HTTPRoute has request header modifier filters applied correctly',
    features: HTTP_CORE,
    manifests: ['httproute-request-header-modifier.yaml'],
    traffic: true,
    run: requestHeaderModifier,
  },
  {
    // Upstream runs HTTPRouteRequestHeaderModifier's test on a route whose filters are on its backendRefs.
    shortName: 'HTTPRouteBackendRequestHeaderModifier',
    description: 'An HTTPRoute backend has request header modifier filters applied correctly',
    features: [
      ...HTTP_CORE.filter((f) => f !== 'ReferenceGrant'),
      'HTTPRouteBackendRequestHeaderModification',
    ],
    manifests: ['httproute-request-header-modifier-backend.yaml'],
    traffic: true,
    run: requestHeaderModifier,
  },
  {
    shortName: 'HTTPRouteRedirectHostAndStatus',
    description: 'An HTTPRoute with hostname and status redirect filters',
    features: HTTP_CORE,
    manifests: ['httproute-redirect-host-and-status.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [gw('redirect-host-and-status')]);
      await expectAll(s, addr, [
        {
          request: { path: '/hostname-redirect' },
          response: { statusCode: 302 },
          redirectRequest: { host: 'example.org' },
          namespace: INFRA,
        },
        {
          request: { path: '/host-and-status' },
          response: { statusCode: 301 },
          redirectRequest: { host: 'example.org' },
          namespace: INFRA,
        },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteServiceTypes',
    description: 'A single HTTPRoute should be able to route traffic to various service types',
    features: HTTP_CORE,
    manifests: ['httproute-service-types.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [gw('service-types')]);
      // As upstream's setupEndpointSlices: the infra-backend-v1 Pods written into the manual slices, per family.
      const pods = (await s.rig.api.request(
        'GET',
        `/api/v1/namespaces/${INFRA}/pods?labelSelector=${encodeURIComponent('app=infra-backend-v1')}`,
      )) as {
        items: {
          metadata: { name: string; namespace: string; uid: string };
          spec: { nodeName: string };
          status: { podIPs?: { ip: string }[] };
        }[];
      };
      if (!pods.items.length)
        throw new ConformanceFailure("Expected 'infra-backend-v1' to have running Pods");
      for (const family of ['ip4', 'ip6'] as const) {
        for (const prefix of ['manual-endpointslices', 'headless-manual-endpointslices']) {
          const endpoints = pods.items.flatMap((p) =>
            (p.status.podIPs ?? [])
              .filter(({ ip }) => ip.includes(':') === (family === 'ip6'))
              .map(({ ip }) => ({
                addresses: [ip],
                conditions: { ready: true, serving: true, terminating: false },
                nodeName: p.spec.nodeName,
                targetRef: {
                  kind: 'Pod',
                  name: p.metadata.name,
                  namespace: p.metadata.namespace,
                  uid: p.metadata.uid,
                },
              })),
          );
          if (!endpoints.length) continue;
          await s.rig.api.patch(
            `/apis/discovery.k8s.io/v1/namespaces/${INFRA}/endpointslices/${prefix}-${family}`,
            { endpoints },
          );
        }
      }
      await expectAll(
        s,
        addr,
        ['manual-endpointslices', 'headless-manual-endpointslices', 'headless'].map((path) => ({
          request: { path: `/${path}` },
          response: { statusCode: 200 },
          backend: 'infra-backend-v1',
          namespace: INFRA,
        })),
      );
    },
  },
];
