/**
 * Issue 46, item 2, on a real HAProxy, every transport (runtime; Data Plane API v2 and v3 on the
 * simulator): a client-filter change the device refuses never leaves a wider filter serving. An
 * unfiltered L4 frontend serves everyone; the change that adds a filter is one HAProxy refuses (a
 * mask of 99, which gets past the adapter's character check and not past `haproxy -c`). Its
 * frontend is taken down (the outside client is no longer served), its failure names HAProxy's
 * own reason, and another tenant's frontend in the same batch goes live. Fixed, the filter serves
 * the inside client and refuses the outside one, sent as the controller sends it (an update of the
 * frontend it still has observed), at once.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { plan } from '../../src/plan/diff.ts';
import type { L4VirtualService, LbState, Pool } from '../../src/model/types.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';

const POD_IP = '127.0.58.21';
const VIP = '127.0.58.10';
const PORT_A = 18201;
const PORT_B = 18202;
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
