/**
 * The gates of a pass as a truth table, like the plan's: for each kind of change and each state of
 * the objects around it (in flight, parked, written lately), whether it goes and why not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { L4VirtualService, L7VirtualService, Pool } from '../../../src/model/types.ts';
import { type GateState, gate, gateChanges } from '../../../src/controller/pass-gates.ts';
import type { Change } from '../../../src/plan/diff.ts';
import * as kit from '../../support/model.ts';

const pool = (name: string, port = 1): Pool => kit.pool(name, [kit.member('192.0.2.1', port)]);
const l4 = (name: string, p: string): L4VirtualService => kit.l4(name, p);
const https = (name: string, cert: string): L7VirtualService =>
  kit.https(name, [cert], [], { defaultPool: 'p' });
const cert = kit.certificate('crt');

const C = {
  poolCreate: { op: 'create', kind: 'pool', name: 'p', desired: pool('p') },
  poolUpdate: { op: 'update', kind: 'pool', name: 'p', desired: pool('p', 2), observed: pool('p') },
  poolDelete: { op: 'delete', kind: 'pool', name: 'p', observed: pool('p') },
  vsCreate: { op: 'create', kind: 'virtualService', name: 'v', desired: l4('v', 'p') },
  vsDelete: { op: 'delete', kind: 'virtualService', name: 'v', observed: l4('v', 'p') },
  httpsCreate: { op: 'create', kind: 'virtualService', name: 'h', desired: https('h', 'crt') },
  certDelete: { op: 'delete', kind: 'certificate', name: 'crt', observed: cert },
} satisfies Record<string, Change>;

const base: GateState = {
  inflight: new Set(),
  parked: new Map(),
  poolWrites: new Map(),
  now: 1000,
  poolIntervalMs: 100,
};
const st = (x: Partial<GateState>): GateState => ({ ...base, ...x });

describe('pass gates', () => {
  const table: [string, Change, GateState, string][] = [
    ['nothing around it: goes', C.poolUpdate, base, 'go'],
    ['the object itself in flight', C.poolUpdate, st({ inflight: new Set(['pool/p']) }), 'inflight'],
    [
      'a virtual service whose pool is in flight',
      C.vsCreate,
      st({ inflight: new Set(['pool/p']) }),
      'dependsOnInflight',
    ],
    [
      'a virtual service whose certificate is in flight',
      C.httpsCreate,
      st({ inflight: new Set(['certificate/crt']) }),
      'dependsOnInflight',
    ],
    ['a virtual service delete, its pool in flight', C.vsDelete, st({ inflight: new Set(['pool/p']) }), 'go'],
    [
      'a pool delete while a virtual service is in flight',
      C.poolDelete,
      st({ inflight: new Set(['virtualService/x']) }),
      'dependsOnInflight',
    ],
    [
      'a certificate delete while a virtual service is in flight',
      C.certDelete,
      st({ inflight: new Set(['virtualService/x']) }),
      'dependsOnInflight',
    ],
    [
      'a pool create while a virtual service is in flight',
      C.poolCreate,
      st({ inflight: new Set(['virtualService/x']) }),
      'go',
    ],
    ['another pool in flight', C.poolUpdate, st({ inflight: new Set(['pool/q']) }), 'go'],
    [
      'parked with the same desired state',
      C.poolUpdate,
      st({ parked: new Map([['pool/p', pool('p', 2)]]) }),
      'parked',
    ],
    [
      'parked with another desired state: tried again',
      C.poolUpdate,
      st({ parked: new Map([['pool/p', pool('p', 3)]]) }),
      'go',
    ],
    [
      'a parked delete asked again',
      C.vsDelete,
      st({ parked: new Map([['virtualService/v', 'delete']]) }),
      'parked',
    ],
    [
      'a pool update 40 ms after its last write',
      C.poolUpdate,
      st({ poolWrites: new Map([['p', 960]]) }),
      'poolInterval',
    ],
    [
      'a pool update 100 ms after its last write',
      C.poolUpdate,
      st({ poolWrites: new Map([['p', 900]]) }),
      'go',
    ],
    [
      'a pool create is never held by the interval',
      C.poolCreate,
      st({ poolWrites: new Map([['p', 990]]) }),
      'go',
    ],
    [
      'a pool delete is never held by the interval',
      C.poolDelete,
      st({ poolWrites: new Map([['p', 990]]) }),
      'go',
    ],
    [
      'in flight wins over parked',
      C.poolUpdate,
      st({ inflight: new Set(['pool/p']), parked: new Map([['pool/p', pool('p', 2)]]) }),
      'inflight',
    ],
  ];
  for (const [name, change, state, verdict] of table)
    it(name, () => assert.equal(gate(change, state).gate, verdict));

  it('the interval says how long to wait', () => {
    assert.deepEqual(gate(C.poolUpdate, st({ poolWrites: new Map([['p', 960]]) })), {
      gate: 'poolInterval',
      waitMs: 60,
    });
  });

  it('a batch: what goes, what is held, what is unparked, the soonest retry, and whether a release should start a pass', () => {
    const g = gateChanges([C.poolUpdate, C.vsCreate, { ...C.poolCreate, name: 'q', desired: pool('q') }], {
      ...base,
      poolWrites: new Map([['p', 950]]),
      inflight: new Set(['pool/p']),
      parked: new Map([['pool/q', pool('q', 9)]]),
    });
    assert.deepEqual(
      g.go.map((c) => c.name),
      ['q'],
    );
    assert.deepEqual([...g.held].sort(), ['pool/p', 'virtualService/v']);
    assert.deepEqual(g.unpark, ['pool/q']);
    assert.equal(g.waitsOnFlight, true);
    assert.equal(g.deferredMs, undefined, 'the in-flight pool waits for its release, not for the interval');
    const later = gateChanges([C.poolUpdate], { ...base, poolWrites: new Map([['p', 950]]) });
    assert.equal(later.deferredMs, 50);
    assert.equal(later.waitsOnFlight, false);
  });
});
