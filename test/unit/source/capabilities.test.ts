import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Capabilities } from '../../../src/adapter/contract.ts';
import { ALL_HTTP, INGRESS_HTTP } from '../../../src/adapter/http-capabilities.ts';
import type { Pool } from '../../../src/model/types.ts';
import { applyCapabilities } from '../../../src/source/capabilities.ts';
import { routeLacks } from '../../../src/source/route-support.ts';
import type { DesiredResult } from '../../../src/source/desired.ts';
import * as kit from '../../support/model.ts';

const pool = (name: string, service: string): Pool => kit.pool(name, [], { service, servicePort: 'p' });
const desired = (): DesiredResult => ({
  state: {
    pools: [
      pool('c1--default-dns-tcp', 'default/dns'),
      pool('c1--default-dns-udp', 'default/dns'),
      pool('c1--shop-api-http.l7', 'shop/api'),
    ],
    virtualServices: [
      {
        kind: 'l4',
        name: 'c1--default-dns-TCP-53',
        vip: '192.0.2.7',
        port: 53,
        protocol: 'TCP',
        pool: 'c1--default-dns-tcp',
        source: 'default/dns',
      },
      {
        kind: 'l4',
        name: 'c1--default-dns-UDP-53',
        vip: '192.0.2.7',
        port: 53,
        protocol: 'UDP',
        pool: 'c1--default-dns-udp',
        source: 'default/dns',
      },
      {
        kind: 'l7',
        name: 'c1--ingress-npl',
        vip: '192.0.2.9',
        port: 80,
        ingressClass: 'npl',
        routes: [
          {
            host: 'a.example',
            path: '/',
            pathType: 'Prefix',
            pool: 'c1--shop-api-http.l7',
            source: 'shop/a',
          },
        ],
        defaultPool: undefined,
      },
    ],
  },
  services: new Map([
    [
      'default/dns',
      {
        vip: '192.0.2.7',
        virtualServices: ['c1--default-dns-TCP-53', 'c1--default-dns-UDP-53'],
        problem: undefined,
      },
    ],
  ]),
  ingresses: new Map([
    ['shop/a', { vip: '192.0.2.9', virtualServices: ['c1--ingress-npl'], problem: undefined }],
  ]),
  waiting: new Map(),
  findings: [],
});
const caps = (over: Partial<Capabilities>): Capabilities => ({
  l4: { tcp: true, udp: true },
  l7: true,
  memberNodeTag: true,
  drainingMembers: true,
  ...over,
});

