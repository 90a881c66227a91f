/**
 * HTTPRoute matching, precedence, filters and weights, served by the model's request semantics
 * (what every adapter is held to), plus bad input at the boundary and what an adapter lacks.
 * Modelled on kubernetes-sigs/gateway-api conformance/tests (v1.6): HTTPRouteMatching,
 * HTTPRouteMatchingAcrossRoutes, HTTPRouteHeaderMatching, HTTPRouteQueryParamMatching,
 * HTTPRouteMethodMatching, HTTPRouteExactPathMatching, HTTPRouteRequestHeaderModifier,
 * HTTPRouteResponseHeaderModifier, HTTPRouteRequestRedirect, HTTPRouteRedirectPath/Port/Scheme,
 * HTTPRouteRewriteHost, HTTPRouteRewritePath, HTTPRouteWeight.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type HttpRequest, resolveRequest } from '../../../src/model/http-match.ts';
import { ALL_HTTP, INGRESS_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { backend, INFRA, parent, parentConditions, pass, pool, route, vsOf } from './gateway-support.ts';

const GW = `${INFRA}/same-namespace`;
const v1 = pool(INFRA, 'infra-backend-v1');
const v2 = pool(INFRA, 'infra-backend-v2');
const v3 = pool(INFRA, 'infra-backend-v3');
const p = [parent('same-namespace')];
const served = (routes: ReturnType<typeof route>[]) => {
  const r = pass({ routes });
  const vs = vsOf(r, GW);
  assert.ok(vs, 'the Gateway is served');
  return {
    r,
    ask: (req: Partial<HttpRequest>, pick?: number) =>
      resolveRequest(vs, { host: 'example.com', path: '/', ...req }, pick),
  };
};
const to = (o: ReturnType<typeof resolveRequest>) => o.pool ?? o.status;

describe('HTTPRoute matching and precedence (conformance-modelled)', () => {
  it('HTTPRouteMatching and HTTPRouteExactPathMatching: prefixes by path element, exact paths, headers combined with paths', () => {
    const { ask } = served([
      route(INFRA, 'matching', {
        parentRefs: p,
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [backend('infra-backend-v1')],
          },
          {
            matches: [
              { path: { type: 'PathPrefix', value: '/v2' } },
              { headers: [{ name: 'version', value: 'two' }] },
            ],
            backendRefs: [backend('infra-backend-v2')],
          },
          {
            matches: [{ path: { type: 'Exact', value: '/exact' } }],
            backendRefs: [backend('infra-backend-v3')],
          },
        ],
      }),
    ]);
    assert.equal(to(ask({ path: '/' })), v1);
    assert.equal(to(ask({ path: '/example' })), v1);
    assert.equal(to(ask({ path: '/v2' })), v2);
    assert.equal(to(ask({ path: '/v2/example' })), v2);
    assert.equal(to(ask({ path: '/v2example' })), v1, 'a prefix matches whole path elements');
    assert.equal(
      to(ask({ path: '/foo', headers: { Version: 'two' } })),
      v2,
      'header names compare without case',
    );
    assert.equal(to(ask({ path: '/exact' })), v3);
    assert.equal(to(ask({ path: '/exact/more' })), v1);
  });

  it('HTTPRouteMatchingAcrossRoutes: precedence is global across routes, Exact > longest prefix > method > headers > query; ties by age', () => {
    const { ask } = served([
      route(INFRA, 'b-route', {
        parentRefs: p,
        rules: [
          {
            matches: [
              {
                path: { type: 'PathPrefix', value: '/' },
                headers: [
                  { name: 'x-a', value: '1' },
                  { name: 'x-b', value: '1' },
                ],
              },
            ],
            backendRefs: [backend('infra-backend-v3')],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' }, method: 'POST' }],
            backendRefs: [backend('infra-backend-v2')],
          },
        ],
      }),
      route(INFRA, 'a-route', {
        parentRefs: p,
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' }, headers: [{ name: 'x-a', value: '1' }] }],
            backendRefs: [backend('infra-backend-v2')],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/' }, queryParams: [{ name: 'q', value: '1' }] }],
            backendRefs: [backend('infra-backend-v1')],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/long/er' } }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'c-route-newer', {
        parentRefs: p,
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/long/er' } }],
            backendRefs: [backend('infra-backend-v3')],
          },
        ],
      }),
    ]);
    assert.equal(
      to(ask({ path: '/', method: 'POST', headers: { 'x-a': '1', 'x-b': '1' } })),
      v2,
      'method before headers',
    );
    assert.equal(to(ask({ path: '/', headers: { 'x-a': '1', 'x-b': '1' } })), v3, 'more headers first');
    assert.equal(to(ask({ path: '/', headers: { 'x-a': '1' } })), v2);
    assert.equal(to(ask({ path: '/?q=1', headers: { 'x-a': '1' } })), v2, 'headers before query');
    assert.equal(to(ask({ path: '/?q=1' })), v1);
    assert.equal(
      to(ask({ path: '/long/er/x', method: 'POST' })),
      v1,
      'the longer prefix first, over a method; the older route wins the tie',
    );
    assert.equal(to(ask({ path: '/nothing' })), 404);
  });

  it('HTTPRouteHeaderMatching, QueryParamMatching and MethodMatching, exact and regular expression', () => {
    const { ask } = served([
      route(INFRA, 'values', {
        parentRefs: p,
        rules: [
          {
            matches: [
              {
                headers: [
                  { name: 'version', value: 'one' },
                  { name: 'color', value: 'orange' },
                ],
              },
            ],
            backendRefs: [backend('infra-backend-v1')],
          },
          {
            matches: [{ headers: [{ type: 'RegularExpression', name: 'color', value: 'bl(ue|ack)' }] }],
            backendRefs: [backend('infra-backend-v2')],
          },
          {
            matches: [{ queryParams: [{ name: 'animal', value: 'whale' }] }],
            backendRefs: [backend('infra-backend-v3')],
          },
          { matches: [{ method: 'DELETE' }], backendRefs: [backend('infra-backend-v2')] },
        ],
      }),
    ]);
    assert.equal(to(ask({ headers: { version: 'one', color: 'orange' } })), v1);
    assert.equal(to(ask({ headers: { version: 'one' } })), 404, 'every header of a match must match');
    assert.equal(to(ask({ headers: { color: 'black' } })), v2);
    assert.equal(
      to(ask({ headers: { color: 'blacker' } })),
      404,
      'a regular expression matches the whole value',
    );
    assert.equal(to(ask({ path: '/?animal=whale' })), v3);
    assert.equal(to(ask({ path: '/?animal=dolphin' })), 404);
    assert.equal(to(ask({ method: 'DELETE' })), v2);
    assert.equal(to(ask({ method: 'GET' })), 404);
  });
});

describe('HTTPRoute filters and weights (conformance-modelled)', () => {
  it('request and response header modifiers: set replaces, add appends, remove drops', () => {
    const { ask } = served([
      route(INFRA, 'headers', {
        parentRefs: p,
        rules: [
          {
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: {
                  set: [{ name: 'X-Header-Set', value: 'set-overwrites-values' }],
                  add: [{ name: 'X-Header-Add', value: 'add-appends-values' }],
                  remove: ['X-Header-Remove'],
                },
              },
              {
                type: 'ResponseHeaderModifier',
                responseHeaderModifier: { set: [{ name: 'X-Resp', value: 'v' }] },
              },
            ],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
    ]);
    const o = ask({
      headers: {
        'x-header-set': 'some-other-value',
        'x-header-add': 'something',
        'x-header-remove': 'val',
        keep: 'k',
      },
    });
    assert.deepEqual(o.upstream?.headers, {
      'x-header-set': 'set-overwrites-values',
      'x-header-add': 'something,add-appends-values',
      keep: 'k',
    });
    assert.deepEqual(o.responseHeaders?.set, [{ name: 'X-Resp', value: 'v' }]);
  });

  it('redirects: hostname, scheme, port, full path and prefix replacement, status codes', () => {
    const redirect = (path: string, requestRedirect: Record<string, unknown>) => ({
      matches: [{ path: { type: 'PathPrefix', value: path } }],
      filters: [{ type: 'RequestRedirect', requestRedirect }],
    });
    const { ask } = served([
      route(INFRA, 'redirects', {
        parentRefs: p,
        rules: [
          redirect('/hostname-redirect', { hostname: 'example.org' }),
          redirect('/scheme-and-host', { scheme: 'https', hostname: 'example.org' }),
          redirect('/port', { port: 8083 }),
          redirect('/full', { path: { type: 'ReplaceFullPath', replaceFullPath: '/full-path-replacement' } }),
          redirect('/prefix/one', {
            statusCode: 301,
            path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/one' },
          }),
        ],
      }),
    ]);
    const loc = (path: string) => {
      const o = ask({ path });
      return `${o.status} ${o.location}`;
    };
    assert.equal(loc('/hostname-redirect'), '302 http://example.org/hostname-redirect');
    assert.equal(loc('/scheme-and-host?x=1'), '302 https://example.org/scheme-and-host?x=1');
    assert.equal(loc('/port'), '302 http://example.com:8083/port');
    assert.equal(loc('/full/x'), '302 http://example.com/full-path-replacement');
    assert.equal(loc('/prefix/one/two'), '301 http://example.com/one/two');
  });

  it('URL rewrites: hostname and path (full and prefix)', () => {
    const { ask } = served([
      route(INFRA, 'rewrites', {
        parentRefs: p,
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/prefix/one' } }],
            filters: [
              {
                type: 'URLRewrite',
                urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/one' } },
              },
            ],
            backendRefs: [backend('infra-backend-v1')],
          },
          {
            matches: [{ path: { type: 'PathPrefix', value: '/full' } }],
            filters: [
              {
                type: 'URLRewrite',
                urlRewrite: {
                  hostname: 'one.example.org',
                  path: { type: 'ReplaceFullPath', replaceFullPath: '/one' },
                },
              },
            ],
            backendRefs: [backend('infra-backend-v2')],
          },
        ],
      }),
    ]);
    assert.deepEqual(ask({ path: '/prefix/one/two' }).upstream?.path, '/one/two');
    assert.deepEqual(ask({ path: '/prefix/one' }).upstream?.path, '/one');
    const full = ask({ path: '/full/path?q=1' });
    assert.equal(full.upstream?.path, '/one?q=1');
    assert.equal(full.upstream?.host, 'one.example.org');
  });

  it('HTTPRouteWeight: traffic split 70/30/0 by weight; a backend that does not resolve answers 500 for its share', () => {
    const { ask } = served([
      route(INFRA, 'weights', {
        parentRefs: p,
        rules: [
          {
            backendRefs: [
              backend('infra-backend-v1', 8080, { weight: 70 }),
              backend('infra-backend-v2', 8080, { weight: 30 }),
              backend('infra-backend-v3', 8080, { weight: 0 }),
            ],
          },
        ],
      }),
      route(INFRA, 'half-missing', {
        parentRefs: p,
        hostnames: ['half.example'],
        rules: [
          {
            backendRefs: [
              backend('infra-backend-v1', 8080, { weight: 1 }),
              backend('nope', 8080, { weight: 1 }),
            ],
          },
        ],
      }),
    ]);
    const counts = new Map<string | number, number>();
    for (let i = 0; i < 100; i++) {
      const k = to(ask({}, i / 100));
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(counts), { [v1]: 70, [v2]: 30 });
    const half = new Map<string | number, number>();
    for (let i = 0; i < 10; i++) {
      const k = to(ask({ host: 'half.example' }, i / 10));
      half.set(k, (half.get(k) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries(half), { [v1]: 5, 500: 5 });
  });
});

describe('HTTPRoute: bad input and what the adapter lacks', () => {
  it('values that fail the boundary or filters npl-lb lacks: Accepted False UnsupportedValue, nothing of the route served', () => {
    const bad = (name: string, rule: Record<string, unknown>) =>
      route(INFRA, name, {
        parentRefs: p,
        hostnames: [`${name}.example`],
        rules: [{ backendRefs: [backend('infra-backend-v1')], ...rule }],
      });
    const routes = [
      bad('crlf-header', {
        filters: [
          {
            type: 'RequestHeaderModifier',
            requestHeaderModifier: { set: [{ name: 'X', value: 'a\r\nX-Injected: 1' }] },
          },
        ],
      }),
      bad('bad-regex', { matches: [{ path: { type: 'RegularExpression', value: '/(unclosed' } }] }),
      bad('dotdot', { matches: [{ path: { type: 'PathPrefix', value: '/a/../b' } }] }),
      bad('mirror', {
        filters: [
          { type: 'RequestMirror', requestMirror: { backendRef: { name: 'infra-backend-v2', port: 8080 } } },
        ],
      }),
      bad('bad-header-name', { matches: [{ headers: [{ name: 'bad header', value: 'x' }] }] }),
      // Rule fields npl-lb does not carry yet: refused naming the field, never dropped silently.
      bad('timeouts', { timeouts: { request: '10s' } }),
      bad('retry', { retry: { attempts: 3 } }),
      bad('session', { sessionPersistence: { sessionName: 'x', type: 'Cookie' } }),
      bad('fine', {}),
    ];
    const r = pass({ routes });
    const vs = vsOf(r, GW)!;
    for (const n of [
      'crlf-header',
      'bad-regex',
      'dotdot',
      'mirror',
      'bad-header-name',
      'timeouts',
      'retry',
      'session',
    ]) {
      assert.deepEqual(parentConditions(r, `${INFRA}/${n}`)[0]![0], 'Accepted=False/UnsupportedValue', n);
      assert.equal(resolveRequest(vs, { host: `${n}.example`, path: '/' }).status, 404, `${n} is not served`);
    }
    assert.equal(resolveRequest(vs, { host: 'fine.example', path: '/' }).pool, v1, 'the others are');
    const msg = r.routes.get(`HTTPRoute ${INFRA}/crlf-header`)!.parents[0]!.conditions[0]!.message;
    assert.match(
      msg,
      /spec\.rules\[0\]\.filters\[0\]\.requestHeaderModifier\.set\[0\]: value .* holds a control character/,
    );
    assert.ok(!JSON.stringify(vs).includes('X-Injected'), 'never in the model');
    assert.match(
      r.routes.get(`HTTPRoute ${INFRA}/timeouts`)!.parents[0]!.conditions[0]!.message,
      // Read, and refused by what the load balancer lacks (route-timeouts.test.ts: where it has them).
      /does not support request timeouts/,
    );
  });

  it('an adapter without header matches or weights: those routes are UnsupportedValue, the Ingress-style ones attach', () => {
    const routes = [
      route(INFRA, 'needs-headers', {
        parentRefs: p,
        hostnames: ['h.example'],
        rules: [
          { matches: [{ headers: [{ name: 'x', value: '1' }] }], backendRefs: [backend('infra-backend-v1')] },
        ],
      }),
      route(INFRA, 'needs-weights', {
        parentRefs: p,
        hostnames: ['w.example'],
        rules: [
          {
            backendRefs: [
              backend('infra-backend-v1', 8080, { weight: 1 }),
              backend('infra-backend-v2', 8080, { weight: 1 }),
            ],
          },
        ],
      }),
      route(INFRA, 'plain', {
        parentRefs: p,
        hostnames: ['p.example'],
        rules: [{ backendRefs: [backend('infra-backend-v1')] }],
      }),
    ];
    const r = pass({ routes, http: INGRESS_HTTP });
    const msg = (n: string) => r.routes.get(`HTTPRoute ${INFRA}/${n}`)!.parents[0]!.conditions[0]!;
    assert.equal(msg('needs-headers').reason, 'UnsupportedValue');
    assert.match(msg('needs-headers').message, /the memory load balancer does not support header matches/);
    assert.match(msg('needs-weights').message, /does not support weighted backends/);
    assert.equal(msg('plain').reason, 'Accepted');
    assert.deepEqual(
      vsOf(r, GW)!.routes.map((x) => x.host),
      ['p.example'],
    );
    assert.equal(
      pass({ routes, http: ALL_HTTP }).routes.get(`HTTPRoute ${INFRA}/needs-weights`)!.parents[0]!
        .conditions[0]!.reason,
      'Accepted',
    );
  });

  it("HAProxy's dialect: a dotted match name or a PCRE2-incompatible regex refuses that route alone, naming the field; the listener's other routes are served", () => {
    const http = HAPROXY_CAPABILITIES.http!;
    const routes = [
      route(INFRA, 'dotted-header', {
        parentRefs: p,
        hostnames: ['d.example'],
        rules: [
          {
            matches: [{ headers: [{ name: 'X.Tenant', value: 'a' }] }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'dotted-query', {
        parentRefs: p,
        hostnames: ['q.example'],
        rules: [
          {
            matches: [{ queryParams: [{ name: 'page.size', value: '10' }] }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'js-only-regex', {
        parentRefs: p,
        hostnames: ['r.example'],
        rules: [
          {
            matches: [{ headers: [{ name: 'x-id', type: 'RegularExpression', value: '[^]\\u0041' }] }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'js-only-path', {
        parentRefs: p,
        hostnames: ['r.example'],
        rules: [
          {
            matches: [{ path: { type: 'RegularExpression', value: '/a[^]' } }],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
      route(INFRA, 'apostrophe', {
        parentRefs: p,
        hostnames: ['a.example'],
        rules: [
          {
            matches: [{ headers: [{ name: 'x-who', value: "it's" }] }],
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { set: [{ name: 'X-Says', value: "it's" }] },
              },
            ],
            backendRefs: [backend('infra-backend-v2')],
          },
        ],
      }),
    ];
    const r = pass({ routes, http });
    const c = (n: string) => r.routes.get(`HTTPRoute ${INFRA}/${n}`)!.parents[0]!.conditions[0]!;
    for (const n of ['dotted-header', 'dotted-query', 'js-only-regex', 'js-only-path']) {
      assert.equal(c(n).status, false, n);
      assert.equal(c(n).reason, 'UnsupportedValue', n);
    }
    assert.match(
      c('dotted-header').message,
      /spec\.rules\[0\]\.matches\[0\]\.headers\[0\]\.name: the \w+ load balancer matches only names of letters/,
    );
    assert.match(
      c('dotted-query').message,
      /spec\.rules\[0\]\.matches\[0\]\.queryParams\[0\]\.name: .*"page\.size"/,
    );
    assert.match(
      c('js-only-regex').message,
      /headers\[0\]\.value: regular expression .* not read alike by PCRE2/,
    );
    assert.match(
      c('js-only-path').message,
      /matches\[0\]\.path: regular expression .* not read alike by PCRE2/,
    );
    assert.equal(c('apostrophe').reason, 'Accepted');
    assert.deepEqual(
      vsOf(r, GW)!.routes.map((x) => x.host),
      ['a.example'],
      'only the route HAProxy can read is on the shared listener',
    );
    // The same routes on an ECMAScript device with any names: all accepted.
    const all = pass({ routes, http: ALL_HTTP });
    for (const n of ['dotted-header', 'dotted-query', 'js-only-regex', 'js-only-path'])
      assert.equal(
        all.routes.get(`HTTPRoute ${INFRA}/${n}`)!.parents[0]!.conditions[0]!.reason,
        'Accepted',
        n,
      );
  });

  it('the same objects give the same virtual services (idempotent), in precedence order', () => {
    const routes = () => [
      route(INFRA, 'x', {
        parentRefs: p,
        rules: [
          {
            matches: [
              { path: { type: 'PathPrefix', value: '/a' } },
              { path: { type: 'Exact', value: '/b' } },
            ],
            backendRefs: [backend('infra-backend-v1')],
          },
        ],
      }),
    ];
    const a = vsOf(pass({ routes: routes() }), GW)!;
    const b = vsOf(pass({ routes: routes() }), GW)!;
    assert.deepEqual(a, b);
    assert.deepEqual(
      a.routes.map((x) => `${x.order} ${x.pathType} ${x.path}`),
      ['0 Exact /b', '1 Prefix /a'],
    );
  });
});

describe('wildcard hosts', () => {
  it('a Gateway route’s wildcard covers one or more labels; an Ingress rule’s exactly one', () => {
    const route = (order: number | undefined) => ({
      host: '*.example.com',
      path: '/',
      pathType: 'Prefix' as const,
      pool: 'p',
      source: 's',
      ...(order === undefined ? {} : { order }),
    });
    const vs = (order: number | undefined) => ({
      kind: 'l7' as const,
      name: 'v',
      vip: '192.0.2.1',
      port: 80,
      ingressClass: 'c',
      defaultPool: undefined,
      routes: [route(order)],
    });
    assert.equal(resolveRequest(vs(0), { host: 'a.b.example.com', path: '/' }).pool, 'p');
    assert.equal(resolveRequest(vs(undefined), { host: 'a.b.example.com', path: '/' }).status, 404);
    assert.equal(resolveRequest(vs(undefined), { host: 'a.example.com', path: '/' }).pool, 'p');
    assert.equal(resolveRequest(vs(0), { host: 'example.com', path: '/' }).status, 404);
  });
});
