/**
 * Issue 46, item 2, on a real HAProxy, every transport (runtime; Data Plane API v2 and v3 on the
 * simulator): a client-filter change the device refuses never leaves a wider filter serving. An
 * unfiltered L4 frontend serves everyone; the change that adds a filter is one HAProxy refuses (a
 * mask of 99, which gets past the adapter's character check and not past `haproxy -c`). Its
 * frontend is taken down (the outside client is no longer served), its failure names HAProxy's
 * own reason, and another tenant's frontend in the same batch goes live. Fixed, the filter serves
 * the inside client and refuses the outside one, sent as the controller sends it (an update of the
 * frontend it still has observed), at once.
 *
 * A shared HTTP frontend (one IngressClass, three tenants) whose change HAProxy refuses for one
 * tenant's filter is narrowed to that tenant: the others' routes (one of them new in the same
 * change) are served, the culprit's host is served to nobody (never by its older, wider route),
 * and the failure names the culprit alone (`error.sources`). Fixed, all three are served.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { plan } from '../../src/plan/diff.ts';
import type { HttpRoute, L4VirtualService, L7VirtualService, LbState, Pool } from '../../src/model/types.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';

const POD_IP = '127.0.58.21';
const VIP = '127.0.58.10';
const PORT_A = 18201;
const PORT_B = 18202;
/** The L7 port of each transport's run (18203, 18204, 18205): a HAProxy just stopped may hold one a moment. */
const PORT_L7 = 18203;
const INSIDE = '127.0.58.200';
const OUTSIDE = '127.0.58.201';

