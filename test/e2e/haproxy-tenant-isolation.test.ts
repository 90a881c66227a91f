/**
 * Issue 30 on a real HAProxy, every transport (runtime, Data Plane API v2 and v3 on the simulator):
 * one tenant's route never freezes another's changes. In one batch, team A adds a route whose
 * header match and header modifier hold an apostrophe (`it's`: unmatched quote on the Data Plane
 * transport before the fix), team X a route with a regular expression JavaScript compiles and
 * PCRE2 refuses (`[^]`, sent straight to the adapter as if the core's check were bypassed), team
 * B's Pod goes NotReady and team C's new Service asks for its VIP. Everything but team X's
 * listener goes live in that one apply (no retry: the failed commit is bisected), team X's change
 * alone fails terminally with ConfigInvalid, and the apostrophe is served as data.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import type { HttpRoute, L4VirtualService, L7VirtualService, Member, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.48.1';
const PORTS = { a: 18131, x: 18132, c: 18133 } as const;
const PODS = {
  a: ['127.0.48.11', 18141],
  b1: ['127.0.48.12', 18142],
  b2: ['127.0.48.13', 18143],
  c: ['127.0.48.14', 18144],
} as const;
type Pod = keyof typeof PODS;

async function echo(t: TestContext, name: Pod): Promise<void> {
  const [ip, port] = PODS[name];
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ name, headers: req.headers }));
  });
  await new Promise<void>((r) => server.listen(port, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

const member = (p: Pod, enabled = true): Member =>
  kit.member(PODS[p][0], PODS[p][1], { pod: `team/${p}`, enabled });
const pool = (name: string, members: Member[], health: Pool['health'] = 'tcp'): Pool =>
  kit.pool(name, members, { health, service: `team/${name}` });
const route = (pool: string, extra: Partial<HttpRoute>): HttpRoute =>
  kit.route({ host: '', pool, source: `HTTPRoute team/${pool}`, order: 0, ...extra });
const l7 = (name: string, port: number, routes: HttpRoute[]): L7VirtualService => ({
  kind: 'l7',
  name,
  vip: VIP,
  port,
  ingressClass: '',
  defaultPool: undefined,
  routes,
});

const poolA = pool('e2e--team-a-80.l7', [member('a')], 'http');
const poolB = (b2Ready: boolean) => pool('e2e--team-b-80', [member('b1'), member('b2', b2Ready)]);
const vsB: L4VirtualService = {
  kind: 'l4',
  name: 'e2e--team-b-lb-80',
  vip: VIP,
  port: 18134,
  protocol: 'TCP',
  pool: 'e2e--team-b-80',
  source: 'team/b',
};
const poolC = pool('e2e--team-c-80', [member('c')]);
const vsC: L4VirtualService = {
  ...vsB,
  name: 'e2e--team-c-lb-80',
  port: PORTS.c,
  pool: poolC.name,
  source: 'team/c',
};
const vsA = l7('e2e--gw-a-HTTP', PORTS.a, [
  route(poolA.name, {
    headers: [{ name: 'x-who', value: "it's", type: 'Exact' }],
    requestHeaders: { set: [{ name: 'X-Says', value: "it's (a) ~test!*" }], add: [], remove: [] },
  }),
]);
const vsX = l7('e2e--gw-x-HTTP', PORTS.x, [
  route(poolA.name, { headers: [{ name: 'x-id', value: '[^]\\u0041', type: 'RegularExpression' }] }),
]);

for (const tr of TRANSPORTS)
  describe(`one tenant never freezes another (${tr.name})`, { skip: haproxyMissing() }, () => {
    it("an apostrophe is data, a PCRE2-only regex fails alone, and every other tenant's change goes live in the same apply", async (t) => {
      assertNoListeners('127.0.48.', [...Object.values(PORTS), 18134]);
      for (const p of Object.keys(PODS) as Pod[]) await echo(t, p);
      const rig = await tr.start(t);
      const a = rig.adapter;
      const before = { pools: [poolB(true)], virtualServices: [vsB] };
      assert.ok((await a.apply(plan(before, await a.observe()).changes)).every((r) => r.ok));

      const after = {
        pools: [poolA, poolB(false), poolC],
        virtualServices: [vsA, vsB, vsC, vsX],
      };
      const results = await a.apply(plan(after, await a.observe()).changes);
      const failed = results.filter((r) => !r.ok);
      assert.deepEqual(
        failed.map((r) => [r.change.name, r.error?.code, r.error?.terminal]),
        [['e2e--gw-x-HTTP', 'ConfigInvalid', true]],
        JSON.stringify(failed.map((r) => r.error?.message)),
      );

      // Team B's NotReady Pod is out of the pool, team C's Service is served on its VIP.
      const seen = await a.observe();
      const b = seen.owned.pools.find((p) => p.name === 'e2e--team-b-80')!;
      assert.deepEqual(
        b.members.map((m) => [m.pod, m.enabled]),
        [
          ['team/b1', true],
          ['team/b2', false],
        ],
      );
      const c = await request(`http://${VIP}:${PORTS.c}/`, { reset: true });
      assert.equal(((await c.body.json()) as { name: string }).name, 'c');

      // Team A's apostrophe is matched and set as data.
      const hit = await request(`http://${VIP}:${PORTS.a}/`, { headers: { 'x-who': "it's" }, reset: true });
      assert.equal(hit.statusCode, 200);
      const body = (await hit.body.json()) as { name: string; headers: Record<string, string> };
      assert.equal(body.name, 'a');
      assert.equal(body.headers['x-says'], "it's (a) ~test!*");
      const miss = await request(`http://${VIP}:${PORTS.a}/`, { headers: { 'x-who': 'its' }, reset: true });
      await miss.body.dump();
      assert.equal(miss.statusCode, 404);

      // What was applied reads back as it was sent: nothing left to do but team X's listener.
      assert.deepEqual(
        plan(after, await a.observe()).changes.map((ch) => ch.name),
        ['e2e--gw-x-HTTP'],
      );
      assert.deepEqual(rig.specProblems(), []);
    });
  });
