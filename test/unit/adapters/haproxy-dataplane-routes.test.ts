/**
 * Gateway API routes and TLS passthrough as Data Plane API objects, whatever the routes hold: every
 * object is what the v2/v3 models accept (no white space where the spec forbids it), the simulator's
 * rendering of the objects (its own code, from the API's model) is line for line what the runtime
 * transport writes, and the frontend reads back as exactly the virtual service it came from. What
 * the simulator refuses is in test/unit/sim/dataplane-rules.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { renderGatewayRoutes, renderSniRoutes } from '../../../adapters/haproxy/http-routes.ts';
import { frontendFor, readVirtualService } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import { dpHttpRuleSchema, dpTcpRuleSchema } from '../../../adapters/haproxy/dataplane/models.ts';
import { httpRuleLine as simRuleLine, tcpRequestLine } from '../../../sim/haproxy-dataplane/rule-lines.ts';
import type { HttpRoute, L4VirtualService, L7VirtualService } from '../../../src/model/types.ts';

const layout = {
  owner: 'c1',
  apiVersion: 'v3' as const,
  slots: 4,
  healthChecks: false,
  transparentBinds: false,
};

/** Values an attacker would put in a route (no NUL: the model refuses it before any adapter). */
const hostile = fc
  .oneof(
    fc.string({ maxLength: 30 }),
    fc
      .array(fc.constantFrom('a', ' ', '\n', '"', '\\', '#', '%', '%[src]', '${X}', ' if TRUE', 'é'), {
        maxLength: 6,
      })
      .map((x) => x.join('')),
  )
  .filter((s) => !s.includes('\u0000'));
const token = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const path = hostile.map((p) => `/${p}`);

const routeArb: fc.Arbitrary<HttpRoute> = fc
  .record({
    host: fc.oneof(fc.constant(''), fc.constant('*.example.com'), fc.constant('a.example.com'), hostile),
    path,
    pathType: fc.constantFrom('Prefix', 'Exact', 'RegularExpression') as fc.Arbitrary<HttpRoute['pathType']>,
    method: fc.option(fc.constantFrom('GET', 'POST'), { nil: undefined }),
    headers: fc.array(
      fc.record({ name: token, value: hostile, type: fc.constantFrom('Exact', 'RegularExpression') }),
      { maxLength: 2 },
    ),
    queryParams: fc.array(
      fc.record({ name: token, value: hostile, type: fc.constantFrom('Exact', 'RegularExpression') }),
      { maxLength: 2 },
    ),
    requestHeaders: fc.record({
      set: fc.array(fc.record({ name: token, value: hostile }), { maxLength: 2 }),
      add: fc.array(fc.record({ name: token, value: hostile }), { maxLength: 1 }),
      remove: fc.array(token, { maxLength: 1 }),
    }),
    kind: fc.constantFrom('pool', 'split', 'redirect', 'rewrite'),
    target: fc.oneof(fc.constant(undefined), hostile),
    order: fc.nat({ max: 50 }),
  })
  .map((r): HttpRoute => {
    const base: HttpRoute = {
      host: r.host,
      path: r.path,
      pathType: r.pathType,
      pool: 'c1--web-80',
      source: 'HTTPRoute ns/r',
      order: r.order,
      headers: r.headers as HttpRoute['headers'],
      queryParams: r.queryParams as HttpRoute['queryParams'],
      requestHeaders: r.requestHeaders,
      ...(r.method ? { method: r.method } : {}),
    };
    if (r.kind === 'split') {
      return {
        ...base,
        pool: '',
        backends: [
          { pool: 'c1--web-80', weight: 3 },
          { pool: null, weight: 1 },
        ],
      };
    }
    if (r.kind === 'redirect') {
      return {
        ...base,
        pool: '',
        redirect: {
          statusCode: 302,
          ...(r.target !== undefined ? { hostname: r.target } : {}),
          path: { type: 'ReplacePrefixMatch', value: '/' },
        },
      };
    }
    if (r.kind === 'rewrite') {
      return {
        ...base,
        rewrite: {
          ...(r.target !== undefined ? { hostname: r.target } : {}),
          path: { type: 'ReplaceFullPath', value: `/x${r.target ?? ''}` },
        },
      };
    }
    return base;
  });

