/**
 * The plan's shortcuts (deletes looked for only when some owned object went unmatched, foreign
 * names by kind, the plan of some names only) and the observed state carried between passes give
 * what a plain diff gives, whatever the states: a reference diff written the obvious way is the
 * oracle. After a pass that applied everything, the carried state leaves nothing to do.
 *
 * Mutations this catches (tried by hand): `planNamed` skipping deletes of a name no longer wanted;
 * `afterPass` carrying a pending object; the delete shortcut counting a foreign clash as matched.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { afterPass } from '../../../src/controller/observed-cache.ts';
import { normalizePool, normalizeVirtualService } from '../../../src/model/normalize.ts';
import type { LbState, Pool, VirtualService } from '../../../src/model/types.ts';
import { byName, type Observed, plan, planNamed } from '../../../src/plan/diff.ts';

const names = fc.constantFrom('a', 'b', 'c', 'd', 'e');

const poolArb: fc.Arbitrary<Pool> = fc
  .record({ name: names, ports: fc.uniqueArray(fc.integer({ min: 1, max: 4 }), { maxLength: 3 }) })
  .map(({ name, ports }) => ({
    name: `p-${name}`,
    protocol: 'TCP',
    health: 'tcp',
    service: 'ns/s',
    servicePort: '80',
    members: ports.map((port) => ({ address: '192.0.2.1', port, node: 'n1', pod: 'ns/p', enabled: true })),
  }));
const vsArb: fc.Arbitrary<VirtualService> = fc
  .record({ name: names, pool: names, port: fc.constantFrom(80, 443) })
  .map(({ name, pool, port }) => ({
    kind: 'l4',
    name: `v-${name}`,
    vip: '192.0.2.10',
    port,
    protocol: 'TCP',
    pool: `p-${pool}`,
    source: 'ns/s',
  }));
const stateArb: fc.Arbitrary<LbState> = fc.record({
  pools: fc.uniqueArray(poolArb, { selector: (p) => p.name, maxLength: 5 }),
  virtualServices: fc.uniqueArray(vsArb, { selector: (v) => v.name, maxLength: 5 }),
});
const foreignArb = fc.uniqueArray(
  fc.record({
    kind: fc.constantFrom('pool' as const, 'virtualService' as const),
    name: names,
    owner: fc.constant('other'),
  }),
  { selector: (f) => `${f.kind}/${f.name}`, maxLength: 2 },
);

/** The diff written the obvious way. */
function reference(desired: LbState, observed: Observed): string[] {
  const foreign = new Set(observed.foreign.map((f) => `${f.kind}/${f.name}`));
  const one = <T extends { name: string }>(kind: string, want: T[], have: T[], norm: (x: T) => T) => {
    const upserts: string[] = [];
    const deletes: string[] = [];
    for (const d of want) {
      if (foreign.has(`${kind}/${d.name}`)) continue;
      const cur = have.find((h) => h.name === d.name);
      if (!cur) upserts.push(`create ${kind} ${d.name}`);
      else if (!isDeepStrictEqual(norm(cur), norm(d))) upserts.push(`update ${kind} ${d.name}`);
    }
    for (const h of have)
      if (!want.some((d) => d.name === h.name && !foreign.has(`${kind}/${d.name}`)))
        deletes.push(`delete ${kind} ${h.name}`);
    return { upserts, deletes };
  };
  const p = one('pool', desired.pools, observed.owned.pools, normalizePool);
  const v = one(
    'virtualService',
    desired.virtualServices,
    observed.owned.virtualServices,
    normalizeVirtualService,
  );
  return [...p.upserts, ...v.upserts, ...v.deletes, ...p.deletes];
}

const ops = (s: LbState, o: Observed | ReturnType<typeof byName>) =>
  plan(s, o).changes.map((c) => `${c.op} ${c.kind} ${c.name}`);

const lookup = (s: LbState) => ({
  pool: (n: string) => s.pools.find((p) => p.name === n),
  virtualService: (n: string) => s.virtualServices.find((v) => v.name === n),
  certificate: () => undefined,
});
const allNames = fc.subarray([
  'pool/p-a',
  'pool/p-b',
  'pool/p-c',
  'pool/p-d',
  'pool/p-e',
  'virtualService/v-a',
  'virtualService/v-b',
  'virtualService/v-c',
  'virtualService/v-d',
  'virtualService/v-e',
]);

