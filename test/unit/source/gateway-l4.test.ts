/**
 * TLSRoute passthrough, TCPRoute and UDPRoute onto L4 pools, modelled on the conformance suite's
 * TLSRouteSimpleSameNamespace, TLSRouteInvalidReferenceGrant and TCPRoute tests (v1.6): SNI
 * routing with the most specific host, hostname mismatch, cross-namespace grants, one route per
 * TCP listener, and protocols the load balancer lacks refused, never dropped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewaySchema, l4RouteSchema } from '../../../src/kube/gateway-objects.ts';
import { poolName } from '../../../src/model/names.ts';
import { resolveConnection } from '../../../src/model/http-match.ts';
import type { L4VirtualService } from '../../../src/model/types.ts';
import { APP, grant, INFRA, listenerConditions, pass } from './gateway-support.ts';

const gw = gatewaySchema.parse({
  metadata: { namespace: INFRA, name: 'gateway-l4', generation: 2 },
  spec: {
    gatewayClassName: 'npl-lb',
    listeners: [
      {
        name: 'tls',
        port: 443,
        protocol: 'TLS',
        tls: { mode: 'Passthrough' },
        allowedRoutes: { namespaces: { from: 'All' } },
      },
      {
        name: 'tls-abc',
        port: 443,
        protocol: 'TLS',
        hostname: 'abc.example.com',
        tls: { mode: 'Passthrough' },
      },
      { name: 'tcp', port: 5432, protocol: 'TCP' },
      { name: 'udp', port: 53, protocol: 'UDP' },
      { name: 'tls-terminate', port: 8443, protocol: 'TLS', tls: { mode: 'Terminate' } },
    ],
  },
});
let n = 0;
const l4 = (kind: string, ns: string, name: string, spec: Record<string, unknown>) =>
  l4RouteSchema.parse({
    metadata: { namespace: ns, name, generation: 1, creationTimestamp: `2026-01-03T00:00:0${n++}Z` },
    spec,
  });
const ref = (section: string) => ({ name: 'gateway-l4', namespace: INFRA, sectionName: section });
const be = (name: string, port: number, namespace?: string) => ({
  name,
  port,
  ...(namespace ? { namespace } : {}),
});
const conds = (r: ReturnType<typeof pass>, k: string) =>
  (r.routes.get(k)?.parents ?? []).map((p) =>
    p.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`),
  );
const l4vs = (r: ReturnType<typeof pass>, name: string) =>
  r.virtualServices.find((v): v is L4VirtualService => v.kind === 'l4' && v.name === name);
const tlsPool = (ns: string) => poolName('c1', ns, 'tls-backend', 443);

describe('Gateway API: L4 routes (conformance-modelled)', () => {
  it('TLSRoute passthrough: connections routed by SNI, the most specific host first; no match refused', () => {
    const r = pass({
      gateways: [gw],
      support: { TLS: true, TCP: true },
      routes: [],
      l4: {
        tlsRoutes: [
          l4('TLSRoute', INFRA, 'gateway-conformance-infra-test', {
            parentRefs: [ref('tls')],
            hostnames: ['*.example.com'],
            rules: [{ backendRefs: [be('tls-backend', 443)] }],
          }),
          l4('TLSRoute', INFRA, 'abc', {
            parentRefs: [ref('tls-abc')],
            hostnames: ['abc.example.com'],
            rules: [{ backendRefs: [be('tls-backend-2', 443)] }],
          }),
          l4('TLSRoute', INFRA, 'mismatch', {
            parentRefs: [ref('tls-abc')],
            hostnames: ['other.org'],
            rules: [{ backendRefs: [be('tls-backend', 443)] }],
          }),
        ],
      },
    });
    assert.deepEqual(conds(r, `TLSRoute ${INFRA}/gateway-conformance-infra-test`), [
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
    ]);
    assert.deepEqual(
      conds(r, `TLSRoute ${INFRA}/mismatch`)[0]![0],
      'Accepted=False/NoMatchingListenerHostname',
    );
    const vs = l4vs(r, 'c1--gw-gateway-conformance-infra.gateway-l4-TLS-443')!;
    assert.equal(vs.pool, '');
    assert.equal(resolveConnection(vs, 'foo.example.com'), tlsPool(INFRA));
    assert.equal(resolveConnection(vs, 'abc.example.com'), poolName('c1', INFRA, 'tls-backend-2', 443));
    assert.equal(resolveConnection(vs, 'example.org'), undefined, 'no route: refused');
    assert.equal(resolveConnection(vs), undefined, 'no SNI: refused');
    // TLSRouteListenerTerminateNotSupported: UnsupportedValue, and no route kind attaches.
    assert.equal(
      listenerConditions(r, `${INFRA}/gateway-l4`, 'tls-terminate')[0],
      'Accepted=False/UnsupportedValue',
    );
    const terminate = r.gateways
      .get(`${INFRA}/gateway-l4`)!
      .listeners.find((l) => l.name === 'tls-terminate')!;
    assert.deepEqual(terminate.supportedKinds, []);
    assert.equal(terminate.attachedRoutes, 0);
  });

  it('a TLS listener whose only route has a backend that does not exist listens and closes every connection (TLSRouteInvalidBackendRefNonexistent, ...UnknownKind)', () => {
    for (const backendRefs of [
      [be('does-not-exist', 443)],
      [{ group: 'unknown.io', kind: 'Thing', name: 'x', port: 443 }],
    ]) {
      const r = pass({
        gateways: [gw],
        support: { TLS: true },
        l4: {
          tlsRoutes: [
            l4('TLSRoute', INFRA, 'invalid-backend-ref', {
              parentRefs: [ref('tls')],
              hostnames: ['abc.example.com'],
              rules: [{ backendRefs }],
            }),
          ],
        },
      });
      const [accepted, resolved] = conds(r, `TLSRoute ${INFRA}/invalid-backend-ref`)[0]!;
      assert.equal(accepted, 'Accepted=True/Accepted');
      assert.match(resolved!, /^ResolvedRefs=False\/(BackendNotFound|InvalidKind)$/);
      const vs = l4vs(r, 'c1--gw-gateway-conformance-infra.gateway-l4-TLS-443');
      assert.ok(vs, 'the listener has a virtual service: it listens');
      assert.deepEqual(vs.sni, [], 'no host routes anywhere');
      assert.equal(resolveConnection(vs, 'abc.example.com'), undefined, 'closed after the ClientHello');
      assert.equal(
        listenerConditions(r, `${INFRA}/gateway-l4`, 'tls').find((c) => c.startsWith('Programmed')),
        'Programmed=True/Programmed',
      );
    }
    // A TLS listener no route attaches to has no virtual service (nothing to close).
    const bare = pass({ gateways: [gw], support: { TLS: true }, l4: { tlsRoutes: [] } });
    assert.equal(l4vs(bare, 'c1--gw-gateway-conformance-infra.gateway-l4-TLS-443'), undefined);
  });

  it('cross-namespace backends need a ReferenceGrant for the route kind (TLSRouteInvalidReferenceGrant)', () => {
    const routes = {
      tlsRoutes: [
        l4('TLSRoute', INFRA, 'to-app', {
          parentRefs: [ref('tls')],
          hostnames: ['x.example.com'],
          rules: [{ backendRefs: [be('tls-backend', 443, APP)] }],
        }),
      ],
    };
    const refused = pass({
      gateways: [gw],
      support: { TLS: true },
      l4: routes,
      grants: [grant(APP, 'HTTPRoute', INFRA, 'Service')],
    });
    assert.deepEqual(conds(refused, `TLSRoute ${INFRA}/to-app`)[0]![1], 'ResolvedRefs=False/RefNotPermitted');
    // The listener still listens, and closes the connection (fail closed), rather than refusing it.
    const closed = l4vs(refused, 'c1--gw-gateway-conformance-infra.gateway-l4-TLS-443')!;
    assert.deepEqual(closed.sni, []);
    assert.equal(resolveConnection(closed, 'x.example.com'), undefined);
    const granted = pass({
      gateways: [gw],
      support: { TLS: true },
      l4: routes,
      grants: [grant(APP, 'TLSRoute', INFRA, 'Service')],
    });
    assert.equal(
      resolveConnection(
        l4vs(granted, 'c1--gw-gateway-conformance-infra.gateway-l4-TLS-443')!,
        'x.example.com',
      ),
      tlsPool(APP),
    );
    assert.ok(granted.backends.has(`${APP}/tls-backend`));
  });

  it('TCPRoute: one route per TCP listener (the oldest), one weighted backend; UDP where the adapter lacks it is refused', () => {
    const r = pass({
      gateways: [gw],
      support: { TCP: true, UDP: false },
      l4: {
        tcpRoutes: [
          l4('TCPRoute', INFRA, 'first', {
            parentRefs: [ref('tcp')],
            rules: [{ backendRefs: [be('tls-backend', 443)] }],
          }),
          l4('TCPRoute', INFRA, 'second', {
            parentRefs: [ref('tcp')],
            rules: [{ backendRefs: [be('tls-backend-2', 443)] }],
          }),
          l4('TCPRoute', INFRA, 'split', {
            parentRefs: [ref('tcp')],
            rules: [
              {
                backendRefs: [
                  { ...be('tls-backend', 443), weight: 1 },
                  { ...be('tls-backend-2', 443), weight: 1 },
                ],
              },
            ],
          }),
          l4('TCPRoute', INFRA, 'missing', {
            parentRefs: [ref('tcp')],
            rules: [{ backendRefs: [be('nope', 443)] }],
          }),
        ],
        udpRoutes: [
          l4('UDPRoute', INFRA, 'dns', {
            parentRefs: [ref('udp')],
            rules: [{ backendRefs: [be('tls-backend', 53)] }],
          }),
        ],
      },
    });
    assert.deepEqual(conds(r, `TCPRoute ${INFRA}/first`), [
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
    ]);
    // TCPRouteMultipleRoutesAttachment: the newer route is Accepted and counted, the oldest is bound.
    assert.deepEqual(conds(r, `TCPRoute ${INFRA}/second`)[0]![0], 'Accepted=True/Accepted');
    assert.deepEqual(conds(r, `TCPRoute ${INFRA}/split`)[0]![0], 'Accepted=False/UnsupportedValue');
    assert.deepEqual(conds(r, `TCPRoute ${INFRA}/missing`)[0]![1], 'ResolvedRefs=False/BackendNotFound');
    const vs = l4vs(r, 'c1--gw-gateway-conformance-infra.gateway-l4-TCP-5432')!;
    assert.deepEqual(
      [vs.protocol, vs.port, vs.pool, vs.source],
      ['TCP', 5432, tlsPool(INFRA), `TCPRoute ${INFRA}/first`],
    );
    assert.equal(
      listenerConditions(r, `${INFRA}/gateway-l4`, 'udp')[0],
      'Accepted=False/UnsupportedProtocol',
    );
    assert.deepEqual(conds(r, `UDPRoute ${INFRA}/dns`)[0]![0], 'Accepted=False/NotAllowedByListeners');
    assert.equal(
      r.gateways.get(`${INFRA}/gateway-l4`)!.listeners.find((l) => l.name === 'tcp')!.attachedRoutes,
      4,
    );
  });
});
