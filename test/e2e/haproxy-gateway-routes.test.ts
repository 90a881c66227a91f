/**
 * Gateway API routes through a real HAProxy, on both transports (runtime, and the Data Plane API
 * v2 and v3 on the simulator), with real traffic, held to the
 * model's own request semantics: every request of a table goes both to HAProxy and to
 * resolveRequest (src/model/http-match.ts), and the backend that answered, the status, the headers
 * the backend saw and the response headers must agree. Covers host isolation (exact over wildcard
 * over any), Exact / segment-aware prefix / regular-expression paths, header, query and method
 * matches, precedence, request and response header modifiers, weights within a tolerance over a
 * bounded number of requests, and the 500 share of a backend that does not resolve.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { type HttpRequest, resolveRequest } from '../../src/model/http-match.ts';
import type { HttpRoute, L7VirtualService, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.41.1';
const PORT = 18091;
const BACKENDS = {
  v1: ['127.0.41.11', 18101],
  v2: ['127.0.41.12', 18102],
  v3: ['127.0.41.13', 18103],
} as const;
type Name = keyof typeof BACKENDS;
const poolName = (n: Name) => `e2e--gw-${n}-8080.l7`;

/** An echo backend: answers with its name and the request it saw. */
async function echo(t: TestContext, name: Name): Promise<void> {
  const [ip, port] = BACKENDS[name];
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ name, path: req.url, headers: req.headers }));
  });
  await new Promise<void>((r) => server.listen(port, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

const pool = (n: Name): Pool =>
  kit.pool(poolName(n), [kit.member(BACKENDS[n][0], BACKENDS[n][1], { pod: `gw/${n}-0` })], {
    health: 'http',
    service: `gw/${n}`,
    servicePort: '8080',
  });

let order = 0;
const r = (
  host: string,
  path: string,
  pathType: HttpRoute['pathType'],
  to: Name,
  extra: Partial<HttpRoute> = {},
): HttpRoute => ({
  host,
  path,
  pathType,
  pool: poolName(to),
  source: 'HTTPRoute gw/r',
  order: order++,
  ...extra,
});

const routes: HttpRoute[] = [
  r('exact.example', '/exact', 'Exact', 'v1'),
  r('exact.example', '/api', 'Prefix', 'v2'),
  r('exact.example', '/re/[0-9]+', 'RegularExpression', 'v3'),
  r('*.example', '/', 'Prefix', 'v3'),
  r('', '/', 'Prefix', 'v1', { method: 'DELETE' }),
  r('', '/h', 'Prefix', 'v2', { headers: [{ name: 'x-version', value: 'two', type: 'Exact' }] }),
  r('', '/h', 'Prefix', 'v3', {
    headers: [{ name: 'x-color', value: 'bl(ue|ack)', type: 'RegularExpression' }],
  }),
  r('', '/q', 'Prefix', 'v3', { queryParams: [{ name: 'animal', value: 'whale', type: 'Exact' }] }),
  r('', '/mod', 'Prefix', 'v1', {
    requestHeaders: {
      set: [{ name: 'X-Set', value: 'set-overwrites 100%' }],
      add: [{ name: 'X-Add', value: 'appended' }],
      remove: ['X-Remove'],
    },
    responseHeaders: { set: [{ name: 'X-Resp', value: 'from-route' }], add: [], remove: [] },
  }),
  r('', '/redirect/host', 'Prefix', 'v1', {
    pool: '',
    redirect: { hostname: 'example.org', statusCode: 302 },
  }),
  r('', '/redirect/scheme', 'Prefix', 'v1', {
    pool: '',
    redirect: { scheme: 'https', hostname: 'example.org', statusCode: 301 },
  }),
  r('', '/redirect/port', 'Prefix', 'v1', { pool: '', redirect: { port: 8083, statusCode: 307 } }),
  r('', '/redirect/full', 'Prefix', 'v1', {
    pool: '',
    redirect: { path: { type: 'ReplaceFullPath', value: '/full-100%' }, statusCode: 308 },
  }),
  r('', '/redirect/prefix', 'Prefix', 'v1', {
    pool: '',
    redirect: { path: { type: 'ReplacePrefixMatch', value: '/one' }, statusCode: 303 },
  }),
  r('', '/redirect/root', 'Prefix', 'v1', {
    pool: '',
    redirect: { path: { type: 'ReplacePrefixMatch', value: '/' }, statusCode: 302 },
  }),
  r('', '/rewrite/prefix', 'Prefix', 'v2', {
    rewrite: { path: { type: 'ReplacePrefixMatch', value: '/one' } },
  }),
  r('', '/rewrite/root', 'Prefix', 'v2', { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/' } } }),
  r('', '/rewrite/full', 'Prefix', 'v3', {
    rewrite: { hostname: 'one.example.org', path: { type: 'ReplaceFullPath', value: '/one' } },
  }),
  r('', '/split', 'Prefix', 'v1', {
    pool: '',
    backends: [
      { pool: poolName('v1'), weight: 3 },
      { pool: poolName('v2'), weight: 1 },
      { pool: poolName('v3'), weight: 0 },
    ],
  }),
  // CORS: the upstream test's policies, and origins with ports.
  r('', '/cors-1', 'Prefix', 'v1', {
    cors: {
      allowOrigins: ['https://www.foo.com', 'https://*.bar.com'],
      allowMethods: ['GET', 'OPTIONS'],
      allowHeaders: ['x-header-1', 'x-header-2'],
      exposeHeaders: ['x-header-3', 'x-header-4'],
      allowCredentials: true,
      maxAgeSeconds: 3600,
    },
  }),
  r('', '/cors-any', 'Prefix', 'v2', {
    cors: {
      allowOrigins: ['*'],
      allowMethods: ['*'],
      allowHeaders: ['*'],
      exposeHeaders: [],
      allowCredentials: false,
      maxAgeSeconds: 5,
    },
  }),
  r('', '/cors-port', 'Prefix', 'v3', {
    cors: {
      allowOrigins: ['http://a.example:8080', 'https://b.example:443', 'http://*'],
      allowMethods: [],
      allowHeaders: [],
      exposeHeaders: ['x-100%'],
      allowCredentials: false,
      maxAgeSeconds: 86400,
    },
  }),
  r('', '/half', 'Prefix', 'v1', {
    pool: '',
    backends: [
      { pool: poolName('v2'), weight: 1 },
      { pool: null, weight: 1 },
    ],
  }),
];

const vs: L7VirtualService = {
  kind: 'l7',
  name: 'e2e--gw-gw.gw-HTTP-80',
  vip: VIP,
  port: PORT,
  ingressClass: 'npl-lb',
  routes,
  defaultPool: undefined,
};

interface Seen {
  status: number;
  name?: Name;
  path?: string;
  headers?: Record<string, string>;
  response: Record<string, string | string[] | undefined>;
}

async function send(req: HttpRequest): Promise<Seen> {
  const res = await request(`http://${VIP}:${PORT}${req.path}`, {
    method: (req.method ?? 'GET') as 'GET',
    headers: { host: req.host, ...req.headers },
  });
  const text = await res.body.text();
  const seen: Seen = { status: res.statusCode, response: res.headers };
  if (res.statusCode === 200 && text.startsWith('{')) Object.assign(seen, JSON.parse(text));
  return seen;
}

for (const tr of TRANSPORTS)
  describe(
    `Gateway API routes on a real HAProxy (${tr.name}), held to the model`,
    { skip: haproxyMissing() },
    () => {
      it('every match, precedence, header modifiers, weights and 500 shares: HAProxy answers as the model does', async (t) => {
        assertNoListeners('127.0.41.', [PORT]);
        for (const n of Object.keys(BACKENDS) as Name[]) await echo(t, n);
        const rig = await tr.start(t);
        const adapter = guardOwnership(rig.adapter);
        const state = { pools: (Object.keys(BACKENDS) as Name[]).map(pool), virtualServices: [vs] };
        const results = await adapter.apply(plan(state, await adapter.observe()).changes);
        assert.deepEqual(
          results.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        assert.deepEqual(plan(state, await adapter.observe()).changes, [], 'observed back exactly');

        const table: HttpRequest[] = [
          { host: 'exact.example', path: '/exact' },
          { host: 'exact.example', path: '/exact/more' },
          { host: 'exact.example', path: '/api' },
          { host: 'exact.example', path: '/api/v1?x=1' },
          { host: 'exact.example', path: '/apiv1' },
          { host: 'exact.example', path: '/re/42' },
          { host: 'exact.example', path: '/re/4x' },
          { host: 'exact.example:18091', path: '/exact' },
          { host: 'other.example', path: '/anything' },
          { host: 'a.b.example', path: '/' },
          { host: 'EXACT.example', path: '/exact' },
          { host: 'plain.test', path: '/', method: 'DELETE' },
          { host: 'plain.test', path: '/nothing' },
          { host: 'plain.test', path: '/h', headers: { 'x-version': 'two' } },
          { host: 'plain.test', path: '/h', headers: { 'x-color': 'black' } },
          { host: 'plain.test', path: '/h', headers: { 'x-color': 'blacker' } },
          { host: 'plain.test', path: '/q?animal=whale' },
          { host: 'plain.test', path: '/q?animal=dolphin' },
          { host: 'exact.example', path: '/', method: 'DELETE' },
        ];
        for (const req of table) {
          const want = resolveRequest(vs, req);
          const got = await send(req);
          const what = `${req.method ?? 'GET'} ${req.host}${req.path} ${JSON.stringify(req.headers ?? {})}`;
          assert.equal(got.status, want.status, `${what}: status`);
          if (want.pool) assert.equal(poolName(got.name!), want.pool, `${what}: backend`);
        }

        // Redirects (the Location, port and query kept as the model says) and rewrites (what the backend saw).
        const moves: HttpRequest[] = [
          { host: 'plain.test', path: '/redirect/host/x?q=1' },
          { host: 'plain.test:18091', port: 18091, path: '/redirect/host' },
          { host: 'plain.test:18091', port: 18091, path: '/redirect/scheme' },
          { host: 'plain.test', path: '/redirect/port' },
          { host: 'plain.test', path: '/redirect/full/deep' },
          { host: 'plain.test', path: '/redirect/prefix/two?k=v' },
          { host: 'plain.test', path: '/redirect/prefix' },
          { host: 'plain.test', path: '/redirect/root' },
          { host: 'plain.test', path: '/redirect/root/x' },
        ];
        for (const req of moves) {
          const want = resolveRequest(vs, req);
          const got = await send(req);
          assert.equal(got.status, want.status, `${req.host}${req.path}: status`);
          assert.equal(got.response.location, want.location, `${req.host}${req.path}: location`);
        }
        const rewrites: HttpRequest[] = [
          { host: 'plain.test', path: '/rewrite/prefix/two?k=v' },
          { host: 'plain.test', path: '/rewrite/prefix' },
          { host: 'plain.test', path: '/rewrite/root' },
          { host: 'plain.test', path: '/rewrite/root/a/b' },
          { host: 'plain.test', path: '/rewrite/full/x?q=1' },
        ];
        for (const req of rewrites) {
          const want = resolveRequest(vs, req);
          const got = await send(req);
          assert.equal(got.path, want.upstream!.path, `${req.path}: path the backend saw`);
          assert.equal(got.headers?.host, want.upstream!.host, `${req.path}: host the backend saw`);
        }

        // Header modifiers: what the backend saw, and what the client got back.
        const mod = await send({
          host: 'plain.test',
          path: '/mod',
          headers: { 'x-set': 'old', 'x-add': 'first', 'x-remove': 'gone', keep: 'k' },
        });
        const want = resolveRequest(vs, {
          host: 'plain.test',
          path: '/mod',
          headers: { 'x-set': 'old', 'x-add': 'first', 'x-remove': 'gone', keep: 'k' },
        });
        for (const [k, v] of Object.entries(want.upstream!.headers)) {
          if (k.startsWith('x-') || k === 'keep')
            assert.equal(mod.headers?.[k]?.replace(', ', ','), v, `backend saw ${k}`);
        }
        assert.equal(mod.headers?.['x-remove'], undefined);
        assert.equal(mod.response['x-resp'], 'from-route');

        // CORS: preflights answered by HAProxy (200 with the headers, 403 for an origin not
        // allowed), other requests passed on with the allowed origin echoed on the answer.
        const pre = (origin: string, extra: Record<string, string> = {}) => ({
          origin,
          'access-control-request-method': 'GET',
          ...extra,
        });
        const corsTable: HttpRequest[] = [
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://www.foo.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://www.foo.com:443') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://xpto.www.bar.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('HTTPS://WWW.BAR.COM') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://bar.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://foobar.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('http://www.foo.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://www.foo.com:8443') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://www.foo.com.evil') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: pre('https://evil/www.foo.com') },
          { host: 'c.test', path: '/cors-1', method: 'OPTIONS', headers: { origin: 'https://www.foo.com' } },
          { host: 'c.test', path: '/cors-1', method: 'GET', headers: { origin: 'https://www.foo.com' } },
          { host: 'c.test', path: '/cors-1', method: 'GET', headers: { origin: 'https://a.bar.com' } },
          { host: 'c.test', path: '/cors-1', method: 'GET', headers: { origin: 'https://foobar.com' } },
          { host: 'c.test', path: '/cors-1', method: 'GET' },
          {
            host: 'c.test',
            path: '/cors-any',
            method: 'OPTIONS',
            headers: pre('https://x.example:12345', {
              'access-control-request-method': 'PUT',
              'access-control-request-headers': 'x-a, x-b',
            }),
          },
          { host: 'c.test', path: '/cors-any', method: 'OPTIONS', headers: pre('https://x.example') },
          { host: 'c.test', path: '/cors-any', method: 'OPTIONS', headers: pre('') },
          { host: 'c.test', path: '/cors-any', method: 'PUT', headers: { origin: 'null' } },
          { host: 'c.test', path: '/cors-port', method: 'OPTIONS', headers: pre('http://a.example:8080') },
          { host: 'c.test', path: '/cors-port', method: 'OPTIONS', headers: pre('http://a.example') },
          { host: 'c.test', path: '/cors-port', method: 'OPTIONS', headers: pre('https://b.example') },
          { host: 'c.test', path: '/cors-port', method: 'OPTIONS', headers: pre('http://any.where') },
          { host: 'c.test', path: '/cors-port', method: 'OPTIONS', headers: pre('http://any.where:81') },
          { host: 'c.test', path: '/cors-port', method: 'GET', headers: { origin: 'http://a.example:8080' } },
        ];
        const corsOf = (h: Record<string, string | string[] | undefined>) =>
          Object.fromEntries(
            Object.entries(h)
              .filter(([k]) => k.startsWith('access-control-') || k === 'vary')
              .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v]),
          );
        for (const req of corsTable) {
          const want = resolveRequest(vs, req);
          const got = await send(req);
          const what = `${req.method} ${req.path} ${JSON.stringify(req.headers ?? {})}`;
          assert.equal(got.status, want.status, `${what}: status`);
          if (want.pool) assert.equal(poolName(got.name!), want.pool, `${what}: backend`);
          else assert.equal(got.name, undefined, `${what}: answered by HAProxy, not a member`);
          assert.deepEqual(corsOf(got.response), want.cors ?? {}, `${what}: CORS headers`);
        }
        // A policy changed in place (an origin taken away): applied, observed back, and the origin
        // taken away is refused at once while the one kept is still served.
        const narrowed: L7VirtualService = {
          ...vs,
          routes: vs.routes.map((x) =>
            x.path === '/cors-1' ? { ...x, cors: { ...x.cors!, allowOrigins: ['https://*.bar.com'] } } : x,
          ),
        };
        const next = { ...state, virtualServices: [narrowed] };
        const changed = await adapter.apply(plan(next, await adapter.observe()).changes);
        assert.deepEqual(
          changed.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        assert.deepEqual(plan(next, await adapter.observe()).changes, [], 'the new policy observed back');
        const gone = await send({
          host: 'c.test',
          path: '/cors-1',
          method: 'OPTIONS',
          headers: pre('https://www.foo.com'),
        });
        assert.equal(gone.status, 403, 'the origin taken away');
        const kept = await send({
          host: 'c.test',
          path: '/cors-1',
          method: 'OPTIONS',
          headers: pre('https://a.bar.com'),
        });
        assert.equal(kept.response['access-control-allow-origin'], 'https://a.bar.com', 'the origin kept');
        await adapter.apply(plan(state, await adapter.observe()).changes);

        // Weights within a tolerance over a bounded number of requests.
        const N = 200;
        const counts = new Map<string | number, number>();
        const half = new Map<string | number, number>();
        for (let i = 0; i < N; i++) {
          const s = await send({ host: 'plain.test', path: '/split' });
          counts.set(s.name ?? s.status, (counts.get(s.name ?? s.status) ?? 0) + 1);
          const h = await send({ host: 'plain.test', path: '/half' });
          half.set(h.name ?? h.status, (half.get(h.name ?? h.status) ?? 0) + 1);
        }
        assert.equal(counts.get('v3'), undefined, 'a weight of 0 takes nothing');
        const v1 = (counts.get('v1') ?? 0) / N;
        assert.ok(v1 > 0.6 && v1 < 0.9, `3:1 split: v1 took ${v1}`);
        const errors = (half.get(500) ?? 0) / N;
        assert.ok(errors > 0.3 && errors < 0.7, `the unresolved half answers 500: ${errors}`);
        assert.equal((half.get('v2') ?? 0) + (half.get(500) ?? 0), N);
        assert.deepEqual(rig.specProblems(), [], 'every Data Plane exchange conforms to the spec');
      });
    },
  );
