/**
 * GRPCRoute (issue 32, GATEWAY-GRPC): method matches become path matches on the Service port's
 * HTTP/2 pool, header matches and header filters are the HTTPRoute's, and the virtual service
 * takes HTTP/2 from clients; bad names and expressions, filters and fields npl-lb does not serve
 * refuse the route by name; a load balancer without HTTP/2 does not take the kind on its
 * listeners (NotAllowedByListeners, InvalidRouteKinds) and sends no HTTPRoute to an h2c port as
 * HTTP/1.1 (UnsupportedProtocol).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { h2PoolName, l7PoolName } from '../../../src/model/names.ts';
import { supportedFeatures } from '../../../src/source/gateway/features.ts';
import {
  backend,
  grpcRoute,
  INFRA,
  listenerConditions,
  parent,
  parentConditions,
  pass,
  route,
  vsOf,
} from './gateway-support.ts';

const H2 = { ...ALL_HTTP, http2: true };
const GRPC = { support: { http2: true }, http: H2 };
const SVC = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';
const h2Pool = (svc: string, port = 8080) => h2PoolName('c1', { namespace: INFRA, name: svc }, port);

/** grpcroute-exact-method-matching.yaml, as upstream writes it. */
const exact = () =>
  grpcRoute(INFRA, 'exact-matching', {
    parentRefs: [{ name: 'same-namespace' }],
    rules: [
      {
        matches: [{ method: { service: SVC, method: 'Echo' } }],
        backendRefs: [backend('grpc-infra-backend-v1')],
      },
      {
        matches: [{ method: { service: SVC, method: 'EchoTwo' } }],
        backendRefs: [backend('grpc-infra-backend-v2')],
      },
    ],
  });

const oneRule = (rule: Record<string, unknown>, name = 'g') =>
  grpcRoute(INFRA, name, {
    parentRefs: [{ name: 'same-namespace' }],
    rules: [{ backendRefs: [backend('grpc-infra-backend-v1')], ...rule }],
  });

