/**
 * The one ownership guard: a change to an object the device showed as another owner's never
 * reaches the adapter (NotOwned, terminal), whatever the change and however it was made; the rest
 * go through in order; an object reported both ways is not handed over as ours; optional methods
 * stay optional.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Change, Observed } from '../../../src/adapter/changes.ts';
import type { ApplyResult, LoadBalancerAdapter } from '../../../src/adapter/contract.ts';
import { guardOwnership, OwnershipGuard } from '../../../src/adapter/ownership.ts';
import * as kit from '../../support/model.ts';
import type { Pool } from '../../../src/model/types.ts';

const pool = (name: string): Pool => kit.pool(name, [], { service: 'default/web' });

class Fake implements LoadBalancerAdapter {
  readonly name = 'fake';
  readonly owner = 'c1';
  applied: string[] = [];
  observes = 0;
  constructor(private readonly seen: Observed) {}
  capabilities() {
    return { l4: { tcp: true, udp: false }, l7: true, memberNodeTag: true, drainingMembers: true };
  }
  async observe(): Promise<Observed> {
    this.observes++;
    return structuredClone(this.seen);
  }
  async apply(changes: Change[]): Promise<ApplyResult[]> {
    this.applied.push(...changes.map((c) => `${c.op} ${c.kind} ${c.name}`));
    return changes.map((change) => ({ change, ok: true }));
  }
  async close(): Promise<void> {}
}

const observed = (): Observed => ({
  owned: { pools: [pool('c1--a'), pool('clash')], virtualServices: [] },
  foreign: [
    { kind: 'pool', name: 'c2--a', owner: 'c2' },
    { kind: 'pool', name: 'clash', owner: 'c2' },
    { kind: 'virtualService', name: 'admin-vs', owner: '' },
  ],
});

describe('ownership guard', () => {
  it('refuses changes to foreign objects before the adapter sees them; passes the rest in order', async () => {
    const inner = new Fake(observed());
    const g = guardOwnership(inner);
    const results = await g.apply([
      { op: 'create', kind: 'pool', name: 'c1--b', desired: pool('c1--b') },
      { op: 'delete', kind: 'pool', name: 'c2--a', observed: pool('c2--a') },
      { op: 'update', kind: 'pool', name: 'c1--a', desired: pool('c1--a'), observed: pool('c1--a') },
      {
        op: 'delete',
        kind: 'virtualService',
        name: 'admin-vs',
        observed: {
          kind: 'l4',
          name: 'admin-vs',
          vip: '192.0.2.1',
          port: 80,
          protocol: 'TCP',
          pool: 'x',
          source: '',
        },
      },
    ]);
    assert.equal(inner.observes, 1, 'observed first, having no report yet');
    assert.deepEqual(inner.applied, ['create pool c1--b', 'update pool c1--a']);
    assert.deepEqual(
      results.map((r) => `${r.change.name} ${r.ok ? 'ok' : `${r.error!.code} ${r.error!.terminal}`}`),
      ['c1--b ok', 'c2--a NotOwned true', 'c1--a ok', 'admin-vs NotOwned true'],
    );
    assert.match(results[3]!.error!.message, /belongs to nobody we know/);
  });

  it('an object reported both as ours and as another’s is not ours', async () => {
    const g = guardOwnership(new Fake(observed()));
    const o = await g.observe();
    assert.deepEqual(
      o.owned.pools.map((p) => p.name),
      ['c1--a'],
    );
  });

  it('wraps once, and keeps optional methods optional', () => {
    const inner = new Fake(observed());
    const g = guardOwnership(inner);
    assert.ok(g instanceof OwnershipGuard);
    assert.equal(guardOwnership(g), g);
    assert.equal(g.health, undefined);
    assert.equal(g.verify, undefined);
    assert.equal(g.name, 'fake');
    assert.equal(g.owner, 'c1');
  });

  it("passes a health read's pools through: a slice of the pools reads those alone", async () => {
    // Dropped here, every slice of a device that reads health a call per pool read every pool:
    // at 1,000 Services, 1,000 calls a tick instead of 100 (the process-cost bench).
    const asked: (readonly string[] | undefined)[] = [];
    const inner = Object.assign(new Fake(observed()), {
      health: async (pools?: readonly string[]) => {
        asked.push(pools);
        return [];
      },
    });
    const g = guardOwnership(inner);
    await g.health!(['c1--a']);
    await g.health!();
    assert.deepEqual(asked, [['c1--a'], undefined]);
  });
});
