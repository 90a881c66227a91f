/**
 * The weighted distribution check, as upstream's: a failed request fails its try (logged), the
 * next try starts clean; the check fails only after ten tries, with the last reason.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectWeightedDistribution } from '../../../conformance/harness/weight.ts';

/** A sender answering `a` and `b` at 70/30 by a fixed cycle of ten. */
const cycle = () => {
  let n = 0;
  return async () => (n++ % 10 < 7 ? 'a' : 'b');
};

describe('weighted distribution check', () => {
  it('a 503 in the first try fails that try only; the second try passes', async () => {
    const lines: string[] = [];
    const next = cycle();
    let calls = 0;
    await expectWeightedDistribution(
      { a: 0.7, b: 0.3 },
      async () => {
        if (++calls === 40) throw new Error('status 503, want one of 200');
        return next();
      },
      (l) => lines.push(l),
    );
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^distribution try 1\/10: error while sending requests: status 503/);
  });

  it('after a try that failed on a request, the backend is made reachable again before the next; not after a share out of tolerance', async () => {
    const order: string[] = [];
    const next = cycle();
    let calls = 0;
    await expectWeightedDistribution(
      { a: 0.7, b: 0.3 },
      async () => {
        if (++calls === 10) {
          order.push('503');
          throw new Error('status 503, want one of 200');
        }
        return next();
      },
      (l) => order.push(l.slice(0, 21)),
      async () => {
        order.push('reachable');
      },
    );
    assert.deepEqual(order, ['503', 'distribution try 1/10', 'reachable']);
    // A distribution that is off is not a reachability problem: no wait between those tries.
    let waits = 0;
    await assert.rejects(
      expectWeightedDistribution(
        { a: 0.5, b: 0.5 },
        cycle(),
        () => {},
        async () => void waits++,
      ),
    );
    assert.equal(waits, 0);
    // A backend that never becomes reachable again fails the check with why.
    await assert.rejects(
      expectWeightedDistribution(
        { a: 1 },
        () => Promise.reject(new Error('status 503')),
        () => {},
        () => Promise.reject(new Error('not reachable in 30 s')),
      ),
      /not reachable in 30 s/,
    );
  });

  it('fails after ten tries, with the last reason; a share out of tolerance is a failed try', async () => {
    const lines: string[] = [];
    await assert.rejects(
      expectWeightedDistribution({ a: 0.5, b: 0.5 }, cycle(), (l) => lines.push(l)),
      /weighted distribution failed 10 times: a got 0.700 of the traffic, want 0.5/,
    );
    assert.equal(lines.length, 10);
  });

  it('an unexpected backend fails the try, never counted', async () => {
    await assert.rejects(
      expectWeightedDistribution(
        { a: 1 },
        async () => 'z',
        () => {},
      ),
      /error while sending requests: answered by an unexpected backend z/,
    );
  });
});
