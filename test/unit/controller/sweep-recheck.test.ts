/**
 * The sweep's slice of pools to build again: every Service in turn, `perSweep` at a time, from the
 * start again after the last; a list that shrank under the cursor starts over; none when there
 * are none. Mutations this catches: a slice from the start each time (the last Services never
 * looked at again), a cursor that runs past a shrunk list (an empty slice forever).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SweepRecheck } from '../../../src/controller/sweep-recheck.ts';

const services = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ metadata: { namespace: 'default', name: `s${i}` } }));

describe('the sweep recheck', () => {
  it('names every Service in turn, a slice per sweep, and starts over', () => {
    const r = new SweepRecheck(2);
    const list = services(5);
    assert.deepEqual(
      [r.next(list), r.next(list), r.next(list), r.next(list)],
      [
        ['default/s0', 'default/s1'],
        ['default/s2', 'default/s3'],
        ['default/s4'],
        ['default/s0', 'default/s1'],
      ],
    );
  });

  it('starts over when the list shrank under it, and names none of none', () => {
    const r = new SweepRecheck(3);
    r.next(services(6));
    r.next(services(6));
    assert.deepEqual(r.next(services(4)), ['default/s0', 'default/s1', 'default/s2']);
    assert.deepEqual(r.next([]), []);
    assert.deepEqual(new SweepRecheck(0).next(services(3)), []);
  });
});
