import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { F5Error } from '../../../../adapters/f5/client.ts';
import { APP } from '../../../../adapters/f5/declaration.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import type { L7VirtualService, Pool } from '../../../../src/model/types.ts';
import type { Change } from '../../../../src/plan/diff.ts';
import * as kit from '../../../support/model.ts';

const pool = (name: string, members: [string, number, string, boolean?][]): Pool =>
  kit.pool(
    name,
    members.map(([address, port, node, enabled = true]) =>
      kit.member(address, port, { node, pod: `default/${node}-pod`, enabled }),
    ),
    { health: 'tcp', service: 'default/web', servicePort: 'http' },
  );
const create = (p: Pool): Change => ({ op: 'create', kind: 'pool', name: p.name, desired: p });

async function setup(
  t: { after: (fn: () => Promise<void>) => void },
  simOpts: ConstructorParameters<typeof BigIpSimulator>[0] = {},
  adapterOpts: Partial<ConstructorParameters<typeof F5Adapter>[0]> = {},
) {
  const sim = new BigIpSimulator(simOpts);
  const url = await sim.start();
  const adapter = new F5Adapter({
    owner: 'c1',
    url,
    username: 'admin',
    password: 'admin',
    taskPollMs: 10,
    // These tests read the whole-tenant layout (one application); per-application mode has its own.
    declarations: 'tenant',
    ...adapterOpts,
  });
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  return { sim, adapter };
}

const app = (sim: BigIpSimulator) =>
  sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;