async function app(t: TestContext): Promise<void> {
  const server: Server = createServer((s) => s.end('hello\n'));
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

const answer = (port: number, from: string): Promise<string> =>
  new Promise((resolve) => {
    let got = '';
    const s = connect({ host: VIP, port, localAddress: from });
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('close', () => resolve(got.trim()));
    s.on('error', () => undefined);
    s.setTimeout(3000, () => s.destroy());
  });

const pool: Pool = {
  name: 'e2e--app-tcp',
  service: 'default/app',
  servicePort: 'tcp',
  protocol: 'TCP',
  health: 'tcp',
  members: [{ address: POD_IP, port: 8080, node: 'n1', pod: 'default/app-1', enabled: true }],
};
const vs = (name: string, port: number, source: string, sourceRanges?: string[]): L4VirtualService => ({
  kind: 'l4',
  name,
  vip: VIP,
  port,
  protocol: 'TCP',
  pool: pool.name,
  source,
  ...(sourceRanges ? { sourceRanges } : {}),
});

for (const tr of TRANSPORTS)
  describe(`a refused client filter fails closed (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('the wider frontend is taken down with HAProxy’s reason, the other tenant lands, the fix serves', async (t) => {
      assertNoListeners('127.0.58.', [PORT_A, PORT_B]);
      await app(t);
      const rig = await tr.start(t, 4);
      const a = rig.adapter;
      const state = (vss: L4VirtualService[]): LbState => ({ pools: [pool], virtualServices: vss });
      const applyAll = async (s: LbState) => a.apply(plan(s, await a.observe()).changes);

      const open = vs('e2e--team-a-app-tcp', PORT_A, 'team-a/app');
      assert.ok((await applyAll(state([open]))).every((r) => r.ok));
      await rig.idle();
      assert.equal(await answer(PORT_A, OUTSIDE), 'hello', 'unfiltered: everyone served');

      // The filter HAProxy refuses, with another tenant's new frontend in the same batch.
      const refused = vs(open.name, PORT_A, open.source, [`${INSIDE}/32`, '10.0.0.0/99']);
      const other = vs('e2e--team-b-app-tcp', PORT_B, 'team-b/app');
      const results = await applyAll(state([refused, other]));
      await rig.idle();
      const mine = results.find((r) => r.change.name === open.name);
      assert.equal(mine?.ok, false);
      assert.equal(mine?.error?.code, 'ConfigInvalid');
      assert.match(mine!.error!.message, /99/, 'HAProxy’s own reason names the bad mask');
      assert.match(mine!.error!.message, /not served until HAProxy takes the change/);
      assert.equal(results.find((r) => r.change.name === other.name)?.ok, true, 'the other tenant lands');
      assert.equal(await answer(PORT_A, OUTSIDE), '', 'never the wider (unfiltered) frontend');
      assert.equal(await answer(PORT_B, OUTSIDE), 'hello');
      const seen = (await a.observe()).owned.virtualServices.map((v) => v.name).sort();
      assert.deepEqual(seen, [other.name], 'the refused frontend is down on the device');

      // Passes retry the same refused change: still down, still said.
      const again = await applyAll(state([refused, other]));
      assert.equal(again.find((r) => r.change.name === open.name)?.ok, false);
      assert.equal(await answer(PORT_A, OUTSIDE), '');

      // Fixed: the filter serves the inside client and refuses the outside one. The controller
      // still has the unfiltered frontend observed (its change failed), so the fix comes as an
      // update of it, and lands at once (not NotFound until the controller re-reads the device).
      const fixed = vs(open.name, PORT_A, open.source, [`${INSIDE}/32`]);
      const fix = await a.apply([
        { op: 'update', kind: 'virtualService', name: open.name, desired: fixed, observed: open },
      ]);
      assert.deepEqual(
        fix.map((r) => [r.ok, r.change.op, r.error?.code]),
        [[true, 'update', undefined]],
        'the update of a frontend taken down creates it again',
      );
      assert.ok((await applyAll(state([fixed, other]))).every((r) => r.ok));
      await rig.idle();
      assert.equal(await answer(PORT_A, INSIDE), 'hello');
      assert.equal(await answer(PORT_A, OUTSIDE), '');
      assert.deepEqual(rig.specProblems(), []);
    });
  });

async function httpApp(t: TestContext): Promise<void> {
  const server = createHttpServer((_req, res) => res.writeHead(200).end('hello'));
  await new Promise<void>((r) => server.listen(8081, POD_IP, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

/** The status a request for `host` from `from` gets on the L7 `port` (0: no answer). */
const status = (port: number, host: string, from: string): Promise<number> =>
  new Promise((resolve) => {
    const req = httpRequest(
      {
        host: VIP,
        port,
        path: '/',
        headers: { host },
        localAddress: from,
        agent: false,
        timeout: 3000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });

const web: Pool = {
  ...pool,
  name: 'e2e--web-http',
  service: 'default/web',
  servicePort: 'http',
  members: [{ ...pool.members[0]!, port: 8081 }],
};
const route = (tenant: string, sourceRanges?: string[]): HttpRoute => ({
  host: `${tenant}.example.com`,
  path: '/',
  pathType: 'Prefix',
  pool: web.name,
  source: `${tenant}/web`,
  ...(sourceRanges ? { sourceRanges } : {}),
});
const shared = (port: number, routes: HttpRoute[]): L7VirtualService => ({
  kind: 'l7',
  name: 'e2e--ingress-npl-lb-http',
  vip: VIP,
  port,
  ingressClass: 'npl-lb',
  defaultPool: undefined,
  routes,
});

for (const [i, tr] of TRANSPORTS.entries())
  describe(
    `a refused shared frontend is narrowed to its tenant (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('the other tenants are served, the culprit by nobody, the failure names it alone', async (t) => {
        const port = PORT_L7 + i;
        assertNoListeners('127.0.58.', [port]);
        await httpApp(t);
        const rig = await tr.start(t, 4);
        const a = rig.adapter;
        const applyAll = async (vs: L7VirtualService) =>
          a.apply(plan({ pools: [web], virtualServices: [vs] }, await a.observe()).changes);
        const hosts = async () =>
          [
            await status(port, 'team-a.example.com', OUTSIDE),
            await status(port, 'team-b.example.com', OUTSIDE),
            await status(port, 'team-b.example.com', INSIDE),
            await status(port, 'team-c.example.com', OUTSIDE),
          ].join(' ');

        assert.ok((await applyAll(shared(port, [route('team-a'), route('team-b')]))).every((r) => r.ok));
        await rig.idle();
        assert.equal(await hosts(), '200 200 200 503', 'two tenants open; team-c not there yet');

        // team-b adds a filter HAProxy refuses while team-c joins the same frontend.
        const refused = shared(port, [
          route('team-a'),
          route('team-b', [`${INSIDE}/32`, '10.0.0.0/99']),
          route('team-c'),
        ]);
        const results = await applyAll(refused);
        await rig.idle();
        const mine = results.find((r) => r.change.kind === 'virtualService');
        assert.equal(mine?.ok, false);
        assert.equal(mine?.error?.code, 'ConfigInvalid');
        assert.deepEqual(mine?.error?.sources, ['team-b/web'], 'the failure names the culprit alone');
        assert.match(mine!.error!.message, /99/, 'with HAProxy’s own reason');
        assert.equal(await hosts(), '200 503 503 200', 'team-a and team-c served, team-b by nobody');

        // Fixed: every tenant served, team-b's filter in force.
        const fixed = shared(port, [route('team-a'), route('team-b', [`${INSIDE}/32`]), route('team-c')]);
        assert.ok((await applyAll(fixed)).every((r) => r.ok));
        await rig.idle();
        assert.equal(await hosts(), '200 403 200 200');
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
