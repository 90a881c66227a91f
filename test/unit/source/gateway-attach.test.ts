/**
 * The Gateway API source against the conformance suite's base manifests: class and Gateway status,
 * route attachment and every parent reason, hostname intersection, listener isolation,
 * cross-namespace references with and without a ReferenceGrant, listener certificates and
 * conflicts. Modelled on kubernetes-sigs/gateway-api conformance/tests (v1.6).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { servicesToAnnotate } from '../../../src/source/annotated-services.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { resolveRequest } from '../../../src/model/http-match.ts';
import { type TestCertificate, testCertificate } from '../../support/certs.ts';
import {
  APP,
  backend,
  baseGateways,
  baseView,
  grant,
  INFRA,
  listenerConditions,
  parent,
  parentConditions,
  pass,
  pool,
  route,
  vsOf,
  WEB,
} from './gateway-support.ts';

const ACCEPTED = ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'];
const simple = (
  ns: string,
  name: string,
  gw: string,
  be = backend('infra-backend-v1', 8080, { namespace: INFRA }),
) => route(ns, name, { parentRefs: [parent(gw)], rules: [{ backendRefs: [be] }] });

describe('Gateway API: classes, Gateways and attachment (conformance-modelled)', () => {
  it('GatewayClass: ours Accepted with SupportedVersion; another controller’s left alone', () => {
    const r = pass({});
    assert.deepEqual(
      r.classes.get('npl-lb')?.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=true/Accepted', 'SupportedVersion=true/SupportedVersion'],
    );
    assert.equal(r.classes.has('other'), false);
    const sv = (v: string) => pass({ bundleVersion: v }).classes.get('npl-lb')!.conditions[1]!;
    assert.deepEqual([sv('v1.6.1').status, sv('v1.6.1').message], [true, 'Gateway API v1.6.1']);
    assert.deepEqual([sv('v1.7.0').status, sv('v1.7.0').reason], [false, 'UnsupportedVersion']);
    assert.equal(
      pass({ bundleVersion: 'v1.7.0' }).classes.get('npl-lb')!.conditions[0]!.status,
      true,
      'still served',
    );
  });

  it('HTTPRouteSimpleSameNamespace: attached, resolved, served; the listener counts it; the Gateway is programmed with its VIP', () => {
    const r = pass({
      routes: [
        simple(INFRA, 'gateway-conformance-infra-test', 'same-namespace', backend('infra-backend-v1')),
      ],
    });
    assert.deepEqual(parentConditions(r, `${INFRA}/gateway-conformance-infra-test`), [ACCEPTED]);
    const gw = r.gateways.get(`${INFRA}/same-namespace`)!;
    assert.equal(gw.vip, '192.0.2.10');
    assert.deepEqual(
      gw.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=true/Accepted', 'Programmed=true/Programmed'],
    );
    assert.deepEqual(gw.listeners[0], {
      name: 'http',
      supportedKinds: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' }],
      attachedRoutes: 1,
      conditions: gw.listeners[0]!.conditions,
    });
    assert.deepEqual(listenerConditions(r, `${INFRA}/same-namespace`, 'http'), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=False/NoConflicts',
    ]);
    const vs = vsOf(r, `${INFRA}/same-namespace`)!;
    assert.equal(vs.vip, '192.0.2.10');
    assert.equal(
      resolveRequest(vs, { host: 'any.example', path: '/' }).pool,
      pool(INFRA, 'infra-backend-v1'),
    );
    assert.ok(r.backends.has(`${INFRA}/infra-backend-v1`), 'the backend is annotated for NodePortLocal');
  });

  it('allowedRoutes: Same refuses another namespace (NotAllowedByListeners); All takes it; Selector by namespace labels', () => {
    const routes = [
      simple(WEB, 'to-same', 'same-namespace'),
      simple(WEB, 'to-all', 'all-namespaces'),
      simple(WEB, 'to-selector', 'backend-namespaces'),
      simple(INFRA, 'infra-to-selector', 'backend-namespaces'),
    ];
    const grants = [grant(INFRA, 'HTTPRoute', WEB, 'Service')];
    const r = pass({ routes, grants });
    assert.deepEqual(parentConditions(r, `${WEB}/to-same`), [
      ['Accepted=False/NotAllowedByListeners', 'ResolvedRefs=True/ResolvedRefs'],
    ]);
    assert.deepEqual(parentConditions(r, `${WEB}/to-all`), [ACCEPTED]);
    assert.deepEqual(parentConditions(r, `${WEB}/to-selector`), [ACCEPTED]);
    assert.deepEqual(
      parentConditions(r, `${INFRA}/infra-to-selector`)[0]![0],
      'Accepted=False/NotAllowedByListeners',
    );
    // The label goes: the route no longer attaches, without a restart.
    const relabelled = pass({ routes, grants, labels: { [WEB]: { 'gateway-conformance': 'elsewhere' } } });
    assert.deepEqual(
      parentConditions(relabelled, `${WEB}/to-selector`)[0]![0],
      'Accepted=False/NotAllowedByListeners',
    );
    assert.equal(r.gateways.get(`${INFRA}/same-namespace`)!.listeners[0]!.attachedRoutes, 0);
  });

  it('parentRefs that match no listener: NoMatchingParent by sectionName and by port', () => {
    const r = pass({
      routes: [
        route(INFRA, 'bad-section', {
          parentRefs: [parent('same-namespace', { sectionName: 'nope' })],
          rules: [{ backendRefs: [backend('infra-backend-v1')] }],
        }),
        route(INFRA, 'bad-port', {
          parentRefs: [parent('same-namespace', { port: 81 })],
          rules: [{ backendRefs: [backend('infra-backend-v1')] }],
        }),
        route(INFRA, 'good-port', {
          parentRefs: [parent('same-namespace', { port: 80, sectionName: 'http' })],
          rules: [{ backendRefs: [backend('infra-backend-v1')] }],
        }),
        route(INFRA, 'not-ours', {
          parentRefs: [parent('nonexistent')],
          rules: [{ backendRefs: [backend('infra-backend-v1')] }],
        }),
      ],
    });
    assert.deepEqual(parentConditions(r, `${INFRA}/bad-section`)[0]![0], 'Accepted=False/NoMatchingParent');
    assert.deepEqual(parentConditions(r, `${INFRA}/bad-port`)[0]![0], 'Accepted=False/NoMatchingParent');
    assert.deepEqual(parentConditions(r, `${INFRA}/good-port`), [ACCEPTED]);
    assert.equal(
      r.routes.has(`HTTPRoute ${INFRA}/not-ours`),
      false,
      'no status for a parent that is not ours',
    );
  });

  it('backendRefs: unknown kind, missing Service, missing port, cross-namespace without a grant answer 500 with the reason; a grant fixes it', () => {
    const mk = (name: string, be: Record<string, unknown>) =>
      route(INFRA, name, {
        parentRefs: [parent('same-namespace')],
        hostnames: [`${name}.example`],
        rules: [{ backendRefs: [be] }],
      });
    const routes = [
      mk('unknown-kind', backend('infra-backend-v1', 8080, { group: 'unknown.example', kind: 'Unknown' })),
      mk('nonexistent', backend('nonexistent-backend')),
      mk('no-port', backend('infra-backend-v1', 9999)),
      mk('cross', backend('app-backend-v1', 8080, { namespace: APP })),
    ];
    const r = pass({ routes });
    const reason = (n: string) => parentConditions(r, `${INFRA}/${n}`)[0]!;
    assert.deepEqual(reason('unknown-kind'), ['Accepted=True/Accepted', 'ResolvedRefs=False/InvalidKind']);
    assert.deepEqual(reason('nonexistent'), ['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
    assert.deepEqual(reason('no-port'), ['Accepted=True/Accepted', 'ResolvedRefs=False/BackendNotFound']);
    assert.deepEqual(reason('cross'), ['Accepted=True/Accepted', 'ResolvedRefs=False/RefNotPermitted']);
    const vs = vsOf(r, `${INFRA}/same-namespace`)!;
    for (const n of ['unknown-kind', 'nonexistent', 'no-port', 'cross']) {
      assert.equal(resolveRequest(vs, { host: `${n}.example`, path: '/' }).status, 500, n);
    }
    assert.equal(
      r.backends.has(`${APP}/app-backend-v1`),
      false,
      'a Service we may not reach is not annotated',
    );
    // A ReferenceGrant from HTTPRoutes of infra to Services of app: resolved and served.
    const granted = pass({ routes, grants: [grant(APP, 'HTTPRoute', INFRA, 'Service', 'app-backend-v1')] });
    assert.deepEqual(parentConditions(granted, `${INFRA}/cross`), [ACCEPTED]);
    assert.equal(
      resolveRequest(vsOf(granted, `${INFRA}/same-namespace`)!, { host: 'cross.example', path: '/' }).pool,
      pool(APP, 'app-backend-v1'),
    );
    // A grant for another Service name, or from another kind, does not count.
    const wrong = pass({
      routes,
      grants: [
        grant(APP, 'HTTPRoute', INFRA, 'Service', 'app-backend-v2'),
        grant(APP, 'GRPCRoute', INFRA, 'Service'),
      ],
    });
    assert.deepEqual(parentConditions(wrong, `${INFRA}/cross`)[0]![1], 'ResolvedRefs=False/RefNotPermitted');
  });

  it('HTTPRouteHostnameIntersection: listener and route hostnames meet; none in common is NoMatchingListenerHostname', () => {
    const gw = gatewaySchema.parse({
      metadata: { namespace: INFRA, name: 'httproute-hostname-intersection', generation: 1 },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          {
            name: 'listener-1',
            port: 80,
            protocol: 'HTTP',
            hostname: 'very.specific.com',
            allowedRoutes: { namespaces: { from: 'Same' } },
          },
          {
            name: 'listener-2',
            port: 80,
            protocol: 'HTTP',
            hostname: '*.wildcard.io',
            allowedRoutes: { namespaces: { from: 'Same' } },
          },
          {
            name: 'listener-3',
            port: 80,
            protocol: 'HTTP',
            hostname: '*.anotherwildcard.io',
            allowedRoutes: { namespaces: { from: 'Same' } },
          },
        ],
      },
    });
    const p = parent('httproute-hostname-intersection');
    const routes = [
      route(INFRA, 'specific-host-matches-listener-specific-host', {
        parentRefs: [p],
        hostnames: ['non.matching.com', 'very.specific.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/s1' } }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'specific-host-matches-listener-wildcard-host', {
        parentRefs: [p],
        hostnames: ['foo.wildcard.io', 'bar.wildcard.io', 'foo.bar.wildcard.io'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/s2' } }],
            backendRefs: [backend('infra-backend-v2')],
          },
        ],
      }),
      route(INFRA, 'wildcard-host-matches-listener-specific-host', {
        parentRefs: [p],
        hostnames: ['non.matching.com', '*.specific.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/s3' } }],
            backendRefs: [backend('infra-backend-v3')],
          },
        ],
      }),
      route(INFRA, 'wildcard-host-matches-listener-wildcard-host', {
        parentRefs: [p],
        hostnames: ['*.anotherwildcard.io'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/s4' } }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'no-intersecting-hosts', {
        parentRefs: [p],
        hostnames: ['specific.but.wrong.com', 'wildcard.io'],
        rules: [{ backendRefs: [backend('infra-backend-v1')] }],
      }),
    ];
    const r = pass({ gateways: [gw], routes });
    assert.deepEqual(
      parentConditions(r, `${INFRA}/no-intersecting-hosts`)[0]![0],
      'Accepted=False/NoMatchingListenerHostname',
    );
    const vs = vsOf(r, `${INFRA}/httproute-hostname-intersection`)!;
    const to = (host: string, path: string) => resolveRequest(vs, { host, path });
    assert.equal(to('very.specific.com', '/s1').pool, pool(INFRA, 'infra-backend-v1'));
    assert.equal(to('non.matching.com', '/s1').status, 404);
    assert.equal(to('foo.wildcard.io', '/s2').pool, pool(INFRA, 'infra-backend-v2'));
    assert.equal(to('foo.bar.wildcard.io', '/s2').pool, pool(INFRA, 'infra-backend-v2'));
    assert.equal(to('very.specific.com', '/s3').pool, pool(INFRA, 'infra-backend-v3'));
    assert.equal(to('non.matching.com', '/s3').status, 404);
    assert.equal(to('foo.anotherwildcard.io', '/s4').pool, pool(INFRA, 'infra-backend-v1'));
    assert.equal(to('wildcard.io', '/').status, 404);
  });

  it('GatewayHTTPListenerIsolation: a request goes only to the routes of the most specific listener', () => {
    const gw = gatewaySchema.parse({
      metadata: { namespace: INFRA, name: 'http-listener-isolation', generation: 1 },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          {
            name: 'empty-hostname',
            port: 80,
            protocol: 'HTTP',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
          {
            name: 'wildcard-example-com',
            port: 80,
            protocol: 'HTTP',
            hostname: '*.example.com',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
          {
            name: 'wildcard-foo-example-com',
            port: 80,
            protocol: 'HTTP',
            hostname: '*.foo.example.com',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
          {
            name: 'abc-foo-example-com',
            port: 80,
            protocol: 'HTTP',
            hostname: 'abc.foo.example.com',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
        ],
      },
    });
    const at = (name: string, section: string, path: string, svc: string, ns = INFRA) =>
      route(ns, name, {
        parentRefs: [parent('http-listener-isolation', { sectionName: section })],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: path } }],
            backendRefs: [backend(svc, 8080, { namespace: ns })],
          },
        ],
      });
    const r = pass({
      gateways: [gw],
      routes: [
        at('attaches-to-empty-hostname', 'empty-hostname', '/empty-hostname', 'infra-backend-v1'),
        at(
          'attaches-to-wildcard-example-com',
          'wildcard-example-com',
          '/wildcard-example-com',
          'infra-backend-v2',
        ),
        at(
          'attaches-to-wildcard-foo-example-com',
          'wildcard-foo-example-com',
          '/wildcard-foo-example-com',
          'infra-backend-v3',
        ),
        at(
          'attaches-to-abc-foo-example-com',
          'abc-foo-example-com',
          '/abc-foo-example-com',
          'app-backend-v1',
          APP,
        ),
      ],
    });
    const vs = vsOf(r, `${INFRA}/http-listener-isolation`)!;
    const status = (host: string, path: string) => resolveRequest(vs, { host, path }).status;
    assert.equal(status('bar.com', '/empty-hostname'), 200);
    assert.equal(status('bar.com', '/wildcard-example-com'), 404);
    assert.equal(status('bar.example.com', '/wildcard-example-com'), 200);
    assert.equal(status('bar.example.com', '/empty-hostname'), 404, 'isolated from the catch-all listener');
    assert.equal(status('bar.foo.example.com', '/wildcard-foo-example-com'), 200);
    assert.equal(status('bar.foo.example.com', '/wildcard-example-com'), 404);
    assert.equal(status('abc.foo.example.com', '/abc-foo-example-com'), 200);
    assert.equal(status('abc.foo.example.com', '/wildcard-foo-example-com'), 404);

    // ...-with-hostname-intersection: every route names all four hosts. Each is still attached and
    // counted where its hostnames meet the listener's, but serves only the hosts its own listener is
    // the most specific for (before, the catch-all listener's route answered bar.example.com).
    const hosts = ['bar.com', '*.example.com', '*.foo.example.com', 'abc.foo.example.com'];
    const named = (name: string, section: string, path: string) => {
      const x = at(name, section, path, 'infra-backend-v1');
      return { ...x, spec: { ...x.spec, hostnames: hosts } };
    };
    const r2 = pass({
      gateways: [gw],
      routes: [
        named('e', 'empty-hostname', '/empty-hostname'),
        named('w', 'wildcard-example-com', '/wildcard-example-com'),
        named('wf', 'wildcard-foo-example-com', '/wildcard-foo-example-com'),
        named('a', 'abc-foo-example-com', '/abc-foo-example-com'),
      ],
    });
    const vs2 = vsOf(r2, `${INFRA}/http-listener-isolation`)!;
    const paths = [
      '/empty-hostname',
      '/wildcard-example-com',
      '/wildcard-foo-example-com',
      '/abc-foo-example-com',
    ];
    for (const [host, served] of [
      ['bar.com', '/empty-hostname'],
      ['bar.example.com', '/wildcard-example-com'],
      ['bar.foo.example.com', '/wildcard-foo-example-com'],
      ['abc.foo.example.com', '/abc-foo-example-com'],
    ] as const) {
      for (const path of paths) {
        assert.equal(
          resolveRequest(vs2, { host, path }).status,
          path === served ? 200 : 404,
          `${host}${path}`,
        );
      }
    }
    const attached = r2.gateways
      .get(`${INFRA}/http-listener-isolation`)!
      .listeners.map((l) => l.attachedRoutes);
    assert.deepEqual(attached, [1, 1, 1, 1], 'each route still counted on its listener');
  });
});

describe('Gateway API: listeners (conformance-modelled)', () => {
  let cert: TestCertificate;
  before(async () => {
    cert = await testCertificate({ dns: ['*.wildcard.org', 'second-example.org', 'example.org'] });
  });

  it('HTTPS listeners: certificates resolved from the Secret; missing, cross-namespace without a grant, wrong kind: ResolvedRefs False and not programmed', () => {
    const httpsGw = `${INFRA}/same-namespace-with-https-listener`;
    const missing = pass({});
    assert.deepEqual(listenerConditions(missing, httpsGw, 'https'), [
      'Accepted=True/Accepted',
      'Programmed=False/Invalid',
      'ResolvedRefs=False/InvalidCertificateRef',
      'Conflicted=False/NoConflicts',
    ]);
    assert.equal(vsOf(missing, httpsGw, 'HTTPS', 443), undefined);

    const secrets = [{ namespace: INFRA, name: 'tls-validity-checks-certificate', cert }];
    const ok = pass({
      secrets,
      routes: [
        route(INFRA, 'r', {
          parentRefs: [parent('same-namespace-with-https-listener')],
          hostnames: ['second-example.org'],
          rules: [{ backendRefs: [backend('infra-backend-v1')] }],
        }),
      ],
    });
    assert.deepEqual(listenerConditions(ok, httpsGw, 'https')[2], 'ResolvedRefs=True/ResolvedRefs');
    const vs = vsOf(ok, httpsGw, 'HTTPS', 443)!;
    assert.deepEqual(vs.certificates, ['c1--gateway-conformance-infra.tls-validity-checks-certificate']);
    assert.deepEqual(
      ok.certificates.map((c) => c.name),
      vs.certificates,
    );
    assert.equal(
      resolveRequest(vs, { host: 'second-example.org', path: '/' }).pool,
      pool(INFRA, 'infra-backend-v1'),
    );

    const cross = gatewaySchema.parse({
      metadata: { namespace: INFRA, name: 'gateway-secret-reference-grant', generation: 1 },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            tls: { certificateRefs: [{ name: 'certificate', namespace: WEB }] },
          },
          {
            name: 'https-bad-kind',
            port: 8443,
            protocol: 'HTTPS',
            tls: { certificateRefs: [{ group: 'example.com', kind: 'Vault', name: 'x' }] },
          },
        ],
      },
    });
    const webSecret = [{ namespace: WEB, name: 'certificate', cert }];
    const refused = pass({ gateways: [cross], secrets: webSecret });
    assert.deepEqual(
      listenerConditions(refused, `${INFRA}/gateway-secret-reference-grant`, 'https')[2],
      'ResolvedRefs=False/RefNotPermitted',
    );
    assert.deepEqual(
      listenerConditions(refused, `${INFRA}/gateway-secret-reference-grant`, 'https-bad-kind')[2],
      'ResolvedRefs=False/InvalidCertificateRef',
    );
    const allowed = pass({
      gateways: [cross],
      secrets: webSecret,
      grants: [grant(WEB, 'Gateway', INFRA, 'Secret', 'certificate')],
    });
    assert.deepEqual(
      listenerConditions(allowed, `${INFRA}/gateway-secret-reference-grant`, 'https')[1],
      'Programmed=True/Programmed',
    );
  });

  it('unsupported protocols and route kinds, conflicts, and a Gateway without a VIP', () => {
    const gw = gatewaySchema.parse({
      metadata: { namespace: INFRA, name: 'mixed', generation: 3 },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          {
            name: 'http',
            port: 80,
            protocol: 'HTTP',
            allowedRoutes: { kinds: [{ kind: 'HTTPRoute' }, { kind: 'TCPRoute' }] },
          },
          { name: 'udp', port: 53, protocol: 'UDP' },
          { name: 'weird', port: 81, protocol: 'example.com/FOO' },
          { name: 'tcp-on-80', port: 80, protocol: 'TCP' },
          { name: 'a', port: 8080, protocol: 'HTTP', hostname: 'a.example' },
          { name: 'a-again', port: 8080, protocol: 'HTTP', hostname: 'a.example' },
        ],
      },
    });
    const r = pass({ gateways: [gw], support: { TCP: true } });
    const c = (l: string) => listenerConditions(r, `${INFRA}/mixed`, l);
    assert.equal(c('http')[2], 'ResolvedRefs=False/InvalidRouteKinds');
    assert.equal(c('http')[3], 'Conflicted=True/ProtocolConflict');
    assert.deepEqual(r.gateways.get(`${INFRA}/mixed`)!.listeners[0]!.supportedKinds, [
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
    ]);
    assert.equal(
      c('udp')[0],
      'Accepted=False/UnsupportedProtocol',
      'UDP where the adapter has none is refused, not dropped',
    );
    assert.equal(c('weird')[0], 'Accepted=False/UnsupportedProtocol');
    assert.equal(c('a')[3], 'Conflicted=True/HostnameConflict');
    assert.deepEqual(
      r.gateways.get(`${INFRA}/mixed`)!.conditions.map((x) => `${x.type}=${x.status}/${x.reason}`),
      ['Accepted=false/ListenersNotValid', 'Programmed=false/Invalid'],
    );
    const novip = pass({ vips: { [`${INFRA}/same-namespace`]: undefined } });
    assert.deepEqual(
      novip.gateways
        .get(`${INFRA}/same-namespace`)!
        .conditions.map((x) => `${x.type}=${x.status}/${x.reason}`),
      ['Accepted=true/Accepted', 'Programmed=false/AddressNotAssigned'],
    );
    assert.equal(vsOf(novip, `${INFRA}/same-namespace`), undefined);
  });
});

describe('Gateway API: spec.infrastructure', () => {
  it('a parametersRef npl-lb cannot use (GatewayInvalidParametersRef): Accepted=False/InvalidParameters, nothing programmed', () => {
    const withRef = baseGateways().map((g) =>
      g.metadata.name === 'same-namespace'
        ? {
            ...g,
            spec: {
              ...g.spec,
              infrastructure: { parametersRef: { group: '', kind: 'ConfigMap', name: 'does-not-exist' } },
            },
          }
        : g,
    );
    const r = pass({
      gateways: withRef,
      routes: [
        route(INFRA, 'r', {
          parentRefs: [{ name: 'same-namespace' }],
          rules: [{ backendRefs: [{ name: 'infra-backend-v1', port: 8080 }] }],
        }),
      ],
    });
    const gw = r.gateways.get(`${INFRA}/same-namespace`)!;
    assert.deepEqual(
      gw.conditions.map((x) => `${x.type}=${x.status}/${x.reason}`),
      ['Accepted=false/InvalidParameters', 'Programmed=false/Invalid'],
    );
    assert.match(gw.conditions[0]!.message, /ConfigMap does-not-exist/);
    assert.equal(vsOf(r, `${INFRA}/same-namespace`), undefined, 'nothing served');
    // Without the reference the same Gateway is accepted and served.
    const plain = pass({
      routes: [
        route(INFRA, 'r', {
          parentRefs: [{ name: 'same-namespace' }],
          rules: [{ backendRefs: [{ name: 'infra-backend-v1', port: 8080 }] }],
        }),
      ],
    });
    assert.equal(plain.gateways.get(`${INFRA}/same-namespace`)!.conditions[0]!.reason, 'Accepted');
    assert.ok(vsOf(plain, `${INFRA}/same-namespace`));
  });
});

describe('Gateway API: the namespaces npl-lb serves', () => {
  it('a Gateway or route in an excluded namespace is not ours, and a backend there is not reached nor annotated', () => {
    const cfg = parseControllerConfig(
      `clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\nnamespaces: {exclude: [${WEB}]}\n`,
    );
    const view = baseView({
      httpRoutes: [
        simple(WEB, 'from-excluded', 'all-namespaces'),
        simple(INFRA, 'to-excluded', 'same-namespace', backend('web-backend', 8080, { namespace: WEB })),
        simple(INFRA, 'served', 'same-namespace'),
      ],
      referenceGrants: [grant(WEB, 'HTTPRoute', INFRA, 'Service')],
    });
    const r = buildDesired(view, cfg).gateways!;
    assert.equal(
      r.routes.has(`HTTPRoute ${WEB}/from-excluded`),
      false,
      'a route there gets no status from us',
    );
    assert.equal(r.gateways.get(`${INFRA}/all-namespaces`)!.listeners[0]!.attachedRoutes, 0);
    assert.deepEqual(
      parentConditions(r, `${INFRA}/to-excluded`)[0]![1],
      'ResolvedRefs=False/BackendNotFound',
    );
    assert.deepEqual(parentConditions(r, `${INFRA}/served`), [ACCEPTED]);
    assert.deepEqual(
      [...servicesToAnnotate(view, cfg)].sort(),
      [`${INFRA}/infra-backend-v1`],
      'only the served backend is annotated',
    );
  });
});
