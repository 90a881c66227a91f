/**
 * The pass scheduler: requests coalesce into one pass; passes overlap up to the slots the device
 * time allows and never more; a request while every slot is busy runs one more pass after; a
 * failed pass is retried with backoff; a deferred pass runs after its delay; stop waits for the
 * pass in flight and runs nothing after.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PassScheduler } from '../../../src/controller/pass-scheduler.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { eventually } from '../../support/sandbox.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rig(
  o: {
    slots?: number;
    passMs?: number;
    fail?: () => boolean;
    deferredMs?: () => number | undefined;
    unstarted?: boolean;
    deviceMs?: number;
    backoffMs?: number;
  } = {},
) {
  let running = 0;
  const seen = {
    passes: 0,
    ended: 0,
    maxRunning: 0,
    errors: 0,
    endedAt: [] as number[],
    starts: [] as { at: number; running: number }[],
  };
  const s: PassScheduler = new PassScheduler({
    pass: async () => {
      // The scheduler's own start instant and count: a timestamp taken here instead would move
      // with any pause of the process between the scheduler's start and this line (a loaded
      // machine preempts for milliseconds), and the test's own count drops before the
      // scheduler's does.
      seen.starts.push({ at: s.lastStartAt, running: s.active - 1 });
      running++;
      seen.passes++;
      seen.maxRunning = Math.max(seen.maxRunning, running);
      await sleep(o.passMs ?? 20);
      running--;
      if (o.fail?.()) throw new Error('device says no');
      const result = { deferredMs: o.deferredMs?.() };
      seen.ended++;
      seen.endedAt.push(Date.now());
      return result;
    },
    maxSlots: 4,
    slots: () => o.slots ?? 1,
    spacingMs: () => 0,
    ...(o.deviceMs !== undefined ? { deviceMs: () => o.deviceMs! } : {}),
    backoff: { initialMs: o.backoffMs ?? 30, maxMs: 2 * (o.backoffMs ?? 30), jitter: 0 },
    log: silentLogger(),
    onError: () => seen.errors++,
  });
  if (!o.unstarted) s.start();
  return { s, seen };
}

describe('pass scheduler', () => {
  it('nothing runs before start (the caches are not synced); what was asked runs once at start', async (t) => {
    const { s, seen } = rig({ unstarted: true, passMs: 1 });
    t.after(() => s.stop());
    for (let i = 0; i < 10; i++) s.request();
    await sleep(30);
    assert.equal(seen.passes, 0);
    s.start();
    await sleep(30);
    await s.whenIdle();
    assert.equal(seen.passes, 1);
  });

  it('a burst of requests is one pass (and one more for what came while it ran)', async (t) => {
    const { s, seen } = rig();
    t.after(() => s.stop());
    for (let i = 0; i < 100; i++) s.request();
    await sleep(5);
    for (let i = 0; i < 100; i++) s.request();
    await sleep(80);
    await s.whenIdle();
    assert.equal(seen.passes, 2);
  });

  it('passes overlap up to the slots, never more', async (t) => {
    // Passes long enough that requests 3 ms apart overlap them even on a loaded machine.
    const { s, seen } = rig({ slots: 3, passMs: 150 });
    t.after(() => s.stop());
    for (let i = 0; i < 10; i++) {
      s.request();
      await sleep(3);
    }
    await eventually(() => seen.passes >= 3, 5000, 'three passes');
    await s.whenIdle();
    assert.equal(seen.maxRunning, 3);
    const one = rig({ slots: 0, passMs: 20 });
    t.after(() => one.s.stop());
    for (let i = 0; i < 5; i++) {
      one.s.request();
      await sleep(3);
    }
    await sleep(100);
    assert.equal(one.seen.maxRunning, 1, 'at least one slot, one at a time');
  });

  it('paces starts as the slots fill, so a stream of single changes does not take every slot at once', async (t) => {
    // 4 slots of 80 ms device calls, a request every 2 ms: the gap before a start is at least the
    // device time spread over the slots, times the share of the other slots busy (0 with none).
    const { s, seen } = rig({ slots: 4, passMs: 80, deviceMs: 80 });
    t.after(() => s.stop());
    for (let i = 0; i < 60; i++) {
      s.request();
      await sleep(2);
    }
    await s.whenIdle();
    assert.ok(seen.maxRunning <= 4);
    assert.ok(seen.starts.length >= 4, `${seen.starts.length} passes`);
    for (let i = 1; i < seen.starts.length; i++) {
      const { at, running } = seen.starts[i]!;
      const pace = (80 / 4) * Math.min(1, running / 3);
      const gap = at - seen.starts[i - 1]!.at;
      // Start instants are whole milliseconds (Date.now()).
      assert.ok(
        gap >= pace - 1,
        `start ${i} with ${running} running came ${gap.toFixed(1)} ms after the last; pace ${pace.toFixed(1)}`,
      );
    }
    // Fewer passes than requests: what came between two starts went in the next one.
    assert.ok(seen.passes < 30, `${seen.passes} passes for 60 requests`);
  });

  it('a failed pass is retried with backoff until it succeeds', async (t) => {
    let left = 3;
    const { s, seen } = rig({ passMs: 1, fail: () => left-- > 0 });
    t.after(() => s.stop());
    s.request();
    await eventually(() => seen.ended === 1, 5000, 'the pass after three failures');
    assert.equal(seen.errors, 3);
    assert.equal(seen.passes, 4);
    assert.equal(s.failures, 0, 'a success resets the backoff');
  });

  it('idle waits for a deferred pass, not for a retry after a failure', async (t) => {
    let defer: number | undefined = 40;
    const { s, seen } = rig({ passMs: 1, deferredMs: () => defer });
    t.after(() => s.stop());
    s.request();
    // The first pass has ended (and asked for a deferred one) before the deferral is lifted: on a
    // loaded machine it may not have run within a fixed sleep.
    await eventually(() => seen.ended === 1, 5000, 'the first pass');
    defer = undefined;
    await s.whenIdle();
    assert.equal(seen.passes, 2, 'the deferred pass ran before idle');
    // A retry 10 s away: idle comes long before it (a bound a loaded machine does not reach).
    const failing = rig({ passMs: 1, fail: () => true, backoffMs: 10_000 });
    t.after(() => failing.s.stop());
    failing.s.request();
    await eventually(() => failing.seen.errors === 1, 5000, 'the failed pass');
    const t0 = Date.now();
    await failing.s.whenIdle();
    assert.ok(Date.now() - t0 < 5000, 'a retry pending does not hold idle');
    assert.equal(failing.seen.passes, 1, 'and the retry has not run');
  });

  it('a deferred pass runs after its delay; stop runs nothing after', async (t) => {
    let defer: number | undefined = 50;
    const { s, seen } = rig({ passMs: 1, deferredMs: () => defer });
    s.request();
    await eventually(() => seen.ended === 1, 5000, 'the first pass');
    defer = undefined;
    // Not before its delay; on a loaded machine it may come well after, so waited for, not slept on.
    await eventually(() => seen.passes === 2, 5000, 'the deferred pass');
    // Instants in whole milliseconds (Date.now()); a timer may fire a millisecond early by that clock.
    const waited = seen.starts[1]!.at - seen.endedAt[0]!;
    assert.ok(waited >= 48, `the deferred pass started ${waited} ms after the first ended`);
    defer = 30;
    s.request();
    await sleep(10);
    await s.stop();
    const after = seen.passes;
    s.request();
    await sleep(80);
    assert.equal(seen.passes, after);
    t.diagnostic(`passes: ${seen.passes}`);
  });
});
