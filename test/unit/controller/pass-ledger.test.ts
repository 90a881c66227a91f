/**
 * The passes' ledger (pass-ledger.ts) and the device timing (device-timing.ts), alone: objects in
 * flight hold later changes to them and a release says a pass is due; a terminal failure parks its
 * object until its desired state changes or the device matches it; a pool written lately waits for
 * its interval; what a later, overlapping pass applied is still pending for an earlier one and the
 * record goes once no pass overlaps; the pools known follow reads and applies; an apply's time is
 * counted when it answers, a failed one counts nothing, and the oldest apply in flight is seen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import { DeviceTiming } from '../../../src/controller/device-timing.ts';
import { PassLedger } from '../../../src/controller/pass-ledger.ts';
import type { Pool } from '../../../src/model/types.ts';
import type { Change, Plan } from '../../../src/plan/diff.ts';
import * as kit from '../../support/model.ts';

const pool = (name: string, port = 1): Pool => kit.pool(name, [kit.member('192.0.2.1', port)]);
const update = (port: number): Change => ({
  op: 'update',
  kind: 'pool',
  name: 'p',
  desired: pool('p', port),
  observed: pool('p'),
});
const planOf = (...changes: Change[]): Plan => ({ changes, conflicts: [], same: [] }) as unknown as Plan;
const ok = (change: Change): ApplyResult => ({ change, ok: true });
const refused = (change: Change): ApplyResult => ({
  change,
  ok: false,
  error: { code: 'Invalid', message: 'refused', terminal: true },
});

describe('the passes’ ledger', () => {
  it('in flight: a later change waits, and the release says a pass is due (once)', () => {
    const l = new PassLedger();
    const c = update(2);
    l.claim([c]);
    const g = l.gate(planOf(update(3)), ['pool/p'], 1000, 100);
    assert.deepEqual(g.go, []);
    assert.ok(g.held.has('pool/p'));
    assert.equal(l.release([c]), true, 'a pass waited on it');
    assert.equal(l.release([c]), false, 'told once');
    assert.equal(l.gate(planOf(update(3)), ['pool/p'], 1000, 100).go.length, 1);
  });

  it('a terminal failure parks its object until its desired state changes or the device matches it', () => {
    const l = new PassLedger();
    const c = update(2);
    l.record([refused(c)], 1000);
    assert.deepEqual(l.gate(planOf(c), ['pool/p'], 2000, 100).go, [], 'the same doomed write is not sent');
    const changed = update(3);
    const g = l.gate(planOf(changed), ['pool/p'], 2000, 100);
    assert.deepEqual(g.go, [changed], 'a new desired state goes');
    // Parked again, then the device matches it (diffed, nothing planned): no longer parked.
    l.record([refused(changed)], 2000);
    l.gate(planOf(), ['pool/p'], 3000, 100);
    assert.deepEqual(l.gate(planOf(changed), ['pool/p'], 3000, 100).go, [changed]);
  });

  it('a pool written lately waits for its interval; the pools known follow reads and applies', () => {
    const l = new PassLedger();
    l.read(
      new Map([
        ['p', pool('p')],
        ['q', pool('q')],
      ]),
    );
    assert.deepEqual(l.knownPool('q'), pool('q'));
    const c = update(2);
    l.record([ok(c)], 1000);
    assert.equal(l.poolWrittenAt('p'), 1000);
    assert.deepEqual(l.knownPool('p'), pool('p', 2), 'what was applied is what the device has');
    const g = l.gate(planOf(update(3)), ['pool/p'], 1050, 100);
    assert.deepEqual(g.go, []);
    assert.equal(g.deferredMs, 50);
    assert.equal(l.gate(planOf(update(3)), ['pool/p'], 1100, 100).go.length, 1);
    l.record([ok({ op: 'delete', kind: 'pool', name: 'q', observed: pool('q') })], 1200);
    assert.equal(l.knownPool('q'), undefined);
    l.read(new Map());
    assert.equal(l.knownPool('p'), undefined, 'a read replaces what was known');
  });

  it('what a later, overlapping pass applied is pending for an earlier one; the record goes once none overlaps', () => {
    const l = new PassLedger();
    const first = l.next();
    l.begin();
    const second = l.next();
    assert.ok(l.overtaken(first) && !l.overtaken(second));
    l.begin();
    l.applied([update(2)], second);
    assert.ok(l.pending(new Set(), [], first).has('pool/p'), 'the second pass tells it');
    assert.ok(!l.pending(new Set(), [], second).has('pool/p'));
    l.reported(); // two passes running: kept
    l.end();
    assert.ok(l.pending(new Set(), [], first).has('pool/p'));
    l.reported(); // the last one: cleared
    l.end();
    assert.ok(!l.pending(new Set(), [], first).has('pool/p'));
    assert.ok(l.pending(new Set(['x/y']), [refused(update(4))], first).has('x/y'));
  });
});

describe('the device timing', () => {
  it('counts an apply when it answers, not one that fails; sees the oldest apply in flight', async () => {
    let now = 0;
    const t = new DeviceTiming(() => now);
    let answer!: () => void;
    const running = t.apply(() => new Promise<void>((r) => (answer = r)));
    now = 400;
    assert.equal(t.oldestApplyMs(), 400);
    answer();
    await running;
    assert.equal(t.deviceMs, 400);
    assert.equal(t.oldestApplyMs(), 0);
    now = 1000;
    await assert.rejects(t.apply(() => Promise.reject(new Error('down'))));
    assert.equal(t.deviceMs, 400, 'a failed apply counts nothing');
    t.planned(10);
    t.planned(20);
    assert.equal(t.planMs, 13, 'a moving average following the last values');
    // A whole pass (a cold start, the sweep) is a one-off: counted apart, it spaces no change
    // after it (counted in, it held the next changes for twice its time, issue 50's tail).
    t.planned(900, true);
    assert.equal(t.planMs, 13);
    assert.equal(t.wholePlanMs, 900);
    // A batch of hundreds of changes (a cold start) is not a device call: not counted.
    let done!: () => void;
    const big = t.apply(() => new Promise<void>((r) => (done = r)), 600);
    now = 12_000;
    done();
    await big;
    assert.equal(t.deviceMs, 400, "a large batch's seconds are not a call's time");
  });
});
