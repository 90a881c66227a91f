/**
 * Per-application declarations (AS3 3.47 and later): one application per pool and per virtual
 * service, so a change posts only the applications it touches (counted), a removal deletes its
 * application (virtual services before their pools), a tenant in the whole-tenant layout moves
 * over in one declaration, an invalid object fails alone, and older AS3 keeps whole tenants.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import type { L4VirtualService, L7VirtualService, Pool } from '../../../../src/model/types.ts';
import type { Change } from '../../../../src/plan/diff.ts';
import * as kit from '../../../support/model.ts';

const pool = (name: string, ports: number[]): Pool =>
  kit.pool(
    name,
    ports.map((port, i) => kit.member('192.0.2.1', port, { node: `n${i}`, pod: `default/p${i}` })),
    { service: `default/${name}`, servicePort: 'http' },
  );
const l4 = (name: string, p: string, vip: string): L4VirtualService => ({
  kind: 'l4',
  name,
  vip,
  port: 80,
  protocol: 'TCP',
  pool: p,
  source: `default/${p}`,
});

async function setup(
  t: { after: (fn: () => Promise<void>) => void },
  as3Version = '3.56.0',
  declarations: 'auto' | 'tenant' | 'application' = 'auto',
) {
  const sim = new BigIpSimulator({ as3Version });
  const url = await sim.start();
  const make = (mode = declarations) =>
    new F5Adapter({
      owner: 'c1',
      url,
      username: 'admin',
      password: 'admin',
      taskPollMs: 10,
      declarations: mode,
    });
  const adapter = make();
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  return { sim, adapter, make };
}

const ok = (r: { ok: boolean; error?: { message: string } }[]) =>
  assert.deepEqual(
    r.map((x) => (x.ok ? 'ok' : x.error?.message)),
    r.map(() => 'ok'),
  );

/** Ten Services: pools and L4 virtual services. */
function tenServices(): Change[] {
  const out: Change[] = [];
  for (let i = 0; i < 10; i++) {
    const p = pool(`c1--s${i}`, [61000 + i]);
    out.push({ op: 'create', kind: 'pool', name: p.name, desired: p });
    const v = l4(`c1--s${i}-TCP-80`, p.name, `192.0.2.${10 + i}`);
    out.push({ op: 'create', kind: 'virtualService', name: v.name, desired: v });
  }
  return out;
}

