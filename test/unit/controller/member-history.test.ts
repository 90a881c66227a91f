/**
 * Each member's last hour, from the controller's memory: health changes as the device's reads
 * changed them (a repeat is no entry), the changes applied to it (added, drained, enabled,
 * removed), shown in the state document; bounded by the hour, by entries per member and by
 * members (the one recorded least recently forgotten first).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApplyResult, MemberHealth } from '../../../src/adapter/contract.ts';
import { MemberHistory } from '../../../src/controller/member-history.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import type { LbState, Pool } from '../../../src/model/types.ts';
import * as kit from '../../support/model.ts';

describe('member history', () => {
  it('keeps the last hour, at most perMember entries each, and forgets the least recent member past the limit', () => {
    let now = Date.parse('2026-11-29T10:00:00Z');
    const h = new MemberHistory({ windowMs: 3_600_000, perMember: 3, members: 2 }, () => now);
    h.record('a', 'one');
    now += 30 * 60_000;
    for (const w of ['two', 'three', 'four']) h.record('a', w);
    assert.deepEqual(
      h.of('a').map((e) => e.what),
      ['two', 'three', 'four'],
      'three kept',
    );
    now += 61 * 60_000;
    h.record('b', 'b1');
    assert.deepEqual(h.of('a'), [], 'older than the hour: gone from the view');
    h.record('a', 'five');
    h.record('c', 'c1');
    assert.equal(h.size, 2);
    assert.deepEqual(h.of('b'), [], 'b was recorded least recently: forgotten');
    assert.deepEqual(
      h.of('a').map((e) => [e.what, e.at]),
      [['five', '2026-11-29T11:31:00.000Z']],
    );
  });

  it('the state document carries health changes and applied changes per member; repeats add nothing', () => {
    let now = Date.parse('2026-11-29T10:00:00Z');
    const state = new StateTracker('c1', 'memory', () => new Date(now));
    const member = (port: number, enabled = true) =>
      kit.member('192.0.2.1', port, { node: 'n1', pod: `default/p${port}`, enabled });
    const pool = (...members: ReturnType<typeof member>[]): Pool => kit.pool('c1--web', members);
    const lb = (p: Pool): LbState => ({ pools: [p], virtualServices: [] });
    // What the adapter applied: the pool as the device had it (none: a create), and as written.
    const applied = (next: Pool, prev?: Pool): ApplyResult[] => [
      {
        change: prev
          ? { op: 'update', kind: 'pool', name: next.name, desired: next, observed: prev }
          : { op: 'create', kind: 'pool', name: next.name, desired: next },
        ok: true,
      },
    ];
    const health = (port: number, h: MemberHealth['health'], reason?: string): MemberHealth => ({
      pool: 'c1--web',
      address: '192.0.2.1',
      port,
      admin: 'enabled',
      health: h,
      ...(reason ? { reason } : {}),
    });
    const p1 = pool(member(61001));
    state.record(lb(p1), applied(p1), []);
    state.setHealth([health(61001, 'up')]);
    now += 1000;
    state.setHealth([health(61001, 'up')]);
    now += 1000;
    state.setHealth([health(61001, 'down', 'L4CON')]);
    now += 1000;
    const p2 = pool(member(61001, false), member(61002));
    state.record(lb(p2), applied(p2, p1), []);
    now += 1000;
    // A pass that did not apply the pool records nothing of its members.
    state.record(lb(p2), [], []);
    const p3 = pool(member(61002));
    state.record(lb(p3), applied(p3, p2), []);
    const doc = state.document();
    assert.deepEqual(
      doc.pools[0]!.members.map((m) => [m.port, (m.history ?? []).map((e) => e.what)]),
      [[61002, ['added (enabled)']]],
    );
    assert.deepEqual(
      state.history.of('c1--web|192.0.2.1|61001').map((e) => `${e.at.slice(11, 19)} ${e.what}`),
      [
        '10:00:00 added (enabled)',
        '10:00:02 health up → down (L4CON)',
        '10:00:03 enabled → draining',
        '10:00:04 removed',
      ],
    );
  });
});