describe('capabilities applied to the desired state', () => {
  it('everything supported: the same result, untouched', () => {
    const d = desired();
    assert.equal(applyCapabilities(d, caps({}), 'memory'), d);
  });

  it('UDP on an adapter without UDP: not sent, its pool not sent, the Service told and its port marked', () => {
    const r = applyCapabilities(desired(), caps({ l4: { tcp: true, udp: false } }), 'haproxy');
    assert.deepEqual(
      r.state.virtualServices.map((v) => v.name),
      ['c1--default-dns-TCP-53', 'c1--ingress-npl'],
    );
    assert.deepEqual(
      r.state.pools.map((p) => p.name),
      ['c1--default-dns-tcp', 'c1--shop-api-http.l7'],
    );
    assert.deepEqual(r.services.get('default/dns'), {
      vip: '192.0.2.7',
      virtualServices: ['c1--default-dns-TCP-53'],
      problem: undefined,
      unsupported: ['c1--default-dns-UDP-53'],
    });
    assert.deepEqual(r.findings, [
      {
        kind: 'Service',
        key: 'default/dns',
        type: 'Warning',
        reason: 'UnsupportedByLoadBalancer',
        message: 'the haproxy load balancer does not support UDP: port 53/UDP is not served',
      },
    ]);
  });

  it('L7 on an L4-only adapter: the class is not sent and each of its Ingresses is told', () => {
    const r = applyCapabilities(desired(), caps({ l7: false }), 'l4only');
    assert.deepEqual(
      r.state.virtualServices.map((v) => v.name),
      ['c1--default-dns-TCP-53', 'c1--default-dns-UDP-53'],
    );
    assert.equal(r.ingresses.get('shop/a')!.virtualServices.length, 0);
    assert.match(
      r.findings[0]!.message,
      /does not support HTTP \(L7\) virtual services: IngressClass npl is not served/,
    );
  });

  it('a route needing a match or filter the adapter lacks leaves its virtual service, its source told once; the others stay', () => {
    const d = desired();
    const vs = d.state.virtualServices[2]!;
    assert.ok(vs.kind === 'l7');
    d.state.pools.push(pool('c1--shop-canary-http.l7', 'shop/canary'));
    vs.routes.push(
      {
        host: 'a.example',
        path: '/beta',
        pathType: 'Prefix',
        pool: 'c1--shop-canary-http.l7',
        source: 'shop/a',
        headers: [{ name: 'x-canary', value: '1', type: 'Exact' }],
      },
      {
        host: 'a.example',
        path: '/re',
        pathType: 'RegularExpression',
        pool: 'c1--shop-canary-http.l7',
        source: 'shop/a',
      },
    );
    const r = applyCapabilities(d, caps({}), 'haproxy');
    const kept = r.state.virtualServices[2]!;
    assert.ok(kept.kind === 'l7');
    assert.deepEqual(
      kept.routes.map((x) => x.path),
      ['/'],
    );
    assert.ok(!r.state.pools.some((p) => p.name === 'c1--shop-canary-http.l7'), 'a pool only they used goes');
    assert.deepEqual(
      r.findings.map((f) => `${f.key} ${f.reason}: ${f.message}`),
      [
        'shop/a UnsupportedByLoadBalancer: the haproxy load balancer does not support header matches: the rule for a.example/beta is not served',
        'shop/a UnsupportedByLoadBalancer: the haproxy load balancer does not support path match type RegularExpression: the rule for a.example/re is not served',
      ],
    );
    const all = caps({ http: ALL_HTTP });
    assert.equal(applyCapabilities(d, all, 'memory'), d, 'served whole where the adapter can');
  });

  it('an adapter with Ingress-style routes only gets Gateway routes without their order (it orders them itself)', () => {
    const d = desired();
    const vs = d.state.virtualServices[2]!;
    assert.ok(vs.kind === 'l7');
    vs.routes[0] = { ...vs.routes[0]!, order: 0, source: 'HTTPRoute shop/r' };
    const r = applyCapabilities(d, caps({}), 'haproxy');
    const sent = r.state.virtualServices[2]!;
    assert.ok(sent.kind === 'l7');
    assert.equal(sent.routes[0]!.order, undefined);
    assert.equal(sent.routes[0]!.source, 'HTTPRoute shop/r');
    const withHttp = applyCapabilities(
      d,
      // An adapter that declares its HTTP features, however few, takes routes in the core's order.
      caps({ http: { ...INGRESS_HTTP, pathTypes: ['Prefix'] } }),
      'x',
    );
    const kept = withHttp.state.virtualServices[2]!;
    assert.ok(kept.kind === 'l7' && kept.routes[0]!.order === 0, 'kept where the adapter takes precedence');
  });

  it('regular expression header or query matches need regexMatches (F5 has exact ones only); exact ones pass', () => {
    const route = {
      host: '',
      path: '/',
      pathType: 'Prefix' as const,
      pool: 'p',
      source: 'HTTPRoute a/r',
      order: 0,
    };
    const f5 = { ...ALL_HTTP, pathTypes: ['Prefix' as const, 'Exact' as const], regexMatches: false };
    assert.equal(
      routeLacks({ ...route, headers: [{ name: 'x', value: 'a.*', type: 'RegularExpression' }] }, f5),
      'regular expression header or query parameter matches',
    );
    assert.equal(
      routeLacks({ ...route, queryParams: [{ name: 'q', value: '[0-9]+', type: 'RegularExpression' }] }, f5),
      'regular expression header or query parameter matches',
    );
    assert.equal(
      routeLacks({ ...route, headers: [{ name: 'x', value: 'a', type: 'Exact' }] }, f5),
      undefined,
    );
    assert.equal(
      routeLacks({ ...route, headers: [{ name: 'x', value: 'a.*', type: 'RegularExpression' }] }, ALL_HTTP),
      undefined,
    );
    assert.equal(
      routeLacks({ ...route, pathType: 'RegularExpression', path: '/[a-z]+' }, f5),
      'path match type RegularExpression',
    );
  });

  it('redirect codes and the number of query matches an adapter takes (Avi: 301/302/307, one query parameter)', () => {
    const route = {
      host: '',
      path: '/',
      pathType: 'Prefix' as const,
      pool: '',
      source: 'HTTPRoute a/r',
      order: 0,
    };
    const avi = { ...ALL_HTTP, redirectCodes: [301, 302, 307], maxQueryMatches: 1 };
    assert.equal(routeLacks({ ...route, redirect: { statusCode: 308 } }, avi), 'redirects with status 308');
    assert.equal(routeLacks({ ...route, redirect: { statusCode: 302 } }, avi), undefined);
    const q = (n: string) => ({ name: n, value: '1', type: 'Exact' as const });
    assert.equal(
      routeLacks({ ...route, pool: 'p', queryParams: [q('a'), q('b')] }, avi),
      'more than 1 query parameter match in one rule',
    );
    assert.equal(routeLacks({ ...route, pool: 'p', queryParams: [q('a')] }, avi), undefined);
    assert.equal(routeLacks({ ...route, redirect: { statusCode: 308 } }, ALL_HTTP), undefined);
  });
});