describe('F5 per-application declarations', () => {
  it('a member change posts its pool application alone; a removal deletes virtual service then pool; observe reads it back', async (t) => {
    const { sim, adapter } = await setup(t);
    await adapter.verify();
    ok(await adapter.apply(tenServices()));
    const apps = Object.keys(sim.tenants.get('npl_lb_c1')!).filter((k) => k !== 'class');
    assert.equal(apps.length, 20, 'one application per pool and per virtual service');
    assert.ok(apps.includes('P_c1--s3') && apps.includes('V_c1--s3-TCP-80'));
    const vsApp = sim.tenants.get('npl_lb_c1')!['V_c1--s3-TCP-80'] as Record<string, { pool: string }>;
    assert.equal(vsApp['c1--s3-TCP-80']!.pool, '/npl_lb_c1/P_c1--s3/c1--s3', 'its pool by path');

    // One Pod changes: one application in one declaration, a fraction of the tenant's bytes.
    const before = { decl: sim.stats.declarations, apps: sim.stats.appsPosted, bytes: sim.stats.bytesPosted };
    const tenantBytes = JSON.stringify(sim.tenants.get('npl_lb_c1')).length;
    const p3 = pool('c1--s3', [61003]);
    const p3b = pool('c1--s3', [61003, 62003]);
    ok(await adapter.apply([{ op: 'update', kind: 'pool', name: p3.name, desired: p3b, observed: p3 }]));
    assert.equal(sim.stats.declarations - before.decl, 1);
    assert.equal(sim.stats.appsPosted - before.apps, 1, 'the changed application only');
    assert.ok(sim.stats.bytesPosted - before.bytes < tenantBytes / 5, 'a fraction of the tenant');

    // A virtual service alone, for a pool already there (in its own application): its pointer
    // resolves against the tenant.
    const extra = { ...l4('c1--s3-TCP-81', 'c1--s3', '192.0.2.13'), port: 81 };
    const a0 = sim.stats.appsPosted;
    ok(await adapter.apply([{ op: 'create', kind: 'virtualService', name: extra.name, desired: extra }]));
    assert.equal(sim.stats.appsPosted - a0, 1);

    // Removing a Service: its virtual service's application goes before its pool's.
    const v5 = l4('c1--s5-TCP-80', 'c1--s5', '192.0.2.15');
    const removed = await adapter.apply([
      { op: 'delete', kind: 'virtualService', name: v5.name, observed: v5 },
      { op: 'delete', kind: 'pool', name: 'c1--s5', observed: pool('c1--s5', [61005]) },
    ]);
    ok(removed);
    const left = Object.keys(sim.tenants.get('npl_lb_c1')!);
    assert.ok(!left.includes('V_c1--s5-TCP-80') && !left.includes('P_c1--s5'));

    // A restart reads back exactly what was applied.
    const seen = await adapter.observe();
    assert.equal(seen.owned.pools.length, 9);
    assert.equal(seen.owned.virtualServices.length, 10);
    assert.deepEqual(
      seen.owned.pools.find((p) => p.name === 'c1--s3')!.members.map((m) => m.port),
      [61003, 62003],
    );
    assert.equal(
      seen.owned.virtualServices.find((v) => v.name === 'c1--s3-TCP-80')!.kind === 'l4' &&
        (seen.owned.virtualServices.find((v) => v.name === 'c1--s3-TCP-80') as L4VirtualService).pool,
      'c1--s3',
    );
  });

  it('moves a tenant from the whole-tenant layout in one declaration; an invalid object fails alone', async (t) => {
    const { sim, adapter, make } = await setup(t, '3.56.0', 'tenant');
    ok(await adapter.apply(tenServices()));
    assert.deepEqual(
      Object.keys(sim.tenants.get('npl_lb_c1')!).filter((k) => k !== 'class'),
      ['npl_lb'],
    );
    // The same controller upgraded to per-application declarations.
    const next = make('auto');
    t.after(() => next.close());
    await next.observe();
    const d0 = sim.stats.declarations;
    const p0 = pool('c1--s0', [61000]);
    ok(
      await next.apply([
        { op: 'update', kind: 'pool', name: p0.name, desired: pool('c1--s0', [61000, 62000]), observed: p0 },
      ]),
    );
    assert.equal(sim.stats.declarations - d0, 1, 'the move is one declaration');
    const apps = Object.keys(sim.tenants.get('npl_lb_c1')!).filter((k) => k !== 'class');
    assert.equal(apps.length, 20);
    assert.ok(!apps.includes('npl_lb'));
    // Then per application; a bad object is refused alone and the rest goes.
    sim.faults.rejectObjects.add('c1--s1');
    const p1 = pool('c1--s1', [61001]);
    const p2 = pool('c1--s2', [61002]);
    const r = await next.apply([
      { op: 'update', kind: 'pool', name: p1.name, desired: pool('c1--s1', [61001, 62001]), observed: p1 },
      { op: 'update', kind: 'pool', name: p2.name, desired: pool('c1--s2', [61002, 62002]), observed: p2 },
    ]);
    assert.deepEqual(
      r.map((x) => `${x.change.name} ${x.ok} ${x.error?.terminal ?? ''}`),
      ['c1--s1 false true', 'c1--s2 true '],
    );
    const s2 = (sim.tenants.get('npl_lb_c1')!['P_c1--s2'] as Record<string, { members: unknown[] }>)[
      'c1--s2'
    ]!;
    assert.equal(s2.members.length, 2);
  });

  it('AS3 before 3.47 keeps whole tenants; asking for per-application declarations there is refused at start-up', async (t) => {
    const { sim, adapter, make } = await setup(t, '3.46.0');
    ok(await adapter.apply(tenServices()));
    assert.deepEqual(
      Object.keys(sim.tenants.get('npl_lb_c1')!).filter((k) => k !== 'class'),
      ['npl_lb'],
    );
    const forced = make('application');
    t.after(() => forced.close());
    await assert.rejects(forced.verify(), /no per-application declarations/);
  });

  it('a weighted route’s pool follows its backends: scaling one posts the pool’s application and the route’s, nothing else', async (t) => {
    const { sim, adapter } = await setup(t);
    const web = pool('web', [61000]);
    const api = pool('api', [61100, 61101]);
    const other = pool('other', [61200]);
    const gw: L7VirtualService = {
      kind: 'l7',
      name: 'gw',
      vip: '192.0.2.60',
      port: 80,
      ingressClass: 'npl-lb',
      defaultPool: undefined,
      routes: [
        {
          host: '',
          path: '/',
          pathType: 'Prefix',
          pool: '',
          source: 'HTTPRoute default/r',
          order: 0,
          backends: [
            { pool: 'web', weight: 80 },
            { pool: 'api', weight: 20 },
          ],
        },
      ],
    };
    const first: Change[] = [
      ...[web, api, other].map((p): Change => ({ op: 'create', kind: 'pool', name: p.name, desired: p })),
      { op: 'create', kind: 'virtualService', name: gw.name, desired: gw },
    ];
    assert.deepEqual(
      (await adapter.apply(first)).filter((r) => !r.ok),
      [],
    );
    const split = () =>
      (
        (sim.tenants.get('npl_lb_c1') as Record<string, Record<string, Record<string, unknown>>>)['V_gw']![
          'gw_w0'
        ]!.members as { servicePort: number; ratio: number }[]
      ).map((m) => [m.servicePort, m.ratio]);
    // 80 for web's one member, 20 over api's two: ratios 100 : 13 : 13 (0.8 : 0.2 within rounding).
    assert.deepEqual(split(), [
      [61000, 100],
      [61100, 13],
      [61101, 13],
    ]);
    const observed = await adapter.observe();
    assert.deepEqual(
      observed.owned.pools.map((p) => p.name).sort(),
      ['api', 'other', 'web'],
      'the rule’s pool is part of its virtual service, not a model pool',
    );
    const apps0 = sim.stats.appsPosted;
    const scaled = pool('web', [61000, 61001]);
    assert.deepEqual(
      (
        await adapter.apply([{ op: 'update', kind: 'pool', name: 'web', desired: scaled, observed: web }])
      ).filter((r) => !r.ok),
      [],
    );
    assert.equal(sim.stats.appsPosted - apps0, 2, 'P_web and V_gw, not P_api nor P_other');
    assert.deepEqual(split(), [
      [61000, 100],
      [61001, 100],
      [61100, 25],
      [61101, 25],
    ]);
  });
});
