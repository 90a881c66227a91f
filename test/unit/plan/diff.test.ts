import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LbState, Pool } from '../../../src/model/types.ts';
import { type Observed, plan } from '../../../src/plan/diff.ts';

const pool = (name: string, ports: number[]): Pool => ({
  name,
  protocol: 'TCP',
  health: 'tcp',
  service: 'ns/s',
  servicePort: '80',
  members: ports.map((port) => ({ address: '192.0.2.1', port, node: 'n1', pod: 'ns/p', enabled: true })),
});
const vs = (name: string, p: string) => ({
  kind: 'l4' as const,
  name,
  vip: '192.0.2.10',
  port: 80,
  protocol: 'TCP' as const,
  pool: p,
  source: 'ns/s',
});
const observed = (s: LbState, foreign: Observed['foreign'] = []): Observed => ({ owned: s, foreign });
const ops = (s: LbState, o: Observed) => plan(s, o).changes.map((c) => `${c.op} ${c.kind} ${c.name}`);

describe('plan', () => {
  const cases: [string, LbState, Observed, string[]][] = [
    [
      'idempotency: desired = observed is empty',
      { pools: [pool('p', [1, 2])], virtualServices: [vs('v', 'p')] },
      observed({ pools: [pool('p', [1, 2])], virtualServices: [vs('v', 'p')] }),
      [],
    ],
    [
      'member order does not matter',
      { pools: [pool('p', [2, 1])], virtualServices: [] },
      observed({ pools: [pool('p', [1, 2])], virtualServices: [] }),
      [],
    ],
    [
      'children before parents on create',
      { pools: [pool('p', [1])], virtualServices: [vs('v', 'p')] },
      observed({ pools: [], virtualServices: [] }),
      ['create pool p', 'create virtualService v'],
    ],
    [
      'parents before children on delete',
      { pools: [], virtualServices: [] },
      observed({ pools: [pool('p', [1])], virtualServices: [vs('v', 'p')] }),
      ['delete virtualService v', 'delete pool p'],
    ],
    [
      'repointing: new pool, VS update, then old pool delete',
      { pools: [pool('p2', [1])], virtualServices: [vs('v', 'p2')] },
      observed({ pools: [pool('p1', [1])], virtualServices: [vs('v', 'p1')] }),
      ['create pool p2', 'update virtualService v', 'delete pool p1'],
    ],
    [
      'member change is one pool update',
      { pools: [pool('p', [1, 3])], virtualServices: [] },
      observed({ pools: [pool('p', [1])], virtualServices: [] }),
      ['update pool p'],
    ],
  ];
  for (const [name, desired, obs, want] of cases) it(name, () => assert.deepEqual(ops(desired, obs), want));

  it('a name held by a foreign object is a conflict, never a change', () => {
    const p = plan(
      { pools: [pool('p', [1])], virtualServices: [] },
      observed({ pools: [], virtualServices: [] }, [{ kind: 'pool', name: 'p', owner: 'other' }]),
    );
    assert.deepEqual(p.changes, []);
    assert.deepEqual(p.conflicts, [{ kind: 'pool', name: 'p', owner: 'other' }]);
  });
});
