/**
 * A whole read of the Avi Controller converted to the model a slice at a time (observed.ts): the
 * event loop turns between slices, so a change's pass waiting behind the sweep's read of thousands
 * of objects waits for one slice, never for all of them; and the model is the same as one read at
 * once would give, in the device's order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { observedModel } from '../../../../adapters/avi/observed.ts';
import { renderPool } from '../../../../adapters/avi/objects.ts';
import type { AviType } from '../../../../adapters/avi/objects.ts';
import * as kit from '../../../support/model.ts';

const AT = { cloud: 'Default-Cloud', seGroup: 'Default-Group', vrf: 'global' };
const pools = (n: number) =>
  Array.from({ length: n }, (_, i) =>
    kit.pool(`c1--ns-s${String(i).padStart(4, '0')}-80`, [kit.member(`192.0.2.${(i % 200) + 1}`, 30000 + i)]),
  );

describe('the Avi read converted by slices', () => {
  it('lets the event loop turn while it converts, and gives every pool in order', async () => {
    const model = pools(450);
    const raw = model.map((p, i) => ({ ...renderPool(p, 'c1', AT), uuid: `pool-${i}` }));
    const read = new Map<AviType, Record<string, unknown>[]>([['pool', raw]]);
    let turns = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    const observed = await observedModel(read, [], 'c1');
    counting = false;
    // 450 objects at 100 a slice: the loop turned at least four times before the model was ready
    // (none if the conversion held the loop from start to end).
    assert.ok(turns >= 4, `the event loop turned ${turns} times`);
    assert.deepEqual(
      observed.owned.pools.map((p) => p.name),
      model.map((p) => p.name),
    );
    assert.deepEqual(
      observed.owned.pools.map((p) => p.members),
      model.map((p) => p.members),
    );
    assert.deepEqual(observed.foreign, []);
  });

  it("another owner's pools are foreign, whatever slice they fall in", async () => {
    const raw = pools(150).map((p, i) => ({
      ...renderPool(p, i === 120 ? 'c2' : 'c1', AT),
      uuid: `pool-${i}`,
    }));
    const observed = await observedModel(new Map([['pool', raw]]), [], 'c1');
    assert.equal(observed.owned.pools.length, 149);
    assert.deepEqual(observed.foreign, [{ kind: 'pool', name: 'c1--ns-s0120-80', owner: 'c2' }]);
  });
});