/** Owned objects never share a name with a foreign one (a name is ours or someone else's). */
const ownedOnly = (s: LbState, foreign: Observed['foreign']): LbState => ({
  pools: s.pools.filter((p) => !foreign.some((f) => f.kind === 'pool' && f.name === p.name)),
  virtualServices: s.virtualServices.filter(
    (v) => !foreign.some((f) => f.kind === 'virtualService' && f.name === v.name),
  ),
});

describe('the incremental plan', () => {
  it('plans what a plain diff plans, for any desired and observed state', () => {
    fc.assert(
      fc.property(stateArb, stateArb, foreignArb, (desired, owned, foreign) => {
        const o: Observed = { owned: ownedOnly(owned, foreign), foreign };
        assert.deepEqual(ops(desired, o), reference(desired, o));
        // Planned again on the same lists: the same.
        assert.deepEqual(ops(desired, o), reference(desired, o));
      }),
      { numRuns: 400 },
    );
  });

  it('plans for some names exactly what the whole plan plans for them, deletes and conflicts included', () => {
    fc.assert(
      fc.property(stateArb, stateArb, foreignArb, allNames, (desired, owned, foreign, keys) => {
        const o: Observed = { owned: ownedOnly(owned, foreign), foreign };
        const whole = plan(desired, o);
        const some = planNamed(lookup(desired), byName(o), keys);
        const mine = (k: string) => keys.includes(k);
        const sorted = (xs: string[]) => [...xs].sort();
        assert.deepEqual(
          sorted(some.changes.map((c) => `${c.op} ${c.kind}/${c.name}`)),
          sorted(
            whole.changes
              .filter((c) => mine(`${c.kind}/${c.name}`))
              .map((c) => `${c.op} ${c.kind}/${c.name}`),
          ),
        );
        assert.deepEqual(
          sorted(some.conflicts.map((c) => `${c.kind}/${c.name}`)),
          sorted(whole.conflicts.map((c) => `${c.kind}/${c.name}`).filter(mine)),
        );
        // Kinds in the plan's order: pool upserts first, pool deletes last.
        const order = some.changes.map((c) => (c.op === 'delete' ? `d${c.kind}` : `u${c.kind}`));
        const rank = ['upool', 'ucertificate', 'uvirtualService', 'dvirtualService', 'dcertificate', 'dpool'];
        assert.deepEqual(
          order.map((x) => rank.indexOf(x)),
          [...order.map((x) => rank.indexOf(x))].sort((a, b) => a - b),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('the state carried after a pass plans as the device would be read back, and after a pass that applied everything, nothing is left', () => {
    fc.assert(
      fc.property(
        stateArb,
        stateArb,
        stateArb,
        foreignArb,
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        (desired, owned, next, foreign, applies) => {
          const start: Observed = { owned: ownedOnly(owned, foreign), foreign };
          const p = plan(desired, start);
          // Some changes went through; the others are pending.
          const applied = p.changes.map((change, i) => ({ change, ok: applies[i % applies.length]! }));
          const pending = new Set(
            applied.filter((r) => !r.ok).map((r) => `${r.change.kind}/${r.change.name}`),
          );
          const after = byName(start);
          afterPass(
            after,
            applied.filter((r) => r.ok),
            p,
            pending,
          );
          // Read back as plain lists: the same plan for any next desired state.
          const plain: Observed = {
            owned: {
              pools: [...after.pools.values()],
              virtualServices: [...after.virtualServices.values()],
              certificates: [...after.certificates.values()],
            },
            foreign,
          };
          assert.deepEqual(ops(next, after), reference(next, plain));
          assert.deepEqual(ops(desired, after), reference(desired, plain));
          if (pending.size === 0) assert.deepEqual(ops(desired, after), [], 'nothing left to do');
          // Pending objects are held as they were observed.
          for (const k of pending) {
            const [kind, name] = k.split('/') as ['pool' | 'virtualService', string];
            const held = kind === 'pool' ? after.pools.get(name) : after.virtualServices.get(name);
            const was = (kind === 'pool' ? start.owned.pools : start.owned.virtualServices).find(
              (x) => x.name === name,
            );
            assert.equal(held, was, k);
          }
        },
      ),
      { numRuns: 400 },
    );
  });
});
