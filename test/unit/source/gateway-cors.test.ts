/**
 * Issue 48, item 5: the CORS filter of an HTTPRoute (HTTPRouteCORS). Carried into the model whole
 * where the load balancer declares it, and answered by the model's semantics (src/model/cors.ts:
 * preflights answered by the load balancer, origins matched by scheme, host with its leftmost
 * wildcard, and port with the scheme's default); a hostile value (an origin with a path, quotes or
 * config syntax, a header name that is not a token, a method the CRD does not list, a max age out
 * of range, more entries than the CRD allows) refuses that route alone by name; a load balancer
 * that does not declare CORS refuses the route naming it, never serving it without the policy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { originAllowed } from '../../../src/model/cors.ts';
import { resolveRequest } from '../../../src/model/http-match.ts';
import { backend, INFRA, parent, pass, route, vsOf } from './gateway-support.ts';

const UPSTREAM = {
  allowOrigins: ['https://www.foo.com', 'https://*.bar.com'],
  allowMethods: ['GET', 'OPTIONS'],
  allowHeaders: ['x-header-1', 'x-header-2'],
  exposeHeaders: ['x-header-3', 'x-header-4'],
  allowCredentials: true,
  maxAge: 3600,
};

function run(cors: Record<string, unknown>, http = { ...ALL_HTTP, cors: true }) {
  const rule = (name: string, c: Record<string, unknown>) =>
    route(INFRA, name, {
      parentRefs: [parent('same-namespace')],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
          filters: [{ type: 'CORS', cors: c }],
          backendRefs: [backend('infra-backend-v1', 8080)],
        },
      ],
    });
  // Beside it, a route with the upstream policy: a refusal of the first never touches it.
  const r = pass({ routes: [rule('cors', cors), rule('good', UPSTREAM)], http });
  const vs = vsOf(r, `${INFRA}/same-namespace`)!;
  const accepted = (name: string) =>
    r.routes.get(`HTTPRoute ${INFRA}/${name}`)?.parents[0]?.conditions.find((c) => c.type === 'Accepted');
  return { vs, accepted };
}

describe('the CORS filter', () => {
  it('is carried whole and answered as the model says: preflight, allowed origins, the credentials', () => {
    const { vs, accepted } = run(UPSTREAM);
    assert.equal(accepted('cors')?.status, true);
    const r = vs.routes.find((x) => x.source === `HTTPRoute ${INFRA}/cors`)!;
    assert.deepEqual(r.cors, {
      allowOrigins: UPSTREAM.allowOrigins,
      allowMethods: UPSTREAM.allowMethods,
      allowHeaders: UPSTREAM.allowHeaders,
      exposeHeaders: UPSTREAM.exposeHeaders,
      allowCredentials: true,
      maxAgeSeconds: 3600,
    });
    const pre = (origin: string) =>
      resolveRequest(vs, {
        host: 'x',
        path: '/cors',
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' },
      });
    const ok = pre('https://xpto.www.bar.com');
    assert.equal(ok.status, 200);
    assert.equal(ok.pool, undefined, 'a preflight never reaches a member');
    assert.deepEqual(ok.cors, {
      'access-control-allow-origin': 'https://xpto.www.bar.com',
      'access-control-allow-methods': 'GET, OPTIONS',
      'access-control-allow-headers': 'x-header-1, x-header-2',
      'access-control-expose-headers': 'x-header-3, x-header-4',
      'access-control-max-age': '3600',
      'access-control-allow-credentials': 'true',
    });
    assert.equal(pre('https://foobar.com').status, 403);
    const get = resolveRequest(vs, { host: 'x', path: '/cors', headers: { origin: 'https://www.foo.com' } });
    assert.equal(get.status, 200);
    assert.equal(get.cors?.['access-control-allow-origin'], 'https://www.foo.com');
    const other = resolveRequest(vs, { host: 'x', path: '/cors', headers: { origin: 'https://foobar.com' } });
    assert.deepEqual(other.cors, { vary: 'Origin' }, 'an origin not allowed gets no CORS header');
  });

  it('origins: the scheme, the host under its wildcard (one or more labels), the port or the default', () => {
    const allow = ['https://www.foo.com', 'https://*.bar.com', 'http://a.example:8080', 'http://*'];
    const cases: [string | undefined, boolean][] = [
      ['https://www.foo.com', true],
      ['https://www.foo.com:443', true],
      ['HTTPS://WWW.FOO.COM', true],
      ['http://www.foo.com:443', false],
      ['http://www.foo.com', true],
      ['https://www.foo.com:8443', false],
      ['https://x.www.bar.com', true],
      ['https://bar.com', false],
      ['https://foobar.com', false],
      ['https://www.foo.com.evil.example', false],
      ['https://evil.example/www.foo.com', false],
      ['https://user@www.foo.com', false],
      ['http://a.example:8080', true],
      ['http://a.example', true],
      ['https://a.example:8080', false],
      ['null', false],
      ['', false],
      [undefined, false],
    ];
    for (const [origin, want] of cases) assert.equal(originAllowed(allow, origin), want, String(origin));
    assert.equal(originAllowed(['https://a.example'], 'http://a.example'), false, 'the scheme counts');
    assert.equal(originAllowed(['*'], 'null'), true, '* allows any origin sent');
  });

  it('a hostile or out-of-range value refuses that route alone, naming the field', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ allowOrigins: ['https://a.example/path'] }, /allowOrigins\[0\]/],
      [{ allowOrigins: ['https://a.example" if TRUE'] }, /allowOrigins\[0\]/],
      [{ allowOrigins: ['https://a.example:99999'] }, /allowOrigins\[0\]/],
      [{ allowOrigins: ['ftp://a.example'] }, /allowOrigins\[0\]/],
      [{ allowOrigins: ['*', 'https://a.example'] }, /allowOrigins: '\*' must stand alone/],
      [{ allowOrigins: Array.from({ length: 65 }, (_, i) => `https://a${i}.example`) }, /more than 64/],
      [{ allowOrigins: ['https://a.example', 'https://A.example'] }, /listed twice/],
      [{ allowHeaders: ['x a'] }, /allowHeaders\[0\]/],
      [{ allowHeaders: ['x-"quoted"'] }, /allowHeaders\[0\]/],
      [{ exposeHeaders: ['x\r\ny'] }, /exposeHeaders\[0\]/],
      [{ allowMethods: ['FOO'] }, /allowMethods\[0\]/],
      [{ maxAge: 0 }, /maxAge 0/],
      [{ maxAge: 2 ** 31 }, /maxAge/],
    ];
    for (const [cors, says] of bad) {
      const { vs, accepted } = run({ allowOrigins: ['https://a.example'], ...cors });
      const a = accepted('cors');
      assert.equal(a?.status, false, JSON.stringify(cors).slice(0, 80));
      assert.equal(a?.reason, 'UnsupportedValue');
      assert.match(a?.message ?? '', says);
      assert.ok(!vs.routes.some((x) => x.source === `HTTPRoute ${INFRA}/cors`), 'not served');
      assert.equal(accepted('good')?.status, true, 'the route beside it is served');
    }
  });

  it('a load balancer that does not declare CORS refuses the route by name, never serves it without', () => {
    const { vs, accepted } = run(UPSTREAM, { ...ALL_HTTP, cors: false });
    assert.equal(accepted('cors')?.status, false);
    assert.match(accepted('cors')?.message ?? '', /CORS/);
    assert.ok(!vs.routes.some((x) => x.cors), 'no route is served without its policy');
  });
});
