/**
 * The state by pool (issue 35, item 7): each pool with its Service and port, the virtual services
 * in front and the object each serves, members by node with the down reason written out, and
 * what draining each node takes away (a draining member carries no weight).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { StateInput } from '../../../src/views/by-node.ts';
import { byPool } from '../../../src/views/by-pool.ts';

type M = StateInput['pools'][number]['members'][number];
const m = (node: string, last: number, extra: Partial<M> = {}): M => ({
  address: `192.0.2.${last}`,
  port: 61000,
  node,
  pod: `default/web-${last}`,
  enabled: true,
  ...extra,
});
const at = '2026-11-26T00:00:00.000Z';
const ok = { ok: true, at };

const doc = {
  virtualServices: [
    {
      name: 'c1--default-web-TCP-80',
      kind: 'l4',
      vip: '192.0.2.100',
      port: 80,
      pool: 'web',
      source: 'default/web',
      lastApply: ok,
    },
    {
      name: 'c1--ingress-npl',
      kind: 'l7',
      vip: 'fd00::1',
      port: 8080,
      routes: [{ host: 'a.example', path: '/', pool: 'web' }],
      ingressClass: 'npl',
      lastApply: ok,
    },
  ],
  pools: [
    {
      name: 'web',
      service: 'default/web',
      servicePort: 'http',
      members: [
        m('n2', 3, { health: { state: 'down', admin: 'enabled', reason: 'L4CON: Connection refused', at } }),
        m('n1', 1, { health: { state: 'up', admin: 'enabled', at } }),
        m('n1', 2, { enabled: false }),
      ],
      lastApply: ok,
    },
  ],
} as unknown as StateInput;

it('a pool: its Service and port, what is in front and what that serves, members with the down reason, the drain share', () => {
  const [p] = byPool(doc);
  assert.equal(p!.pool, 'web');
  assert.deepEqual([p!.service, p!.servicePort], ['default/web', 'http']);
  assert.deepEqual(p!.virtualServices, [
    { name: 'c1--default-web-TCP-80', at: '192.0.2.100:80', serves: 'Service default/web' },
    { name: 'c1--ingress-npl', at: '[fd00::1]:8080', serves: 'IngressClass npl' },
  ]);
  assert.deepEqual(
    p!.members.map((x) => [x.node, x.address, x.state, x.health, x.healthReason]),
    [
      ['n1', '192.0.2.1', 'enabled', 'up', null],
      ['n1', '192.0.2.2', 'draining', 'unknown', null],
      ['n2', '192.0.2.3', 'enabled', 'down', 'L4CON: Connection refused'],
    ],
  );
  // Two members serve (the draining one carries no weight): draining n1 takes 1 of 2, n2 1 of 2.
  assert.deepEqual(p!.drain, [
    { node: 'n1', serving: 1, of: 2 },
    { node: 'n2', serving: 1, of: 2 },
  ]);
});
