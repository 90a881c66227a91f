/**
 * The runtime transport's edges: a removed server that still has a connection in HAProxy cannot
 * be deleted at once. It is parked in maintenance (no traffic), brought back by repointing
 * when the same member returns, and deleted once HAProxy lets go of it. And a reload restores
 * server states from the saved state file: a drain or undrain in the same batch must survive it.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import type { L7VirtualService, Pool } from '../../../src/model/types.ts';
import { haproxyMissing, startHaproxy } from '../../support/haproxy.ts';
import { eventually } from '../../support/sandbox.ts';

const member = { address: '127.0.34.1', port: 18101, node: 'n1', pod: 'default/web-1', enabled: true };
const pool = (members: (typeof member)[]): Pool => ({
  name: 'c1--web',
  protocol: 'TCP',
  health: 'http',
  service: 'default/web',
  servicePort: 'http',
  members,
});
const vs: L7VirtualService = {
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '127.0.33.1',
  port: 18100,
  ingressClass: 'npl',
  defaultPool: 'c1--web',
  routes: [],
};

describe(
  'HAProxy runtime transport: server states across removal and reload',
  { skip: haproxyMissing() },
  () => {
    it('parks a server HAProxy will not delete yet, repoints it when it returns, deletes it later', async (t) => {
      // GET /slow answers after 1.5 s: a request in flight holds a connection to the server.
      const app = createServer((q, res) => {
        if (q.url === '/slow') setTimeout(() => res.end('slow\n'), 1500);
        else res.end('ok\n');
      });
      await new Promise<void>((r) => app.listen(member.port, member.address, () => r()));
      t.after(() => new Promise<void>((r) => app.close(() => r())));
      const rig = await startHaproxy(t);
      const adapter = rig.adapter('c1', { healthChecks: false });
      t.after(() => adapter.close());
      const ok = (r: { ok: boolean }[]) =>
        assert.deepEqual(
          r.map((x) => x.ok),
          r.map(() => true),
        );
      ok(
        await adapter.apply([
          { op: 'create', kind: 'pool', name: 'c1--web', desired: pool([]) },
          { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
        ]),
      );
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([member]), observed: pool([]) },
        ]),
      );
      const client = new Agent({ connections: 4 });
      t.after(() => client.close());
      const get = async (path = '/') => {
        const r = await request(`http://${vs.vip}:${vs.port}${path}`, { dispatcher: client });
        await r.body.text();
        return r.statusCode;
      };
      assert.equal(await get(), 200);
      // A slow request in flight: removing the member now cannot delete the server; it is parked.
      const slow = get('/slow');
      await new Promise((r) => setTimeout(r, 200));
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([]), observed: pool([member]) },
        ]),
      );
      assert.deepEqual(adapter.parkedServers, ['c1--web/n1_127.0.34.1_18101']);
      assert.equal(await get(), 503, 'a parked server takes no new traffic');
      assert.equal(await slow, 200, 'the request in flight completes');
      // The same member comes back: the parked server is repointed and made ready.
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([member]), observed: pool([]) },
        ]),
      );
      assert.deepEqual(adapter.parkedServers, []);
      assert.equal(await get(), 200);
      // Removed again while busy; once the request is done, the retry deletes it.
      const slow2 = get('/slow');
      await new Promise((r) => setTimeout(r, 200));
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([]), observed: pool([member]) },
        ]),
      );
      assert.equal(adapter.parkedServers.length, 1);
      assert.equal(await slow2, 200);
      await eventually(() => adapter.parkedServers.length === 0, 20_000, 'parked server deleted');
      const state = await rig.proc.runtime('show servers state c1--web');
      assert.doesNotMatch(state, /n1_127\.0\.34\.1_18101/);
    });

    it('keeps a drain or an undrain made in the same batch as a reload (not the old saved state)', async (t) => {
      const rig = await startHaproxy(t);
      const adapter = rig.adapter('c1', { healthChecks: false });
      t.after(() => adapter.close());
      const m1 = member;
      const m2 = { ...member, port: 18102, pod: 'default/web-2' };
      const ok = (r: { ok: boolean }[]) =>
        assert.deepEqual(
          r.map((x) => x.ok),
          r.map(() => true),
        );
      /** Whether HAProxy sends new traffic to each server (not drained, not weight 0). */
      const inRotation = async () => {
        const lines = (await rig.proc.runtime('show servers state c1--web'))
          .split('\n')
          .filter((l) => /^\d+ c1--web /.test(l))
          .map((l) => l.split(' '));
        return Object.fromEntries(lines.map((x) => [x[3], (Number(x[6]) & 0x38) === 0 && x[7] !== '0']));
      };
      const on = (...ms: (typeof member)[]) => pool(ms);
      const withRoutes = (n: number): L7VirtualService => ({
        ...vs,
        routes: Array.from({ length: n }, (_, i) => ({
          host: `h${i}.example`,
          path: '/',
          pathType: 'Prefix' as const,
          pool: 'c1--web',
          source: 'default/web',
        })),
      });
      ok(
        await adapter.apply([
          { op: 'create', kind: 'pool', name: 'c1--web', desired: on(m1, m2) },
          { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
        ]),
      );
      assert.deepEqual(await inRotation(), { 'n1_127.0.34.1_18101': true, 'n1_127.0.34.1_18102': true });
      // m1 drains while a route is added (a reload): the new worker must not take m1's old state.
      const reloads = adapter.stats.reloads;
      ok(
        await adapter.apply([
          {
            op: 'update',
            kind: 'pool',
            name: 'c1--web',
            desired: on({ ...m1, enabled: false }, m2),
            observed: on(m1, m2),
          },
          { op: 'update', kind: 'virtualService', name: vs.name, desired: withRoutes(1), observed: vs },
        ]),
      );
      assert.equal(adapter.stats.reloads, reloads + 1, 'the route was a reload');
      assert.deepEqual(await inRotation(), { 'n1_127.0.34.1_18101': false, 'n1_127.0.34.1_18102': true });
      // And back: m1 returns to rotation in a batch with another reload.
      ok(
        await adapter.apply([
          {
            op: 'update',
            kind: 'pool',
            name: 'c1--web',
            desired: on(m1, m2),
            observed: on({ ...m1, enabled: false }, m2),
          },
          {
            op: 'update',
            kind: 'virtualService',
            name: vs.name,
            desired: withRoutes(2),
            observed: withRoutes(1),
          },
        ]),
      );
      assert.equal(adapter.stats.reloads, reloads + 2);
      assert.deepEqual(await inRotation(), { 'n1_127.0.34.1_18101': true, 'n1_127.0.34.1_18102': true });
      // m2 drains at runtime (no reload: HAProxy's drain state), then returns in a batch that reloads.
      ok(
        await adapter.apply([
          {
            op: 'update',
            kind: 'pool',
            name: 'c1--web',
            desired: on(m1, { ...m2, enabled: false }),
            observed: on(m1, m2),
          },
        ]),
      );
      assert.equal(adapter.stats.reloads, reloads + 2, 'a drain alone is a runtime change');
      assert.deepEqual(await inRotation(), { 'n1_127.0.34.1_18101': true, 'n1_127.0.34.1_18102': false });
      ok(
        await adapter.apply([
          {
            op: 'update',
            kind: 'pool',
            name: 'c1--web',
            desired: on(m1, m2),
            observed: on(m1, { ...m2, enabled: false }),
          },
          {
            op: 'update',
            kind: 'virtualService',
            name: vs.name,
            desired: withRoutes(3),
            observed: withRoutes(2),
          },
        ]),
      );
      assert.equal(adapter.stats.reloads, reloads + 3);
      assert.deepEqual(await inRotation(), { 'n1_127.0.34.1_18101': true, 'n1_127.0.34.1_18102': true });
    });

    it('brings a parked server back into rotation when its member returns in a batch that reloads', async (t) => {
      const app = createServer((q, res) => {
        if (q.url === '/slow') setTimeout(() => res.end('slow\n'), 1500);
        else res.end('ok\n');
      });
      await new Promise<void>((r) => app.listen(member.port, member.address, () => r()));
      t.after(() => new Promise<void>((r) => app.close(() => r())));
      const rig = await startHaproxy(t);
      const adapter = rig.adapter('c1', { healthChecks: false });
      t.after(() => adapter.close());
      const ok = (r: { ok: boolean }[]) =>
        assert.deepEqual(
          r.map((x) => x.ok),
          r.map(() => true),
        );
      ok(
        await adapter.apply([
          { op: 'create', kind: 'pool', name: 'c1--web', desired: pool([member]) },
          { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
        ]),
      );
      const client = new Agent({ connections: 4 });
      t.after(() => client.close());
      const get = async (path = '/') => {
        const r = await request(`http://${vs.vip}:${vs.port}${path}`, { dispatcher: client });
        await r.body.text();
        return r.statusCode;
      };
      assert.equal(await get(), 200);
      const slow = get('/slow');
      await new Promise((r) => setTimeout(r, 200));
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([]), observed: pool([member]) },
        ]),
      );
      assert.deepEqual(adapter.parkedServers, ['c1--web/n1_127.0.34.1_18101'], 'parked in maintenance');
      // The member returns together with a route (a reload), while its server is still parked.
      const routed: L7VirtualService = {
        ...vs,
        routes: [
          { host: 'web.example', path: '/', pathType: 'Prefix', pool: 'c1--web', source: 'default/web' },
        ],
      };
      const reloads = adapter.stats.reloads;
      ok(
        await adapter.apply([
          { op: 'update', kind: 'pool', name: 'c1--web', desired: pool([member]), observed: pool([]) },
          { op: 'update', kind: 'virtualService', name: vs.name, desired: routed, observed: vs },
        ]),
      );
      assert.equal(adapter.stats.reloads, reloads + 1);
      assert.equal(await slow, 200);
      const state = (await rig.proc.runtime('show servers state c1--web'))
        .split('\n')
        .find((l) => /n1_127\.0\.34\.1_18101/.test(l));
      assert.equal(Number(state?.split(' ')[6]) & 0x01, 0, `not in forced maintenance: ${state}`);
      assert.equal(await get(), 200, 'the returned member takes traffic after the reload');
    });
  },
);
