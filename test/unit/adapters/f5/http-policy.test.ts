/**
 * F5's HTTP routes held to the model: the Endpoint_Policy, pools and iRule npl-lb renders are run
 * by test/support/as3-policy.ts (BIG-IP's first-match semantics and the Tcl we emit) for a table of
 * requests modelled on the Gateway API conformance suite's HTTPRoute tests, and must answer as
 * resolveRequest (src/model/http-match.ts) does; every object is valid AS3 3.56.0; weights come out
 * in the model's proportions; untrusted values never turn into Tcl.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { resolveRequest } from '../../../../src/model/http-match.ts';
import type { L7VirtualService } from '../../../../src/model/types.ts';
import { POOLS, r, routes, table, vs } from '../../../support/route-table.ts';
import { renderPool, renderVirtualService } from '../../../../adapters/f5/declaration.ts';
import { policyValue, routeProblem, tclLiteral } from '../../../../adapters/f5/http-policy.ts';
import { validateAs3 } from '../../../../adapters/f5/as3-validate.ts';
import { evaluate, tclValue } from '../../../support/as3-policy.ts';

type Json = Record<string, unknown>;

const poolMap = new Map(POOLS.map((p) => [p.name, p]));
const app = (v: L7VirtualService = vs): Json => ({
  class: 'Application',
  template: 'generic',
  ...Object.fromEntries(POOLS.map((p) => [p.name, renderPool(p, 'c1')])),
  ...renderVirtualService(v, 'c1', undefined, poolMap),
});

describe('F5 HTTP routes (Endpoint_Policy) held to the model', () => {
  it('is valid AS3 3.56.0, and no route of the table is refused', () => {
    const problems = validateAs3({
      class: 'ADC',
      schemaVersion: '3.56.0',
      id: 'npl-lb-c1',
      T: { class: 'Tenant', A: app() },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(routes.map(routeProblem).filter(Boolean), []);
  });

  it('answers every request of the table as the model does: match, precedence, host isolation, modifiers, redirects, rewrites', () => {
    const a = app();
    for (const req of table) {
      const want = resolveRequest(vs, req, 0.1);
      const got = evaluate(a, vs.name, { ...req, path: req.path }, 0.9);
      const label = `${req.method ?? 'GET'} ${req.host}${req.path}`;
      // Nothing matches and no default: the model says 404, BIG-IP resets the connection.
      assert.equal(got.status, want.status === 404 ? 0 : want.status, `${label}: status`);
      assert.equal(got.location, want.location, `${label}: location`);
      if (want.status === 200 && !want.route?.backends) {
        assert.equal(got.pool, want.pool, `${label}: pool`);
        assert.deepEqual(got.upstream, want.upstream, `${label}: the request as the backend sees it`);
      }
      if (want.responseHeaders)
        assert.deepEqual(
          got.response?.map((x) => JSON.stringify(x.remove ?? x.insert)),
          [JSON.stringify({ name: 'X-Resp' }), JSON.stringify({ name: 'X-Resp', value: 'from-route' })],
        );
    }
  });

  it('weights: the rule’s pool has every backend member with ratios in the weights’ proportion; the unresolved share answers 500', () => {
    const a = app();
    const shares = (prefix: string) => {
      const rule = ((a[`${vs.name}_policy`] as Json).rules as Json[]).find((x) =>
        JSON.stringify(x.conditions).includes(`"${prefix}"`),
      )!;
      const fwd = (rule.actions as Json[]).find((x) => x.type === 'forward');
      const split = fwd ? (a[String(((fwd.select as Json).pool as Json).use)] as Json) : undefined;
      const byPool = new Map<string, number>();
      let total = 0;
      for (const m of (split?.members ?? []) as Json[]) {
        const owner = POOLS.find((p) =>
          p.members.some((x) => x.port === m.servicePort && x.address === (m.serverAddresses as string[])[0]),
        )!;
        byPool.set(owner.name, (byPool.get(owner.name) ?? 0) + Number(m.ratio));
        total += Number(m.ratio);
      }
      return { split, byPool, total };
    };
    const s = shares('/split');
    assert.equal(s.split?.loadBalancingMode, 'ratio-member');
    assert.ok(Math.abs(s.byPool.get('v1')! / s.total - 0.75) < 0.01, 'v1 gets 3/4');
    assert.ok(Math.abs(s.byPool.get('v2')! / s.total - 0.25) < 0.01, 'v2 gets 1/4');
    assert.equal(s.byPool.get('v3'), undefined, 'a weight of 0 gets nothing');
    // Half of /half answers 500: the rule sets the variable with probability 1/2 and the iRule answers.
    const low = evaluate(a, vs.name, { host: 'h', path: '/half' }, 0.2);
    const high = evaluate(a, vs.name, { host: 'h', path: '/half' }, 0.7);
    assert.equal(low.status, 500);
    assert.equal(high.status, 200);
    assert.equal(high.pool, `${vs.name}_w${routes.findIndex((x) => x.path === '/half')}`);
    assert.deepEqual((a[vs.name] as Json).iRules, [`${vs.name}_500`]);
    // Over a bounded number of requests the split follows the weights within a tolerance.
    let fails = 0;
    for (let i = 0; i < 1000; i++)
      if (evaluate(a, vs.name, { host: 'h', path: '/half' }, (i + 0.5) / 1000).status === 500) fails++;
    assert.equal(fails, 500);
  });

  it('a prefix is whole path segments, compared case-sensitively; a route with a regular expression is refused', () => {
    const a = app();
    assert.equal(evaluate(a, vs.name, { host: 'exact.example', path: '/api/x' }).pool, 'v2');
    assert.equal(evaluate(a, vs.name, { host: 'exact.example', path: '/apix' }).status, 0);
    assert.equal(evaluate(a, vs.name, { host: 'exact.example', path: '/API' }).status, 0);
    assert.match(
      routeProblem(r('', '/re/[0-9]+', 'RegularExpression', 'v1')) ?? '',
      /regular expression paths/,
    );
    assert.match(
      routeProblem(
        r('', '/', 'Prefix', 'v1', { headers: [{ name: 'x', value: 'a.*', type: 'RegularExpression' }] }),
      ) ?? '',
      /regular expression matches/,
    );
  });

  it('untrusted values never become Tcl: any header value or path reads back exactly as written', () => {
    const ctx = { host: 'h', path: '/p', query: '', rand: 0 };
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 40 }), (v) => {
        const clean = v.replace(/[\r\n\0]/g, '');
        assert.equal(tclValue(policyValue(clean), ctx), clean);
        assert.equal(tclValue(`tcl:${tclLiteral(clean)}`, ctx), clean);
      }),
      { numRuns: 500 },
    );
    // A redirect to a full path with Tcl in it lands on that path, nothing runs.
    const got = evaluate(app(), vs.name, { host: 'plain.test', path: '/redirect/full' });
    assert.equal(got.location, 'http://plain.test/full-$[x]');
  });

  it('an empty or all-unresolved split answers 500 for every request; a service without routes has an empty policy', () => {
    const a = app();
    assert.equal(evaluate(a, vs.name, { host: 'h', path: '/gone' }, 0.99).status, 500);
    const none = app({ ...vs, routes: [] });
    assert.deepEqual((none[`${vs.name}_policy`] as Json).rules, []);
    assert.equal((none[vs.name] as Json).iRules, undefined);
  });
});