const grpcRoutesOf = (r: ReturnType<typeof pass>, name = 'g') =>
  (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter((x) => x.source === `GRPCRoute ${INFRA}/${name}`);

describe('GRPCRoute', () => {
  it('upstream exact method matching: one exact path per method, to the HTTP/2 pool; HTTP/2 from clients', () => {
    const r = pass({ grpcRoutes: [exact()], ...GRPC });
    assert.deepEqual(parentConditions(r, `${INFRA}/exact-matching`, 'GRPCRoute'), [
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
    ]);
    const vs = vsOf(r, `${INFRA}/same-namespace`)!;
    assert.equal(vs.http2, true);
    assert.deepEqual(
      vs.routes.map((x) => [x.path, x.pathType, x.pool]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
      [
        [`/${SVC}/Echo`, 'Exact', h2Pool('grpc-infra-backend-v1')],
        [`/${SVC}/EchoTwo`, 'Exact', h2Pool('grpc-infra-backend-v2')],
      ],
    );
    assert.ok(r.backends.has(`${INFRA}/grpc-infra-backend-v1`));
    const kinds = r.gateways.get(`${INFRA}/same-namespace`)!.listeners[0]!.supportedKinds.map((k) => k.kind);
    assert.deepEqual(kinds, ['HTTPRoute', 'GRPCRoute']);
  });

  it('a service alone is its path prefix, a method alone or an expression a path expression, none every request', () => {
    const paths = (method: Record<string, unknown> | undefined) =>
      grpcRoutesOf(pass({ grpcRoutes: [oneRule({ matches: [method ? { method } : {}] })], ...GRPC })).map(
        (x) => [x.path, x.pathType],
      );
    assert.deepEqual(paths({ service: SVC }), [[`/${SVC}`, 'Prefix']]);
    assert.deepEqual(paths({ method: 'Echo' }), [['^/[^/]+/Echo$', 'RegularExpression']]);
    assert.deepEqual(paths({ type: 'RegularExpression', service: '.*Echo', method: 'Echo(Two)?' }), [
      ['^/(?:.*Echo)/(?:Echo(Two)?)$', 'RegularExpression'],
    ]);
    assert.deepEqual(paths(undefined), [['/', 'Prefix']]);
    // The rule without matches (the schema's default) takes every request too.
    assert.deepEqual(
      grpcRoutesOf(pass({ grpcRoutes: [oneRule({})], ...GRPC })).map((x) => [x.path, x.pathType]),
      [['/', 'Prefix']],
    );
  });

  it('header matches and header filters are carried; weights split the HTTP/2 pools', () => {
    const r = pass({
      grpcRoutes: [
        oneRule({
          matches: [{ headers: [{ name: 'version', value: 'two' }] }],
          filters: [
            {
              type: 'ResponseHeaderModifier',
              responseHeaderModifier: { set: [{ name: 'x-a', value: '1' }] },
            },
          ],
          backendRefs: [
            backend('grpc-infra-backend-v1', 8080, { weight: 70 }),
            backend('grpc-infra-backend-v2', 8080, { weight: 30 }),
            backend('grpc-infra-backend-v3', 8080, { weight: 0 }),
          ],
        }),
      ],
      ...GRPC,
    });
    const [x] = grpcRoutesOf(r);
    assert.deepEqual(x!.headers, [{ name: 'version', value: 'two', type: 'Exact' }]);
    assert.deepEqual(x!.responseHeaders?.set, [{ name: 'x-a', value: '1' }]);
    assert.deepEqual(x!.backends, [
      { pool: h2Pool('grpc-infra-backend-v1'), weight: 70 },
      { pool: h2Pool('grpc-infra-backend-v2'), weight: 30 },
    ]);
  });

  it('refuses bad names, bad expressions, filters and fields it does not serve, naming them; nothing reaches the model', () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { matches: [{ method: { service: 'a/b', method: 'Echo' } }] },
        /method\.service: "a\/b" is not a gRPC service name/,
      ],
      [
        { matches: [{ method: { service: SVC, method: 'Echo Two' } }] },
        /method\.method: .* is not a gRPC method name/,
      ],
      [{ matches: [{ method: { type: 'RegularExpression', service: '(' } }] }, /method\.service/],
      [{ matches: [{ method: { type: 'RegularExpression', method: 'a/b' } }] }, /holds no '\/'/],
      [{ matches: [{ method: { type: 'Prefix', service: SVC } }] }, /method\.type Prefix/],
      [{ matches: [{ headers: [{ name: 'bad header', value: 'x' }] }] }, /headers\[0\]\.name/],
      [{ matches: [{ headers: [{ name: 'x', value: 'a\r\nb' }] }] }, /headers\[0\]\.value/],
      [
        { filters: [{ type: 'RequestMirror', requestMirror: { backendRef: { name: 'x' } } }] },
        /RequestMirror is not supported/,
      ],
      [{ filters: [{ type: 'RequestRedirect', requestRedirect: {} }] }, /RequestRedirect is not supported/],
      [{ sessionPersistence: { type: 'Cookie' } }, /sessionPersistence: not supported/],
    ];
    for (const [rule, message] of cases) {
      const r = pass({ grpcRoutes: [oneRule(rule)], ...GRPC });
      assert.equal(grpcRoutesOf(r).length, 0, JSON.stringify(rule));
      const st = r.routes.get(`GRPCRoute ${INFRA}/g`)!.parents[0]!.conditions[0]!;
      assert.equal(
        `${st.type}=${st.status}/${st.reason}`,
        'Accepted=false/UnsupportedValue',
        JSON.stringify(rule),
      );
      assert.match(st.message, message);
    }
  });

  it('backendRefs resolve as HTTPRoute ones: a missing Service, another kind, another namespace without a grant', () => {
    const refs = (b: Record<string, unknown>) =>
      parentConditions(
        pass({ grpcRoutes: [oneRule({ backendRefs: [b] })], ...GRPC }),
        `${INFRA}/g`,
        'GRPCRoute',
      )[0];
    assert.deepEqual(refs(backend('nope')), ['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
    assert.deepEqual(refs({ ...backend('x'), kind: 'Foo', group: 'example.com' }), [
      'Accepted=True/Accepted',
      'ResolvedRefs=False/InvalidKind',
    ]);
    assert.deepEqual(refs(backend('web-backend', 8080, { namespace: 'gateway-conformance-web-backend' })), [
      'Accepted=True/Accepted',
      'ResolvedRefs=False/RefNotPermitted',
    ]);
  });

  it('a load balancer that cannot express a method alone (no path expressions: Avi) refuses that route, naming it', () => {
    const avi = { ...aviCapabilities(false).http!, http2: true };
    const r = pass({
      grpcRoutes: [oneRule({ matches: [{ method: { method: 'Echo' } }] })],
      support: { http2: true },
      http: avi,
    });
    assert.equal(grpcRoutesOf(r).length, 0);
    assert.match(
      JSON.stringify(r.routes.get(`GRPCRoute ${INFRA}/g`)!.parents[0]!.conditions),
      /UnsupportedValue.*RegularExpression/,
    );
  });

  it('without HTTP/2 (BIG-IP): listeners do not take the kind, and an HTTPRoute to an h2c port is not sent HTTP/1.1', () => {
    const r = pass({ grpcRoutes: [exact()], http: ALL_HTTP });
    assert.deepEqual(parentConditions(r, `${INFRA}/exact-matching`, 'GRPCRoute'), [
      // Its backends are HTTP/2 (gRPC) and this load balancer speaks HTTP/1.1 to members.
      ['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=False/UnsupportedProtocol'],
    ]);
    assert.equal(vsOf(r, `${INFRA}/same-namespace`)?.routes.length ?? 0, 0);
    assert.equal(vsOf(r, `${INFRA}/same-namespace`)?.http2, undefined);
    // A listener that names the kind says it cannot take it.
    const gw = gatewaySchema.parse({
      metadata: { namespace: INFRA, name: 'kinds', generation: 1 },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          { name: 'grpc', port: 80, protocol: 'HTTP', allowedRoutes: { kinds: [{ kind: 'GRPCRoute' }] } },
        ],
      },
    });
    assert.ok(
      listenerConditions(pass({ gateways: [gw], http: ALL_HTTP }), `${INFRA}/kinds`, 'grpc').includes(
        'ResolvedRefs=False/InvalidRouteKinds',
      ),
    );
    assert.ok(
      !listenerConditions(pass({ gateways: [gw], ...GRPC }), `${INFRA}/kinds`, 'grpc').includes(
        'ResolvedRefs=False/InvalidRouteKinds',
      ),
    );
    // infra-backend-v1 port 8081 is appProtocol kubernetes.io/h2c (the base manifests).
    const h2c = route(INFRA, 'h2c', {
      parentRefs: [parent('same-namespace')],
      rules: [{ backendRefs: [backend('infra-backend-v1', 8081)] }],
    });
    const without = pass({ routes: [h2c], http: ALL_HTTP });
    assert.deepEqual(parentConditions(without, `${INFRA}/h2c`)[0], [
      'Accepted=True/Accepted',
      'ResolvedRefs=False/UnsupportedProtocol',
    ]);
    const withH2 = pass({ routes: [h2c], ...GRPC });
    assert.equal(
      vsOf(withH2, `${INFRA}/same-namespace`)!.routes[0]!.pool,
      h2PoolName('c1', { namespace: INFRA, name: 'infra-backend-v1' }, 'second-port'),
    );
    // Its HTTP/1.1 port keeps the HTTP/1.1 pool.
    const plain = route(INFRA, 'plain', {
      parentRefs: [parent('same-namespace')],
      rules: [{ backendRefs: [backend('infra-backend-v1', 8080)] }],
    });
    assert.equal(
      vsOf(pass({ routes: [plain], ...GRPC }), `${INFRA}/same-namespace`)!.routes[0]!.pool,
      l7PoolName('c1', { namespace: INFRA, name: 'infra-backend-v1' }, 'first-port'),
    );
  });

  it('GatewayClass claims GRPCRoute and HTTP/2 backends only where the load balancer speaks HTTP/2', () => {
    const support = { HTTP: true, HTTPS: true, TLS: false, TCP: false, UDP: false };
    const claims = supportedFeatures({ ...support, http2: true }, H2);
    assert.ok(claims.includes('GRPCRoute') && claims.includes('HTTPRouteBackendProtocolH2C'));
    const none = supportedFeatures(support, ALL_HTTP);
    assert.ok(!none.includes('GRPCRoute') && !none.includes('HTTPRouteBackendProtocolH2C'));
  });
});