const vsOf = (routes: HttpRoute[], https: boolean): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--gw-ns.gw-HTTP-80',
  vip: '192.0.2.10',
  port: 80,
  ingressClass: 'npl-lb',
  routes,
  defaultPool: undefined,
  ...(https ? { protocol: 'HTTPS' as const, certificates: ['c1--ns.a', 'c1--ns.b'] } : {}),
});

describe('Data Plane objects of Gateway API routes', () => {
  it('conform to the models, render as the runtime transport writes, and read back exactly', () => {
    fc.assert(
      fc.property(fc.array(routeArb, { minLength: 1, maxLength: 5 }), fc.boolean(), (routes, https) => {
        // Plain objects, as a JSON source gives them (fast-check's records have no prototype).
        const v = JSON.parse(JSON.stringify(vsOf(routes, https))) as L7VirtualService;
        const f = frontendFor(v, layout, https ? '/storage/ssl_crt_lists/x.crtlist' : undefined);
        for (const r of [...f.httpRequest, ...f.httpResponse]) {
          assert.ok(dpHttpRuleSchema.safeParse(r).success, JSON.stringify(r));
          for (const k of ['redir_value', 'path_fmt', 'var_name', 'var_scope'] as const) {
            if (r[k] !== undefined) assert.match(r[k], /^[^\s]+$/, `${k} has no white space`);
          }
        }
        // What the simulator writes from the objects (by its own reading of the API's model) is
        // what the runtime transport writes.
        const lines = [
          ...f.acls.map((a) => `acl ${a.acl_name} ${a.criterion} ${a.value}`),
          ...f.httpRequest.map((r) => simRuleLine('request', r)),
          ...f.httpResponse.map((r) => simRuleLine('response', r)),
          ...f.rules.map((r) => `use_backend ${r.name} if ${r.cond_test}`),
        ];
        const runtime = renderGatewayRoutes(v)
          .map((l) => l.trim())
          .filter((l) => !l.startsWith('#'));
        assert.deepEqual(lines, runtime);
        for (const l of lines) assert.ok(!l.includes('\n'), 'one line each');
        const back = readVirtualService({ ...f, ...(https ? { certificates: v.certificates! } : {}) });
        // `defaultPool: undefined` is a key of the model that JSON drops; compare as JSON does.
        assert.deepEqual(JSON.parse(JSON.stringify(back)), v);
        assert.equal(f.binds[0]!.ssl, https ? true : undefined);
      }),
      { numRuns: 150 },
    );
  });

  it('TLS passthrough: tcp-request rules and SNI switching read back exactly', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(
          fc.record({
            host: fc.oneof(fc.constant(''), fc.constant('*.example.com'), hostile),
            pool: fc.constantFrom('c1--a-443', 'c1--b-443'),
          }),
          { selector: (r) => r.host, minLength: 1, maxLength: 4 },
        ),
        (sni) => {
          const made: L4VirtualService = {
            kind: 'l4',
            name: 'c1--gw-ns.gw-TLS-443',
            vip: '192.0.2.10',
            port: 443,
            protocol: 'TCP',
            pool: '',
            source: 'Gateway ns/gw',
            sni: sni.map((s) => ({ ...s, source: 'TLSRoute ns/t' })),
          };
          const v = JSON.parse(JSON.stringify(made)) as L4VirtualService;
          const f = frontendFor(v, layout);
          for (const r of f.tcpRequest) assert.ok(dpTcpRuleSchema.safeParse(r).success);
          const lines = [
            ...f.tcpRequest.map(tcpRequestLine),
            ...f.rules.map((r) => `use_backend ${r.name} if ${r.cond_test}`),
            ...(f.frontend.default_backend ? [`default_backend ${f.frontend.default_backend}`] : []),
          ];
          const runtime = renderSniRoutes(v.sni!)
            .map((l) => l.trim())
            .filter((l) => !l.startsWith('#'))
            .map((l) => l.replace('inspect-delay 5s', 'inspect-delay 5000'));
          assert.deepEqual(lines, runtime);
          assert.deepEqual(readVirtualService(f), v);
        },
      ),
      { numRuns: 100 },
    );
  });
});
