import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadBalancerAdapter, MemberHealth } from '../../../src/adapter/contract.ts';
import { HealthMonitor } from '../../../src/controller/health-monitor.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';

const member = { address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/web-1', enabled: true };
const desired = {
  pools: [
    {
      name: 'p',
      protocol: 'TCP' as const,
      health: 'tcp' as const,
      service: 'default/web',
      servicePort: 'http',
      members: [member],
    },
  ],
  virtualServices: [],
};

function fakeAdapter(answers: (() => Promise<MemberHealth[]>)[]): LoadBalancerAdapter & { calls: number } {
  const a = {
    name: 'fake',
    owner: 'c1',
    calls: 0,
    capabilities: () => ({
      l4: { tcp: true, udp: false },
      l7: false,
      memberNodeTag: true,
      drainingMembers: true,
    }),
    observe: async () => ({ owned: { pools: [], virtualServices: [] }, foreign: [] }),
    apply: async () => [],
    close: async () => {},
    health: async () => answers[Math.min(a.calls++, answers.length - 1)]!(),
  };
  return a;
}

describe('health monitor', () => {
  it('records what the device says; a failed read keeps the last states with the error; reads in flight are shared', async () => {
    const state = new StateTracker('c1', 'fake');
    state.record(desired, [], []);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const adapter = fakeAdapter([
      async () => {
        await gate;
        return [
          { pool: 'p', address: '192.0.2.1', port: 61000, admin: 'enabled', health: 'down', reason: 'L4CON' },
        ];
      },
      async () => {
        throw new Error('connect ECONNREFUSED');
      },
      async () => [{ pool: 'p', address: '192.0.2.1', port: 61000, admin: 'enabled', health: 'up' }],
    ]);
    const m = new HealthMonitor(adapter, state, 0, silentLogger());
    assert.equal(state.document().health.supported, false, 'not read yet');
    const changes: number[] = [];
    state.onChange(() => changes.push(1));
    const a = m.refresh();
    const b = m.refresh();
    release();
    await Promise.all([a, b]);
    assert.equal(adapter.calls, 1, 'two requests, one read');
    const h1 = state.document().pools[0]!.members[0]!.health;
    assert.equal(h1?.state, 'down');
    assert.equal(h1?.reason, 'L4CON');
    assert.equal(state.document().pools[0]!.members[0]!.enabled, true, 'our intent is apart');

    await m.refresh();
    assert.equal(state.document().health.error, 'connect ECONNREFUSED');
    assert.equal(state.document().pools[0]!.members[0]!.health?.state, 'down', 'the last states stay');
    await m.refresh();
    assert.equal(state.document().health.error, null);
    assert.equal(state.document().pools[0]!.members[0]!.health?.state, 'up');
    assert.equal(changes.length, 3);
    assert.deepEqual(m.stats, { reads: 3, failures: 1 });
  });

  it('reads on its timer until stopped; an adapter without health() is not read', async () => {
    const state = new StateTracker('c1', 'fake');
    const adapter = fakeAdapter([async () => []]);
    const m = new HealthMonitor(adapter, state, 20, silentLogger());
    m.start();
    const until = Date.now() + 5000;
    while (adapter.calls < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await m.stop();
    const calls = adapter.calls;
    assert.ok(calls >= 3, `read ${calls} times`);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(adapter.calls, calls, 'no read after stop');
    const { health: _none, ...bare } = fakeAdapter([]);
    const idle = new HealthMonitor(bare, state, 20, silentLogger());
    assert.equal(idle.supported, false);
    idle.start();
    await idle.refresh();
    await idle.stop();
  });

  it("where a read costs a call per pool, its timer reads a slice of the pools each tick, in turn, keeping the other pools' states; a read on demand reads them all", async () => {
    const state = new StateTracker('c1', 'fake');
    const pools = Array.from({ length: 25 }, (_, i) => ({ name: `p${i}` }));
    const asked: (readonly string[] | undefined)[] = [];
    const adapter: LoadBalancerAdapter = {
      ...fakeAdapter([]),
      capabilities: () => ({
        l4: { tcp: true, udp: false },
        l7: false,
        memberNodeTag: true,
        drainingMembers: true,
        healthSlices: true,
      }),
      health: async (only?: readonly string[]) => {
        asked.push(only);
        return (only ?? pools.map((p) => p.name)).map((pool) => ({
          pool,
          address: '192.0.2.1',
          port: 61000,
          admin: 'enabled' as const,
          health: asked.length > 1 ? ('down' as const) : ('up' as const),
        }));
      },
    };
    const m = new HealthMonitor(adapter, state, 20, silentLogger(), { pools: () => pools, perTick: 10 });
    // First a whole read (on demand): every pool up.
    await m.refresh();
    assert.deepEqual(asked, [undefined]);
    m.start();
    const until = Date.now() + 5000;
    while (asked.length < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    await m.stop();
    // The timer: 10, 10, 5, then from the start again.
    assert.deepEqual(
      (asked as (readonly string[] | undefined)[]).slice(1, 5).map((a) => a?.join(',')),
      [
        'p0,p1,p2,p3,p4,p5,p6,p7,p8,p9',
        'p10,p11,p12,p13,p14,p15,p16,p17,p18,p19',
        'p20,p21,p22,p23,p24',
        'p0,p1,p2,p3,p4,p5,p6,p7,p8,p9',
      ],
    );
    // A slice replaces its pools' states only: read after the slices, all are down; p10 was
    // read once by the timer, and the whole read's time (gates compare with it) did not move.
    assert.equal(state.memberHealthOf('p10', '192.0.2.1', 61000), 'down');
    assert.equal(state.memberHealthOf('p24', '192.0.2.1', 61000), 'down');
    const whole = state.healthReadAt();
    assert.ok(whole !== undefined);
    // Fewer pools than a slice: the timer reads them all at once.
    const few = new HealthMonitor(adapter, new StateTracker('c1', 'fake'), 0, silentLogger(), {
      pools: () => pools.slice(0, 3),
      perTick: 10,
    });
    asked.length = 0;
    await (few as unknown as { tick(): Promise<void> }).tick();
    assert.deepEqual(asked, [undefined]);
    // No pools handed over yet (before the first pass ends): the timer reads nothing; a read on
    // demand still reads everything.
    const none = new HealthMonitor(adapter, new StateTracker('c1', 'fake'), 0, silentLogger(), {
      pools: () => [],
      perTick: 10,
    });
    asked.length = 0;
    await (none as unknown as { tick(): Promise<void> }).tick();
    assert.deepEqual(asked, []);
    await none.refresh();
    assert.deepEqual(asked, [undefined]);
  });
});
