/**
 * The dataplane transport's slots on a real HAProxy behind the simulator: scaling within the slots
 * is runtime changes only, running out grows them with exactly one reload, names and v3 metadata
 * show the node, draining is weight 0 and back; a 409 fails the batch as retryable and the retry
 * re-reads; a change the API refuses fails alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DataplaneClient } from '../../adapters/haproxy/dataplane/client.ts';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import type { Member, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { haproxyMissing } from '../support/haproxy.ts';
import * as kit from '../support/model.ts';

const member = (i: number, enabled = true): Member =>
  kit.member(`127.0.0.${10 + i}`, 61000 + i, { node: `n${(i % 3) + 1}`, pod: `default/web-${i}`, enabled });
const pool = (name: string, members: Member[]): Pool => kit.pool(name, members, { service: 'default/web' });
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

async function sync(a: LoadBalancerAdapter, pools: Pool[]) {
  const p = plan({ pools, virtualServices: [] }, await a.observe());
  return a.apply(p.changes);
}

for (const v of ['v2', 'v3'] as ApiVersion[]) {
  describe(`HAProxy dataplane transport ${v}: slots`, { skip: haproxyMissing() }, () => {
    it('scales within slots without reloads, grows them with one reload, names show the node', async (t) => {
      const rig = await startDataplaneSim(t);
      const a = rig.adapter('c1', v, { slots: 4 });
      const name = 'c1--default-web-80';
      const servers = () =>
        new DataplaneClient({ url: rig.url, apiVersion: v, username: 'admin', password: 'admin' }).servers(
          name,
        );
      assert.ok(
        (
          await sync(a, [
            pool(
              name,
              range(1, 3).map((i) => member(i)),
            ),
          ])
        ).every((r) => r.ok),
      );
      let list = await servers();
      assert.equal(list.length, 4, 'one step of 4 slots');
      assert.deepEqual(
        list
          .filter((s) => s.maintenance !== 'enabled')
          .map((s) => s.name)
          .sort(),
        ['s1_n2', 's2_n3', 's3_n1'],
      );
      if (v === 'v3') {
        assert.deepEqual(list.find((s) => s.name === 's3_n1')?.metadata, {
          npl_lb: { node: 'n1', pod: 'default/web-3' },
        });
      }
      const reloads = () => rig.sim.stats.reloads;
      const start = reloads();

      // 3 -> 8: one step more, one reload.
      assert.ok(
        (
          await sync(a, [
            pool(
              name,
              range(1, 8).map((i) => member(i)),
            ),
          ])
        ).every((r) => r.ok),
      );
      assert.equal(reloads(), start + 1, 'growing the slots reloads once');
      list = await servers();
      assert.equal(list.length, 8);
      assert.equal(list.filter((s) => s.maintenance !== 'enabled').length, 8);

      // 8 -> 2 -> 7 (drain one on the way): runtime changes only.
      assert.ok((await sync(a, [pool(name, [member(1), member(2, false)])])).every((r) => r.ok));
      list = await servers();
      assert.equal(list.filter((s) => s.maintenance !== 'enabled').length, 2);
      assert.equal(list.find((s) => s.address === member(2).address)?.weight, 0, 'draining: weight 0');
      const state = await rig.sim.proc.runtime(`show servers state ${name}`);
      assert.match(state, new RegExp(`${member(2).address} \\d+ \\d+ 0 `), 'HAProxy runs it with weight 0');
      const back = [1, 2, 4, 6, 12].map((i) => member(i));
      assert.ok((await sync(a, [pool(name, back)])).every((r) => r.ok));
      assert.equal(reloads(), start + 1, 'no reload while the slots suffice');
      list = await servers();
      assert.equal(list.find((s) => s.address === member(2).address)?.weight, 1, 'enabled again');
      // A new member takes a free slot named for its node when there is one.
      const m12 = list.find((s) => s.address === member(12).address)!;
      assert.match(m12.name, /_n1$/, `member 12 (node n1) is in ${m12.name}`);
      assert.deepEqual(
        plan({ pools: [pool(name, back)], virtualServices: [] }, await a.observe()).changes,
        [],
      );
      // HAProxy serves what the API says.
      const running = await rig.sim.proc.runtime(`show servers state ${name}`);
      for (const m of back)
        assert.match(running, new RegExp(`${m.address.replace(/\./g, '\\.')} \\d+ \\d+ \\d+ `));
    });

    it('a 409 or 406 fails the batch as retryable and the retry re-reads; a refused change fails alone', async (t) => {
      // Another writer commits just before our transaction starts (409) or before it commits (406).
      let race: 'start' | 'commit' | undefined;
      const otherCommit = async (name: string) => {
        const c = other;
        const tx = await c.startTransaction(await c.configVersion());
        await c.putBackend(tx, { name, mode: 'tcp' }, false);
        await c.commit(tx);
      };
      const rig = await startDataplaneSim(t, {
        beforeRequest: async (method, path) => {
          const hit =
            (race === 'start' && method === 'POST' && path.endsWith('/services/haproxy/transactions')) ||
            (race === 'commit' && method === 'PUT' && /\/transactions\/[^/]+$/.test(path));
          if (!hit) return;
          const which = race;
          race = undefined;
          await otherCommit(`someone-else-${which}`);
        },
      });
      const other = new DataplaneClient({
        url: rig.url,
        apiVersion: v,
        username: 'admin',
        password: 'admin',
      });
      t.after(() => other.close());
      const a = rig.adapter('c1', v);
      assert.ok((await sync(a, [pool('c1--a-80', [member(1)])])).every((r) => r.ok));
      for (const [when, status] of [
        ['start', 409],
        ['commit', 406],
      ] as const) {
        const want = [pool('c1--a-80', [member(1), member(2), member(3)])];
        const p = plan({ pools: want, virtualServices: [] }, await a.observe());
        race = when;
        const results = await a.apply(p.changes);
        assert.equal(race, undefined, 'the race happened');
        assert.equal(results[0]!.ok, false, `${status} fails the batch`);
        assert.equal(results[0]!.error!.code, 'Conflict');
        assert.equal(results[0]!.error!.terminal, false);
        assert.match(results[0]!.error!.message, new RegExp(String(status)));
        // The retry (as the controller's queue does it) re-reads and lands.
        const again = plan({ pools: want, virtualServices: [] }, await a.observe());
        assert.ok((await a.apply(again.changes)).every((r) => r.ok));
        assert.deepEqual(plan({ pools: want, virtualServices: [] }, await a.observe()).changes, []);
        // Back to one member for the next round.
        assert.ok((await sync(a, [pool('c1--a-80', [member(1)])])).every((r) => r.ok));
      }
      assert.equal(a.stats.conflicts, 2);
      const foreign = (await a.observe()).foreign.map((f) => f.name).sort();
      assert.deepEqual(foreign, ['someone-else-commit', 'someone-else-start'], 'the other writes survive');

      // A pool whose name HAProxy cannot take fails terminally, before any request; the other
      // change in the batch lands.
      const r = await sync(a, [pool('c1--a-80', [member(1), member(2)]), pool('c1--bad name', [member(3)])]);
      const byName = new Map(r.map((x) => [x.change.name, x]));
      assert.equal(byName.get('c1--a-80')!.ok, true);
      assert.equal(byName.get('c1--bad name')!.ok, false);
      assert.equal(byName.get('c1--bad name')!.error!.terminal, true);
      assert.match(byName.get('c1--bad name')!.error!.message, /not a valid HAProxy name/);
    });
  });
}
