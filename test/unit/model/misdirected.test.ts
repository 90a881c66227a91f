/**
 * The model's misdirected-request rule (L7VirtualService.listenerHosts, http-match.ts): the
 * listener a name selects is the most specific hostname that matches it (exact, then the longest
 * wildcard, one or more labels, then the listener without one); a request whose TLS server name and
 * Host select different listeners is answered 421 before any route, as upstream's
 * HTTPRouteHTTPSListenerDetectMisdirectedRequests cases say; without a server name, or on a virtual
 * service that does not carry the listeners, nothing changes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { listenerOf, resolveRequest } from '../../../src/model/http-match.ts';
import type { HttpRoute, L7VirtualService } from '../../../src/model/types.ts';

const route = (host: string, pool: string): HttpRoute => ({
  host,
  path: '/detect-misdirected-requests',
  pathType: 'Prefix',
  pool,
  source: 'HTTPRoute infra/r',
  order: 0,
});

const vs = (listenerHosts?: string[]): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--gw-infra.https-HTTPS-443',
  vip: '192.0.2.10',
  port: 443,
  ingressClass: 'npl-lb',
  protocol: 'HTTPS',
  certificates: ['c'],
  defaultPool: undefined,
  // The routes as the source places them: on the hosts of the listener each attached to.
  routes: [
    route('second-example.org', 'v2'),
    route('fourth-example.wildcard.org', 'v1'),
    route('*.wildcard.org', 'v3'),
    route('', 'v1'),
  ],
  ...(listenerHosts ? { listenerHosts } : {}),
});

const LISTENERS = ['', '*.wildcard.org', 'fourth-example.wildcard.org', 'second-example.org'];

describe('misdirected requests (421)', () => {
  it('a name selects its most specific listener', () => {
    assert.equal(listenerOf(LISTENERS, 'second-example.org'), 'second-example.org');
    assert.equal(listenerOf(LISTENERS, 'fourth-example.wildcard.org'), 'fourth-example.wildcard.org');
    assert.equal(listenerOf(LISTENERS, 'a.b.wildcard.org'), '*.wildcard.org');
    assert.equal(listenerOf(LISTENERS, 'wildcard.org'), '');
    assert.equal(listenerOf(['example.org'], 'other.org'), undefined);
  });

  it('upstream v1.6.1 cases: 421 where the server name and the Host select different listeners', () => {
    const cases: [string, string, number, string?][] = [
      ['example.org', 'example.org', 200, 'v1'],
      ['example.org', 'second-example.org', 421],
      ['example.org', 'unknown-example.org', 200, 'v1'],
      ['second-example.org', 'second-example.org', 200, 'v2'],
      ['second-example.org', 'example.org', 421],
      ['second-example.org', 'unknown-example.org', 421],
      ['third-example.wildcard.org', 'fith-example.wildcard.org', 200, 'v3'],
      ['third-example.wildcard.org', 'fourth-example.wildcard.org', 421],
      ['third-example.wildcard.org', 'second-example.org', 421],
      ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 200, 'v1'],
      ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 421],
      ['unknown-example.org', 'example.org', 200, 'v1'],
    ];
    for (const [sni, host, status, pool] of cases) {
      const out = resolveRequest(vs(LISTENERS), { host, sni, path: '/detect-misdirected-requests' });
      assert.equal(out.status, status, `${sni} / ${host}`);
      if (pool) assert.equal(out.pool, pool, `${sni} / ${host}`);
    }
  });

  it('a Host with a port, upper case: the same listener; no server name or no listeners: routed as before', () => {
    assert.equal(
      resolveRequest(vs(LISTENERS), {
        host: 'Second-Example.org:443',
        sni: 'second-example.org',
        path: '/detect-misdirected-requests',
      }).status,
      200,
    );
    assert.equal(
      resolveRequest(vs(LISTENERS), { host: 'second-example.org', path: '/detect-misdirected-requests' })
        .status,
      200,
    );
    assert.equal(
      resolveRequest(vs(), {
        host: 'second-example.org',
        sni: 'example.org',
        path: '/detect-misdirected-requests',
      }).status,
      200,
    );
  });
});

describe('hosts asking client certificates (hostClientValidation)', () => {
  const asking = (): L7VirtualService => ({
    ...vs(['', '*.wildcard.org', 'fourth-example.wildcard.org', 'second-example.org']),
    hostClientValidation: [{ host: '*.wildcard.org', certificate: 'c', ca: 'CA' }],
  });
  const at = (host: string, sni?: string) =>
    resolveRequest(asking(), {
      host,
      path: '/detect-misdirected-requests',
      ...(sni !== undefined ? { sni } : {}),
    }).status;

  it('a handshake without a server name never reaches a host that asks: 421; other hosts as before', () => {
    assert.equal(at('a.wildcard.org'), 421);
    assert.equal(at('second-example.org'), 200);
    assert.equal(at('fourth-example.wildcard.org'), 200, 'an exact host beside the wildcard asks nothing');
  });

  it('a handshake for another name is 421 as for any listener; its own name is served', () => {
    assert.equal(at('a.wildcard.org', 'second-example.org'), 421);
    assert.equal(at('a.wildcard.org', 'fourth-example.wildcard.org'), 421);
    assert.equal(at('a.wildcard.org', 'b.wildcard.org'), 200);
  });
});
