/**
 * Issue 46, item 5: reachability that tells slow from dead. A BIG-IP whose declarations take
 * longer than many probe intervals, and whose front end resets a kept-alive connection a read
 * comes on while a declaration runs (the simulator's `resetReusedReads`), is never taken for
 * unreachable: the client reads once more on a fresh connection, and the breaker opens only on a
 * probe that fails twice. A device that is really gone still opens it, and its return closes it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../../sim/f5/simulator.ts';
import { DeviceReachability } from '../../../src/controller/device-reachability.ts';
import type { LoadBalancerAdapter } from '../../../src/adapter/contract.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { eventually } from '../../support/sandbox.ts';
import * as kit from '../../support/model.ts';

function breaker(adapter: LoadBalancerAdapter) {
  const changes: boolean[] = [];
  const events: string[] = [];
  const d = new DeviceReachability({
    adapter,
    events: { record: async (_t, _type, reason) => void events.push(reason) },
    log: silentLogger(),
    self: { apiVersion: 'v1', kind: 'Pod', namespace: 'npl-lb', name: 'controller-0', uid: 'u' },
    probeMs: 50,
    idleProbeMs: 50,
    onRecovered: () => undefined,
    onChange: (up) => changes.push(up),
  });
  return { d, changes, events };
}

describe('device reachability: slow is not dead', () => {
  it('a BIG-IP at 1.5 s per declaration that resets reused connections meanwhile is never unreachable', async (t) => {
    const sim = new BigIpSimulator({ latencyMs: 1500 });
    const url = await sim.start();
    const adapter = new F5Adapter({
      owner: 'c1',
      url,
      username: 'admin',
      password: 'admin',
      taskPollMs: 10,
      declarations: 'tenant',
    });
    const { d, changes, events } = breaker(adapter);
    t.after(async () => {
      await d.stop();
      await adapter.close();
      await sim.close();
    });
    await adapter.verify();
    sim.faults.resetReusedReads = 1000;
    d.start();
    const pool = kit.pool(
      'c1--default-web-http',
      [kit.member('127.0.0.1', 8080, { node: 'n1', pod: 'default/web-1' })],
      {
        health: 'tcp',
        service: 'default/web',
        servicePort: 'http',
      },
    );
    // Two declarations back to back: three seconds of probes every 50 ms, most on reused sockets.
    for (const op of ['create', 'update'] as const) {
      const r = await adapter.apply([
        op === 'create'
          ? { op, kind: 'pool', name: pool.name, desired: pool }
          : { op, kind: 'pool', name: pool.name, desired: { ...pool, members: [] }, observed: pool },
      ]);
      assert.ok(
        r.every((x) => x.ok),
        JSON.stringify(r),
      );
    }
    assert.ok(sim.stats.resets >= 5, `the fault ran (${sim.stats.resets} resets)`);
    assert.ok(d.snapshot().probes >= 20, `probed all along (${d.snapshot().probes})`);
    assert.deepEqual(changes, [true], 'never reported unreachable');
    assert.deepEqual(events, []);
  });

  it('a device that is gone opens the breaker (two failed reads), and its return closes it', async (t) => {
    let down = false;
    let reads = 0;
    const adapter = {
      probe: async () => {
        reads++;
        if (down) throw new Error('connect ECONNREFUSED 127.0.0.1:1');
      },
    } as unknown as LoadBalancerAdapter;
    const { d, changes, events } = breaker(adapter);
    t.after(() => d.stop());
    d.start();
    await eventually(async () => reads >= 2, 5000, 'probing while idle');
    down = true;
    await eventually(async () => !d.reachable, 5000, 'noticed');
    assert.match(d.snapshot().error ?? '', /ECONNREFUSED/);
    down = false;
    await eventually(async () => d.reachable, 5000, 'back');
    assert.deepEqual(changes, [true, false, true]);
    assert.deepEqual(events, ['LoadBalancerUnreachable', 'LoadBalancerReachable']);
  });

  it('one failed read alone (a connection dropped once) does not open it', async (t) => {
    let reads = 0;
    let failNext = false;
    const adapter = {
      probe: async () => {
        reads++;
        if (failNext) {
          failNext = false;
          throw new Error('other side closed');
        }
      },
    } as unknown as LoadBalancerAdapter;
    const { d, changes } = breaker(adapter);
    t.after(() => d.stop());
    d.start();
    for (let i = 0; i < 5; i++) {
      const at = reads;
      failNext = true;
      await eventually(async () => reads >= at + 2, 5000, 'the failed read and the one after it');
    }
    assert.deepEqual(changes, [true]);
  });
});
