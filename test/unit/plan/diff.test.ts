import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HttpRoute, LbState } from '../../../src/model/types.ts';
import * as kit from '../../support/model.ts';
import { type Observed, plan } from '../../../src/plan/diff.ts';

const pool = (name: string, ports: number[]) =>
  kit.pool(
    name,
    ports.map((port) => kit.member('192.0.2.1', port)),
  );
const vs = (name: string, p: string) => kit.l4(name, p);
const cert = (name: string, fingerprint = 'AA') => kit.certificate(name, { fingerprint });
const route = (extra: Partial<HttpRoute> = {}) => kit.route(extra);
const https = (certs: string[], routes: HttpRoute[] = [route()]) => kit.https('v-https', certs, routes);
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
    [
      'idempotency with certificates and an HTTPS virtual service',
      { pools: [pool('p', [1])], virtualServices: [https(['c1'])], certificates: [cert('c1')] },
      observed({ pools: [pool('p', [1])], virtualServices: [https(['c1'])], certificates: [cert('c1')] }),
      [],
    ],
    [
      'certificates before the virtual services that serve them, after pools',
      { pools: [pool('p', [1])], virtualServices: [https(['c1'])], certificates: [cert('c1')] },
      observed({ pools: [], virtualServices: [], certificates: [] }),
      ['create pool p', 'create certificate c1', 'create virtualService v-https'],
    ],
    [
      'rotation is a certificate update in place; the virtual service is untouched',
      { pools: [pool('p', [1])], virtualServices: [https(['c1'])], certificates: [cert('c1', 'BB')] },
      observed({
        pools: [pool('p', [1])],
        virtualServices: [https(['c1'])],
        certificates: [cert('c1', 'AA')],
      }),
      ['update certificate c1'],
    ],
    [
      'certificates go after the virtual services that served them',
      { pools: [], virtualServices: [] },
      observed({ pools: [pool('p', [1])], virtualServices: [https(['c1'])], certificates: [cert('c1')] }),
      ['delete virtualService v-https', 'delete certificate c1', 'delete pool p'],
    ],
    [
      'route order does not matter, precedence does',
      {
        pools: [pool('p', [1])],
        virtualServices: [
          https(['c1'], [route({ path: '/b', order: 2 }), route({ path: '/a', order: 1, method: 'GET' })]),
        ],
        certificates: [cert('c1')],
      },
      observed({
        pools: [pool('p', [1])],
        virtualServices: [
          https(['c1'], [route({ path: '/a', order: 1, method: 'GET' }), route({ path: '/b', order: 2 })]),
        ],
        certificates: [cert('c1')],
      }),
      [],
    ],
    [
      'a changed match, filter or weight is a virtual service update',
      {
        pools: [pool('p', [1])],
        virtualServices: [
          https(
            ['c1'],
            [
              route({
                backends: [
                  { pool: 'p', weight: 80 },
                  { pool: null, weight: 20 },
                ],
              }),
            ],
          ),
        ],
        certificates: [cert('c1')],
      },
      observed({
        pools: [pool('p', [1])],
        virtualServices: [
          https(
            ['c1'],
            [
              route({
                backends: [
                  { pool: 'p', weight: 90 },
                  { pool: null, weight: 10 },
                ],
              }),
            ],
          ),
        ],
        certificates: [cert('c1')],
      }),
      ['update virtualService v-https'],
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

describe('plan: objects the device holds otherwise than we wrote them', () => {
  it('a pool reported drifted is updated though it reads as wanted; the others are equal', () => {
    const p = kit.pool('c1--web-80', [kit.member('192.0.2.1', 61000)], { service: 'default/web' });
    const q = kit.pool('c1--api-80', [kit.member('192.0.2.2', 61000)], { service: 'default/api' });
    const desired: LbState = kit.state([p, q], []);
    const observed: Observed = {
      owned: { pools: [structuredClone(p), structuredClone(q)], virtualServices: [] },
      foreign: [],
      drifted: [{ kind: 'pool', name: 'c1--web-80' }],
    };
    assert.deepEqual(
      plan(desired, observed).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
      ['update pool c1--web-80'],
    );
    assert.deepEqual(plan(desired, { ...observed, drifted: [] }).changes, [], 'not drifted: nothing to do');
  });
});
