/**
 * The members-per-pool gauges follow the pools the last pass handed over, counted when scraped:
 * a new or changed pool's counts, a pool that is gone removed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ControllerMetrics } from '../../../src/controller/metrics.ts';
import type { Pool } from '../../../src/model/types.ts';
import * as kit from '../../support/model.ts';

const pool = (name: string, enabled: boolean[]): Pool =>
  kit.pool(
    name,
    enabled.map((e, i) => kit.member('192.0.2.1', 61000 + i, { pod: `ns/p${i}`, enabled: e })),
  );

async function gauges(m: ControllerMetrics): Promise<string[]> {
  const g = await m.poolMembers.get();
  return g.values.map((v) => `${v.labels.pool} ${v.labels.state} ${v.value}`).sort();
}

describe('controller metrics', () => {
  it('members per pool: new, changed, unchanged and gone pools', async () => {
    const m = new ControllerMetrics(() => 0);
    const a = pool('a', [true, true, false]);
    const b = pool('b', [true]);
    m.recordPass([a, b], []);
    assert.deepEqual(await gauges(m), ['a draining 1', 'a enabled 2', 'b draining 0', 'b enabled 1']);
    // A changed pool: its gauges follow.
    m.recordPass([a, pool('b', [false, false])], []);
    assert.deepEqual(await gauges(m), ['a draining 1', 'a enabled 2', 'b draining 2', 'b enabled 0']);
    // A pool gone: its gauges are removed; a new one appears.
    m.recordPass([pool('c', [true]), a], []);
    assert.deepEqual(await gauges(m), ['a draining 1', 'a enabled 2', 'c draining 0', 'c enabled 1']);
    m.recordPass([], []);
    assert.deepEqual(await gauges(m), []);
  });
});
