/**
 * The runtime transport's edges: a removed server that still has a connection in HAProxy cannot
 * be deleted at once. It is parked in maintenance (no traffic), brought back by repointing
 * when the same member returns, and deleted once HAProxy lets go of it. And a reload restores
 * server states from the saved state file: a drain, an undrain or a parked server's return in the
 * same batch must survive it.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Agent, request } from 'undici';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import type { L7VirtualService, Member, Pool } from '../../../src/model/types.ts';
import type { Change } from '../../../src/plan/diff.ts';
import { haproxyMissing, startHaproxy } from '../../support/haproxy.ts';
import { eventually } from '../../support/sandbox.ts';
import * as kit from '../../support/model.ts';

const member: Member = {
  address: '127.0.34.1',
  port: 18101,
  node: 'n1',
  pod: 'default/web-1',
  enabled: true,
};
const m2: Member = { ...member, port: 18102, pod: 'default/web-2' };
const S1 = 'n1_127.0.34.1_18101';
const S2 = 'n1_127.0.34.1_18102';
const pool = (...members: Member[]): Pool =>
  kit.pool('c1--web', members, { health: 'http', service: 'default/web', servicePort: 'http' });
const vs: L7VirtualService = {
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '127.0.33.1',
  port: 18100,
  ingressClass: 'npl',
  defaultPool: 'c1--web',
  routes: [],
};
/** The Ingress virtual service with n host routes: changing n is a change of structure (a reload). */
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
const poolChange = (observed: Pool, desired: Pool): Change => ({
  op: 'update',
  kind: 'pool',
  name: 'c1--web',
  desired,
  observed,
});
const routesChange = (from: number, to: number): Change => ({
  op: 'update',
  kind: 'virtualService',
  name: vs.name,
  desired: withRoutes(to),
  observed: withRoutes(from),
});
const allOk = (r: ApplyResult[]) =>
  assert.deepEqual(
    r.map((x) => x.ok),
    r.map(() => true),
  );

