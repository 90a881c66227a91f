/**
 * Servers HAProxy would not delete yet (parked-servers.ts): kept until a try deletes them, tried
 * again every 2 s in turn with the applies, released when they come back, forgotten on a reload,
 * and the timer stopped once none is left or the adapter closes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ParkedServers } from '../../../adapters/haproxy/parked-servers.ts';

describe('HAProxy runtime transport: parked servers', () => {
  it('kept until deleted, retried on the timer in turn, released, forgotten on a reload', async (t) => {
    t.mock.timers.enable({ apis: ['setInterval'] });
    const deletable = new Set<string>();
    const tried: string[] = [];
    const turns: (() => Promise<void>)[] = [];
    const parked = new ParkedServers(
      async (b, s) => {
        tried.push(`${b}/${s}`);
        if (s === 'boom') throw new Error('socket gone');
        return deletable.has(`${b}/${s}`);
      },
      (retry) => turns.push(retry),
    );
    parked.park('web', 'a');
    parked.park('web', 'b');
    parked.park('api', 'boom');
    assert.deepEqual(parked.list.sort(), ['api/boom', 'web/a', 'web/b']);
    assert.ok(parked.has('web', 'a'));

    // The timer hands the retry to the adapter's turn; nothing is tried before that turn runs.
    t.mock.timers.tick(2000);
    assert.equal(turns.length, 1);
    assert.deepEqual(tried, []);
    deletable.add('web/a');
    await turns.shift()!();
    assert.deepEqual(tried.sort(), ['api/boom', 'web/a', 'web/b']);
    assert.deepEqual(parked.list.sort(), ['api/boom', 'web/b'], 'a failed try keeps it');

    // One back in the pool is released, not deleted later.
    parked.release('web', 'b');
    assert.equal(parked.has('web', 'b'), false);
    assert.deepEqual(parked.list, ['api/boom']);

    // A reload forgets them all; the next try finds none and stops the timer.
    parked.clear();
    await parked.deleteNow();
    assert.deepEqual(parked.list, []);
    t.mock.timers.tick(10_000);
    assert.equal(turns.length, 0, 'no timer once none is left');

    // Parked again: the timer starts again; stop() ends it.
    parked.park('web', 'c');
    parked.stop();
    t.mock.timers.tick(10_000);
    assert.equal(turns.length, 0);
  });
});
