/**
 * The readiness gates' loop (gate-loop.ts): nothing compared before the first pass or after stop;
 * a burst of asks compared once, on the next turn; a gate waiting on health asks one read, at most
 * once a second; a gate still False looked at again a second later with nothing else happening.
 */
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { ControllerConfig } from '../../../src/config/controller-config.ts';
import { GateLoop, type GateLoopDeps } from '../../../src/controller/gate-loop.ts';
import type { Pool } from '../../../src/model/types.ts';

function rig(waiting = false) {
  const seen: { pools: readonly Pool[] }[] = [];
  const counts = { refresh: 0 };
  const writer = {
    anyFalse: false,
    unconfirmed: false,
    update: (_pods: unknown, ctx: { pools: readonly Pool[] }) => {
      seen.push({ pools: ctx.pools });
      return waiting;
    },
  };
  const deps = {
    writer,
    cache: { services: () => [], gatedPods: () => [] },
    state: { memberHealthOf: () => undefined, healthReadAt: () => undefined },
    health: {
      supported: true,
      refresh: async () => {
        counts.refresh++;
      },
    },
    device: { reachable: true },
    lb: { observedPool: () => undefined, poolWrittenAt: () => undefined },
    config: {} as ControllerConfig,
  } as unknown as GateLoopDeps;
  return { loop: new GateLoop(deps), seen, counts, writer };
}

const POOLS = [{ name: 'p' }] as unknown as Pool[];

describe('GateLoop', () => {
  it('compares nothing before it starts and before the first pass; a burst once, on the next turn', async () => {
    const { loop, seen } = rig();
    loop.afterPass(POOLS);
    await nextTurn();
    assert.equal(seen.length, 0, 'not started');
    loop.start();
    loop.soon();
    await nextTurn();
    assert.equal(seen.length, 1, 'started: the last pass is known');
    loop.afterPass(POOLS);
    loop.soon();
    loop.soon();
    assert.equal(seen.length, 1, 'not in this turn');
    await nextTurn();
    assert.equal(seen.length, 2, 'a burst once');
    assert.equal(seen[1]!.pools, POOLS);
    loop.stop();
    loop.soon();
    await nextTurn();
    assert.equal(seen.length, 2, 'stopped');
  });

  it('nothing before the first pass, even started', async () => {
    const { loop, seen } = rig();
    loop.start();
    loop.soon();
    await nextTurn();
    assert.equal(seen.length, 0);
  });

  it('a gate waiting on health asks one read per second; a False gate is looked at again a second later', async (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 10_000 });
    const { loop, seen, counts, writer } = rig(true);
    writer.anyFalse = true;
    loop.start();
    loop.afterPass(POOLS);
    await nextTurn();
    assert.equal(counts.refresh, 1);
    loop.soon();
    await nextTurn();
    assert.equal(counts.refresh, 1, 'not again within the second');
    assert.equal(seen.length, 2);
    t.mock.timers.tick(1000);
    await nextTurn();
    assert.equal(seen.length, 3, 'looked at again with nothing else happening');
    assert.equal(counts.refresh, 2, 'a second later: another read');
    writer.anyFalse = false;
    t.mock.timers.tick(1000);
    await nextTurn();
    assert.equal(seen.length, 4);
    t.mock.timers.tick(5000);
    await nextTurn();
    assert.equal(seen.length, 4, 'settled: no timer');
    loop.stop();
  });
});