/** HAProxy, the runtime adapter on it, the pool and the virtual service created. */
async function rigWith(t: TestContext, first: Pool) {
  const rig = await startHaproxy(t);
  const adapter = rig.adapter('c1', { healthChecks: false });
  t.after(() => adapter.close());
  allOk(
    await adapter.apply([
      { op: 'create', kind: 'pool', name: 'c1--web', desired: first },
      { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
    ]),
  );
  const states = async () =>
    (await rig.proc.runtime('show servers state c1--web'))
      .split('\n')
      .filter((l) => /^\d+ c1--web /.test(l))
      .map((l) => l.split(' '));
  return { rig, adapter, states };
}

/**
 * The member's app (GET /slow answers after 1.5 s: a request in flight holds a connection to the
 * server) and a client of the virtual service; `get` resolves with the status code.
 */
async function appAndClient(t: TestContext) {
  const app = createServer((q, res) => {
    if (q.url === '/slow') setTimeout(() => res.end('slow\n'), 1500);
    else res.end('ok\n');
  });
  await new Promise<void>((r) => app.listen(member.port, member.address, () => r()));
  t.after(() => new Promise<void>((r) => app.close(() => r())));
  const client = new Agent({ connections: 4 });
  t.after(() => client.close());
  return async (path = '/') => {
    const r = await request(`http://${vs.vip}:${vs.port}${path}`, { dispatcher: client });
    await r.body.text();
    return r.statusCode;
  };
}

/** Starts a slow request and waits until it holds its connection; `done` is its status code. */
async function inFlight(get: (path?: string) => Promise<number>): Promise<{ done: Promise<number> }> {
  const done = get('/slow');
  await new Promise((r) => setTimeout(r, 200));
  return { done };
}

describe(
  'HAProxy runtime transport: server states across removal and reload',
  { skip: haproxyMissing() },
  () => {
    it('parks a server HAProxy will not delete yet, repoints it when it returns, deletes it later', async (t) => {
      const get = await appAndClient(t);
      const { adapter, states } = await rigWith(t, pool());
      allOk(await adapter.apply([poolChange(pool(), pool(member))]));
      assert.equal(await get(), 200);
      // A slow request in flight: removing the member now cannot delete the server; it is parked.
      const slow = await inFlight(get);
      allOk(await adapter.apply([poolChange(pool(member), pool())]));
      assert.deepEqual(adapter.parkedServers, [`c1--web/${S1}`]);
      assert.equal(await get(), 503, 'a parked server takes no new traffic');
      assert.equal(await slow.done, 200, 'the request in flight completes');
      // The same member comes back: the parked server is repointed and made ready.
      allOk(await adapter.apply([poolChange(pool(), pool(member))]));
      assert.deepEqual(adapter.parkedServers, []);
      assert.equal(await get(), 200);
      // Removed again while busy; once the request is done, the retry deletes it.
      const slow2 = await inFlight(get);
      allOk(await adapter.apply([poolChange(pool(member), pool())]));
      assert.equal(adapter.parkedServers.length, 1);
      assert.equal(await slow2.done, 200);
      await eventually(() => adapter.parkedServers.length === 0, 20_000, 'parked server deleted');
      assert.deepEqual(await states(), []);
    });

    it('keeps a drain or an undrain made in the same batch as a reload (not the old saved state)', async (t) => {
      const { adapter, states } = await rigWith(t, pool(member, m2));
      /** Whether HAProxy sends new traffic to each server (not drained or in maintenance, weight > 0). */
      const inRotation = async () =>
        Object.fromEntries((await states()).map((x) => [x[3], (Number(x[6]) & 0x38) === 0 && x[7] !== '0']));
      const off = (m: Member): Member => ({ ...m, enabled: false });
      assert.deepEqual(await inRotation(), { [S1]: true, [S2]: true });
      // member drains while a route is added (a reload): the new worker must not take its old state.
      const reloads = adapter.stats.reloads;
      allOk(await adapter.apply([poolChange(pool(member, m2), pool(off(member), m2)), routesChange(0, 1)]));
      assert.equal(adapter.stats.reloads, reloads + 1, 'the route was a reload');
      assert.deepEqual(await inRotation(), { [S1]: false, [S2]: true });
      // And back: it returns to rotation in a batch with another reload.
      allOk(await adapter.apply([poolChange(pool(off(member), m2), pool(member, m2)), routesChange(1, 2)]));
      assert.equal(adapter.stats.reloads, reloads + 2);
      assert.deepEqual(await inRotation(), { [S1]: true, [S2]: true });
      // m2 drains at runtime (no reload: HAProxy's drain state), then returns in a batch that reloads.
      allOk(await adapter.apply([poolChange(pool(member, m2), pool(member, off(m2)))]));
      assert.equal(adapter.stats.reloads, reloads + 2, 'a drain alone is a runtime change');
      assert.deepEqual(await inRotation(), { [S1]: true, [S2]: false });
      allOk(await adapter.apply([poolChange(pool(member, off(m2)), pool(member, m2)), routesChange(2, 3)]));
      assert.equal(adapter.stats.reloads, reloads + 3);
      assert.deepEqual(await inRotation(), { [S1]: true, [S2]: true });
    });

    it('brings a parked server back into rotation when its member returns in a batch that reloads', async (t) => {
      const get = await appAndClient(t);
      const { adapter, states } = await rigWith(t, pool(member));
      assert.equal(await get(), 200);
      const slow = await inFlight(get);
      allOk(await adapter.apply([poolChange(pool(member), pool())]));
      assert.deepEqual(adapter.parkedServers, [`c1--web/${S1}`], 'parked in maintenance');
      // The member returns together with a route (a reload), while its server is still parked.
      const reloads = adapter.stats.reloads;
      allOk(await adapter.apply([poolChange(pool(), pool(member)), routesChange(0, 1)]));
      assert.equal(adapter.stats.reloads, reloads + 1);
      assert.equal(await slow.done, 200);
      const admin = (await states()).find((x) => x[3] === S1)?.[6];
      assert.equal(Number(admin) & 0x01, 0, `not in forced maintenance (admin state ${admin})`);
      assert.equal(await get(), 200, 'the returned member takes traffic after the reload');
    });
  },
);
