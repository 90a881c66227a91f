/**
 * Avi's HTTP routes held to the model: the policy set, pool groups and DataScript npl-lb renders
 * are run by test/support/avi-policy.ts (rules by index, first match acts) for the table of
 * requests modelled on the Gateway API conformance suite, and must answer as resolveRequest
 * (src/model/http-match.ts) does; every object fits the Avi field model; weights come out in the
 * model's proportions; values stay data whatever they hold.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { resolveConnection, resolveRequest } from '../../../../src/model/http-match.ts';
import type { L4VirtualService, L7VirtualService, SniRoute } from '../../../../src/model/types.ts';
import { luaString } from '../../../../adapters/avi/passthrough.ts';
import { invalid } from '../../../../adapters/avi/object-schemas.ts';
import { renderVirtualService } from '../../../../adapters/avi/vs-objects.ts';
import { routeProblem } from '../../../../adapters/avi/http-policy.ts';
import { type AviObjects, connect, evaluate } from '../../../support/avi-policy.ts';
import { luaEval } from '../../../support/avi-datascript.ts';
import { r, routes, table, vs } from '../../../support/route-table.ts';

const at = { cloud: 'Default-Cloud', seGroup: 'Default-Group', vrf: 'global' };

function objects(v: L7VirtualService = vs): AviObjects {
  const { children, services } = renderVirtualService(v, 'c1', at);
  const out: AviObjects = {};
  for (const c of children) (out[c.type] ??= new Map()).set(c.object.name, c.object);
  for (const s of services) (out.virtualservice ??= new Map()).set(s.name, s);
  out.poolgroup ??= new Map();
  return out;
}

describe('Avi HTTP routes (HTTP policy set) held to the model', () => {
  it('fits the Avi field model, and no route of the table is refused', () => {
    const { children, services } = renderVirtualService(vs, 'c1', at);
    assert.deepEqual(
      [
        ...children.flatMap((c) => invalid(c.type, c.object)),
        ...services.flatMap((s) => invalid('virtualservice', s)),
      ],
      [],
    );
    assert.deepEqual(routes.map(routeProblem).filter(Boolean), []);
  });

  it('answers every request of the table as the model does: match, precedence, host isolation, modifiers, redirects, rewrites, 404', () => {
    const o = objects();
    for (const req of table) {
      const want = resolveRequest(vs, req, 0.1);
      const got = evaluate(o, vs.name, req, 0.9);
      const label = `${req.method ?? 'GET'} ${req.host}${req.path}`;
      assert.equal(got.status, want.status, `${label}: status`);
      assert.equal(got.location, want.location, `${label}: location`);
      if (want.status === 200 && !want.route?.backends) {
        assert.equal(got.pool, want.pool, `${label}: pool`);
        assert.deepEqual(got.upstream, want.upstream, `${label}: the request as the backend sees it`);
      }
      if (want.responseHeaders)
        assert.deepEqual(got.response, [
          { action: 'HTTP_REMOVE_HDR', hdr: { name: 'X-Resp' } },
          { action: 'HTTP_ADD_HDR', hdr: { name: 'X-Resp', value: { val: 'from-route' } } },
        ]);
    }
  });

  it('weights: the rule’s pool group holds each backend at its weight; the unresolved share answers 500', () => {
    const o = objects();
    const splitAt = (path: string) => {
      const rule = (
        o.httppolicyset!.get(vs.name)!.http_request_policy as { rules: Record<string, unknown>[] }
      ).rules.find((x) => JSON.stringify(x.match).includes(`"${path}"`))!;
      const group = decodeURIComponent(
        String((rule.switching_action as { pool_group_ref: string }).pool_group_ref).replace(
          /^.*\?name=/,
          '',
        ),
      );
      return o.poolgroup!.get(group)!.members as { pool_ref: string; ratio: number }[];
    };
    assert.deepEqual(
      splitAt('/split').map((m) => [m.pool_ref, m.ratio]),
      [
        ['/api/pool?name=v1', 3],
        ['/api/pool?name=v2', 1],
      ],
      'weight 0 left out',
    );
    let fails = 0;
    for (let i = 0; i < 1000; i++)
      if (evaluate(o, vs.name, { host: 'h', path: '/half' }, (i + 0.5) / 1000).status === 500) fails++;
    assert.equal(fails, 500, 'half of /half answers 500');
    assert.equal(
      evaluate(o, vs.name, { host: 'h', path: '/gone' }, 0.999).status,
      500,
      'all unresolved: every request',
    );
    assert.ok(o.virtualservice!.get(vs.name)!.vs_datascripts, 'the service runs the DataScript');
    // A client cannot bring its own share: every rule of the service removes the header first.
    assert.equal(
      evaluate(o, vs.name, { host: 'h', path: '/mod', headers: { 'x-npl-lb-unresolved-share': '1' } }).status,
      200,
    );
    // Large weights keep their proportions within Avi's ratio range (1-1000).
    const big = objects({
      ...vs,
      routes: [
        r('', '/', 'Prefix', '', {
          backends: [
            { pool: 'v1', weight: 900_000 },
            { pool: 'v2', weight: 100_000 },
          ],
        }),
      ],
    });
    const members = [...big.poolgroup!.values()].find((g) => String(g.name).includes('--rule-'))!.members as {
      ratio: number;
    }[];
    assert.deepEqual(
      members.map((m) => m.ratio),
      [1000, 111],
    );
  });

  it('what Avi cannot express is refused before it is sent: regular expressions, two query parameters, a 308', () => {
    assert.match(routeProblem(r('', '/re/[0-9]+', 'RegularExpression', 'v1')) ?? '', /string groups/);
    assert.match(
      routeProblem(
        r('', '/', 'Prefix', 'v1', {
          queryParams: [
            { name: 'a', value: '1', type: 'Exact' },
            { name: 'b', value: '2', type: 'Exact' },
          ],
        }),
      ) ?? '',
      /one query parameter/,
    );
    assert.match(
      routeProblem(r('', '/', 'Prefix', '', { redirect: { statusCode: 308 } })) ?? '',
      /301, 302 or 307/,
    );
  });

  it('values stay data: any header value set by a route reaches the backend exactly', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((v) => !/[\r\n\0]/.test(v)),
        (value) => {
          const v: L7VirtualService = {
            ...vs,
            routes: [
              r('', '/', 'Prefix', 'v1', {
                requestHeaders: { set: [{ name: 'X-V', value }], add: [], remove: [] },
              }),
            ],
          };
          const got = evaluate(objects(v), v.name, { host: 'h', path: '/x' });
          assert.equal(got.upstream?.headers['x-v'], value);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('Avi TLS passthrough (an L4 DataScript choosing a pool group by SNI) held to the model', () => {
  const passthrough = (sni: SniRoute[]): L4VirtualService => ({
    kind: 'l4',
    name: 'c1--gw-infra.gw-TLS-443',
    vip: '192.0.2.50',
    port: 443,
    protocol: 'TCP',
    pool: '',
    source: 'Gateway infra/gw',
    sni,
  });
  const l4Objects = (v: L4VirtualService): AviObjects => {
    const { children, services } = renderVirtualService(v, 'c1', at);
    const out: AviObjects = { virtualservice: new Map(services.map((s) => [s.name, s])) };
    for (const c of children) (out[c.type] ??= new Map()).set(c.object.name, c.object);
    return out;
  };

  it('exact over the longest wildcard over the catch-all; no name and no catch-all: closed', () => {
    const routes: SniRoute[] = [
      { host: 'a.example.com', pool: 'exact', source: 'TLSRoute infra/a' },
      { host: '*.example.com', pool: 'wide', source: 'TLSRoute infra/b' },
      { host: '*.b.example.com', pool: 'narrow', source: 'TLSRoute infra/c' },
    ];
    for (const set of [routes, [...routes, { host: '', pool: 'any', source: 'TLSRoute infra/d' }]]) {
      const v = passthrough(set);
      const o = l4Objects(v);
      assert.equal(connect(o, v.name, null), undefined, 'not TLS: closed');
      for (const sni of [
        'a.example.com',
        'A.EXAMPLE.COM',
        'x.example.com',
        'x.b.example.com',
        'b.example.com',
        'example.com',
        'other.test',
        undefined,
      ])
        assert.equal(
          connect(o, v.name, sni),
          resolveConnection(v, sni),
          `${String(sni)} with ${set.length} routes`,
        );
    }
    const { children, services } = renderVirtualService(passthrough(routes), 'c1', at);
    assert.deepEqual(
      [
        ...children.flatMap((c) => invalid(c.type, c.object)),
        ...services.flatMap((s) => invalid('virtualservice', s)),
      ],
      [],
    );
  });

  it('hosts reach the script only as escaped Lua strings: any text reads back exactly', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (s) => {
        assert.equal(luaEval(luaString(s)), s, 'Lua reads the literal back as the text');
        assert.doesNotMatch(luaString(s).slice(1, -1), /["\n]/, 'no quote or newline inside the literal');
      }),
      { numRuns: 300 },
    );
  });
});
