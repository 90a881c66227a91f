/**
 * The sweep's period: the configured one while whole passes are cheap, stretched so that whole
 * passes take at most half a percent of a core once they are not (a cluster ten times larger
 * sweeps about ten times less often, so idle work follows time, not size), never beyond ten
 * periods; bad costs are ignored.
 */
import assert from 'node:assert/strict';
import { it, mock } from 'node:test';
import { nextSweepMs, SWEEP_CPU_SHARE, SweepTimer } from '../../../src/controller/sweep-timer.ts';

it('waits the configured period while whole passes are cheap, longer in proportion once they are not', () => {
  assert.equal(SWEEP_CPU_SHARE, 0.005);
  assert.equal(nextSweepMs(60_000, 0), 60_000);
  // 150 ms a whole pass: 30 s at half a percent, under the period: the period.
  assert.equal(nextSweepMs(60_000, 150), 60_000);
  // 1 s a whole pass (a large cluster): 200 s; 2 s: 400 s.
  assert.equal(nextSweepMs(60_000, 1000), 200_000);
  assert.equal(nextSweepMs(60_000, 2000), 400_000);
  // A cost that is not a number, or negative, leaves the period as it is.
  assert.equal(nextSweepMs(60_000, Number.NaN), 60_000);
  assert.equal(nextSweepMs(60_000, -5), 60_000);
  assert.equal(nextSweepMs(60_000, Number.POSITIVE_INFINITY), 60_000);
  // Never more than ten periods: drift is repaired within ten minutes whatever a pass costs.
  assert.equal(nextSweepMs(60_000, 60_000), 600_000);
});

it('sweeps on its period, stretches after a costly whole pass, shrinks back, and stops for good', () => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  try {
    const at: number[] = [];
    let now = 0;
    const timer = new SweepTimer(1000, () => at.push(now));
    timer.start();
    const tick = (ms: number) => {
      now += ms;
      mock.timers.tick(ms);
    };
    tick(1000);
    assert.deepEqual(at, [1000]);
    // The whole pass that sweep caused cost 20 ms: the timer armed after it is kept (1 s), the
    // one after that waits 20 / 0.005 = 4 s.
    timer.wholePassCost(20);
    assert.equal(timer.nextMs, 4000);
    tick(1000);
    assert.deepEqual(at, [1000, 2000]);
    tick(3999);
    assert.deepEqual(at, [1000, 2000]);
    tick(1);
    assert.deepEqual(at, [1000, 2000, 6000]);
    // Cheap again: back to the period.
    timer.wholePassCost(1);
    tick(4000);
    assert.deepEqual(at, [1000, 2000, 6000, 10_000]);
    tick(1000);
    assert.deepEqual(at, [1000, 2000, 6000, 10_000, 11_000]);
    timer.stop();
    tick(10_000);
    assert.equal(at.length, 5);
    // A cold start's first whole pass cost 5 s: the sweep armed after it waits ten periods; the
    // sweep's own pass then costs 10 ms and the wait is brought back to 2 s from when it was armed.
    const cold: number[] = [];
    const t2 = new SweepTimer(1000, () => cold.push(now));
    t2.start();
    t2.wholePassCost(5000);
    tick(1000);
    assert.deepEqual(cold, [now]);
    const armed = now;
    tick(500);
    t2.wholePassCost(10);
    tick(1499);
    assert.equal(cold.length, 1);
    tick(1);
    assert.deepEqual(cold, [armed, armed + 2000]);
    // A costlier pass does not push back a sweep already armed.
    t2.wholePassCost(5000);
    tick(2000);
    assert.deepEqual(cold, [armed, armed + 2000, armed + 4000]);
    t2.stop();
    // A period of 0 is off.
    const off = new SweepTimer(0, () => at.push(-1));
    off.start();
    tick(100_000);
    assert.equal(at.length, 5);
  } finally {
    mock.timers.reset();
  }
});