describe('F5 adapter', () => {
  it('members carry their node (remark and metadata), draining ones are disabled; L7 becomes a service and a first-match policy', async (t) => {
    const { sim, adapter } = await setup(t);
    const l7: L7VirtualService = {
      kind: 'l7',
      name: 'c1--ingress-npl',
      vip: '192.0.2.20',
      port: 80,
      ingressClass: 'npl',
      defaultPool: 'c1--web',
      routes: [
        { host: 'a.example', path: '/', pathType: 'Prefix', pool: 'c1--web', source: 'default/ing' },
        { host: 'a.example', path: '/api/v1', pathType: 'Exact', pool: 'c1--web', source: 'default/ing' },
      ],
    };
    const r = await adapter.apply([
      create(
        pool('c1--web', [
          ['192.0.2.1', 61000, 'n1'],
          ['192.0.2.2', 61001, 'n2', false],
        ]),
      ),
      { op: 'create', kind: 'virtualService', name: l7.name, desired: l7 },
    ]);
    // Each result, or why it failed (a loaded machine once failed both: the message says why next time).
    assert.deepEqual(
      r.map((x) => x.ok || x.error?.message),
      [true, true],
    );
    const members = app(sim)['c1--web']!.members as Record<string, unknown>[];
    assert.deepEqual(
      members.map((m) => [
        m.serverAddresses,
        m.servicePort,
        m.remark,
        (m.metadata as { node: { value: string } }).node.value,
        m.adminState,
      ]),
      [
        [['192.0.2.1'], 61000, 'node n1', 'n1', 'enable'],
        [['192.0.2.2'], 61001, 'node n2', 'n2', 'disable'],
      ],
    );
    const svc = app(sim)['c1--ingress-npl']!;
    assert.equal(svc.class, 'Service_HTTP');
    assert.equal(svc.pool, 'c1--web');
    const policy = app(sim)[String(svc.policyEndpoint)]!;
    assert.equal(policy.strategy, 'first-match');
    const rules = policy.rules as { conditions: { path?: { operand: string; values: string[] } }[] }[];
    assert.deepEqual(
      rules.map((x) => x.conditions.find((c) => c.path)?.path ?? null),
      [{ operand: 'equals', values: ['/api/v1'], caseSensitive: true }, null],
      'the exact path is tried before the prefix, and the prefix / takes any path',
    );
  });

  it('an invalid object never reaches the device; the rest is posted; an unchanged tenant is not posted again', async (t) => {
    const { sim, adapter } = await setup(t);
    const r = await adapter.apply([
      create(pool('c1--bad', [['192.0.2.1', 70000, 'n1']])),
      create(pool('c1--good', [['192.0.2.1', 61000, 'n1']])),
    ]);
    assert.equal(r[0]!.ok, false);
    assert.equal(r[0]!.error!.terminal, true);
    assert.match(r[0]!.error!.message, /c1--bad\/members\/0\/servicePort/);
    assert.equal(r[1]!.ok, true);
    assert.equal(sim.stats.rejected, 0, 'the device never saw an invalid declaration');
    // Posted to /declare/<our tenant>: AS3 deploys that tenant alone, whatever the body holds.
    assert.equal(sim.stats.scopedDeclarations, sim.stats.declarations - sim.stats.appDeclarations);
    assert.ok(sim.stats.scopedDeclarations > 0);
    assert.deepEqual(
      Object.keys(app(sim)).filter((k) => k.startsWith('c1--')),
      ['c1--good'],
    );
    const posted = sim.stats.declarations;
    await adapter.apply([
      {
        op: 'update',
        kind: 'pool',
        name: 'c1--good',
        desired: pool('c1--good', [['192.0.2.1', 61000, 'n1']]),
        observed: pool('c1--good', [['192.0.2.1', 61000, 'n1']]),
      },
    ]);
    assert.equal(sim.stats.declarations, posted, 'no change: nothing posted');
    assert.equal(adapter.stats.skippedUnchanged, 1);
  });

  it('one declaration in flight: changes that arrive meanwhile go out together in the next one', async (t) => {
    const { sim, adapter } = await setup(t, { latencyMs: 150 });
    await adapter.observe();
    const results = await Promise.all([
      adapter.apply([create(pool('c1--a', [['192.0.2.1', 61000, 'n1']]))]),
      adapter.apply([create(pool('c1--b', [['192.0.2.1', 61001, 'n1']]))]),
      adapter.apply([create(pool('c1--c', [['192.0.2.1', 61002, 'n1']]))]),
    ]);
    assert.deepEqual(
      results.flat().map((r) => r.ok),
      [true, true, true],
    );
    assert.equal(sim.stats.declarations, 2);
    assert.equal(sim.stats.busy, 0, 'never posted while the device was busy');
    assert.deepEqual(
      Object.keys(app(sim))
        .filter((k) => k.startsWith('c1--'))
        .sort(),
      ['c1--a', 'c1--b', 'c1--c'],
    );
  });

  it('503 busy is retryable; 202 is followed to its task; a removed tenant is declared empty', async (t) => {
    const { sim, adapter } = await setup(t, { latencyMs: 60, asyncThresholdMs: 20 });
    sim.faults.busy = 1;
    const busy = await adapter.apply([create(pool('c1--a', [['192.0.2.1', 61000, 'n1']]))]);
    assert.equal(busy[0]!.ok, false);
    assert.deepEqual([busy[0]!.error!.code, busy[0]!.error!.terminal], ['Busy', false]);
    const ok = await adapter.apply([create(pool('c1--a', [['192.0.2.1', 61000, 'n1']]))]);
    assert.equal(ok[0]!.ok, true, 'through 202 and the task');
    assert.ok(sim.tenants.has('npl_lb_c1'));
    const gone = await adapter.apply([
      { op: 'delete', kind: 'pool', name: 'c1--a', observed: pool('c1--a', []) },
    ]);
    assert.equal(gone[0]!.ok, true);
    assert.equal(sim.tenants.has('npl_lb_c1'), false, 'the empty tenant is removed');
  });

  it('renews its token before it expires, and logs in again when the device dropped it', async (t) => {
    let now = 5_000_000;
    const clock = () => now;
    const { sim, adapter } = await setup(t, { now: clock, tokenLifetimeSec: 600 }, { now: clock });
    await adapter.observe();
    assert.equal(adapter.client.stats.logins, 1);
    now += 550_000;
    await adapter.observe();
    assert.equal(adapter.client.stats.renewals, 1, 'renewed with under a fifth of its life left');
    now += 500_000;
    await adapter.observe();
    assert.equal(adapter.client.stats.logins, 1, 'the renewed token still works');
    sim.expireTokens();
    await adapter.observe();
    assert.equal(adapter.client.stats.logins, 2, 'a 401 means a fresh login');
  });

  it('AS3 missing or too old is one clear error', async (t) => {
    const missing = await setup(t, { as3Version: null });
    await assert.rejects(
      missing.adapter.observe(),
      (e: unknown) => e instanceof F5Error && e.code === 'As3Missing' && /not installed/.test(e.message),
    );
    const old = await setup(t, { as3Version: '3.20.0' });
    await assert.rejects(
      old.adapter.observe(),
      (e: unknown) => e instanceof F5Error && e.code === 'As3TooOld' && /3\.20\.0.*3\.36\.0/.test(e.message),
    );
  });
});
