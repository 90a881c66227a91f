import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byNode, type StateInput } from '../../../src/views/by-node.ts';
import { impact, renderImpact } from '../../../src/views/impact.ts';
import { virtualServices } from '../../../src/views/virtual-services.ts';

type M = StateInput['pools'][number]['members'][number];
const m = (node: string, port: number, extra: Partial<M> = {}): M => ({
  address: `192.0.2.${node.slice(1)}`,
  port,
  node,
  pod: `default/p-${node}-${port}`,
  enabled: true,
  ...extra,
});
const down = { state: 'down', admin: 'enabled', reason: 'L4CON', at: '2026-11-23T00:00:00.000Z' } as const;
const ok = { ok: true, at: '2026-11-23T00:00:00.000Z' };

const doc: StateInput = {
  virtualServices: [
    // web: 3 members on n1, n2, n3.
    { name: 'vs-web', kind: 'l4', vip: '192.0.2.100', port: 80, protocol: 'TCP', pool: 'web', lastApply: ok },
    // api: both serving members on n1 (the n2 one is draining, the n3 one is down).
    {
      name: 'vs-l7',
      kind: 'l7',
      vip: '192.0.2.101',
      port: 8080,
      routes: [{ host: 'a.example', path: '/', pool: 'api' }],
      defaultPool: 'web',
      lastApply: ok,
    },
    { name: 'vs-api', kind: 'l4', vip: '192.0.2.102', port: 81, pool: 'api', lastApply: ok },
    { name: 'vs-empty', kind: 'l4', vip: '192.0.2.103', port: 82, pool: 'empty', lastApply: ok },
    {
      name: 'vs-broken',
      kind: 'l4',
      vip: '192.0.2.104',
      port: 83,
      pool: 'web',
      lastApply: {
        ok: false,
        at: '2026-11-23T00:00:00.000Z',
        error: { code: 'Invalid', message: 'VIP refused' },
      },
    },
  ],
  pools: [
    { name: 'web', service: 'default/web', members: [m('n1', 1), m('n2', 1), m('n3', 1)], lastApply: ok },
    {
      name: 'api',
      service: 'shop/api',
      members: [m('n1', 2), m('n1', 3), m('n2', 2, { enabled: false }), m('n3', 2, { health: down })],
      lastApply: ok,
    },
    { name: 'empty', service: 'default/empty', members: [], lastApply: ok },
  ],
};

describe('impact of losing a node', () => {
  it('counts the pools of weighted routes and of TLS passthrough (SNI) routes too', () => {
    const split: StateInput = {
      virtualServices: [
        {
          name: 'vs-split',
          kind: 'l7',
          vip: '192.0.2.110',
          port: 80,
          routes: [
            {
              host: '',
              path: '/',
              pool: '',
              backends: [
                { pool: 'api', weight: 1 },
                { pool: null, weight: 1 },
              ],
            },
          ],
          lastApply: ok,
        },
        {
          name: 'vs-tls',
          kind: 'l4',
          vip: '192.0.2.111',
          port: 443,
          pool: '',
          sni: [{ host: '*.example.com', pool: 'web' }],
          lastApply: ok,
        },
        {
          name: 'vs-tlz-https',
          kind: 'l7',
          vip: '192.0.2.112',
          port: 443,
          protocol: 'HTTPS',
          routes: [{ host: 'a.example', path: '/', pool: 'web' }],
          lastApply: ok,
        },
      ],
      pools: doc.pools,
    };
    const views = virtualServices(split);
    assert.deepEqual(
      views.map((v) => `${v.name}: ${v.pools.join(',')}`),
      ['vs-split: api', 'vs-tls: web', 'vs-tlz-https: web'],
    );
    // The listener as a client meets it, and where each route sends.
    assert.deepEqual(
      views.map(
        (v) =>
          `${v.listeners.join()} ${v.routes.map((r) => `${r.host || '*'}${r.path} -> ${r.pool}`).join('; ')}`,
      ),
      ['HTTP/80 */ -> api x1, (500) x1', 'TLS/443 *.example.com -> web', 'HTTPS/443 a.example/ -> web'],
    );
    const n1 = byNode(split).find((n) => n.node === 'n1')!;
    assert.ok(n1.members.some((x) => x.virtualServices.some((l) => l.startsWith('vs-tls'))));
  });

  it('counts serving members (enabled and not down) per virtual service and flags the ones left with none', () => {
    const all = impact(doc);
    assert.deepEqual(
      all.map((n) => n.node),
      ['n1', 'n2', 'n3'],
    );
    const n1 = all[0]!;
    assert.equal(n1.noneLeft, 1);
    assert.deepEqual(
      n1.virtualServices.map((v) => [v.name, v.lose, v.of, v.left, v.noneLeft]),
      [
        ['vs-api', 2, 2, 0, true],
        ['vs-l7', 3, 5, 2, false],
        ['vs-broken', 1, 3, 2, false],
        ['vs-web', 1, 3, 2, false],
      ],
    );
    // n3's api member is down: losing n3 takes nothing from vs-api.
    assert.deepEqual(
      impact(doc, 'n3')[0]!.virtualServices.map((v) => v.name),
      ['vs-broken', 'vs-web', 'vs-l7'],
    );
    assert.deepEqual(impact(doc, 'nope'), []);
    const text = renderImpact(n1);
    assert.match(text, /^losing node n1: 4 virtual service\(s\) lose members, 1 would have none left\n/);
    assert.match(text, /\nvs-api\s+192\.0\.2\.102:81\s+2 of 2\s+NONE LEFT\n/);
  });

  it('a node whose members all serve nothing would take nothing', () => {
    const only = impact({
      virtualServices: [],
      pools: [{ name: 'p', service: 'a/b', members: [m('n9', 1)], lastApply: null }],
    });
    assert.deepEqual(only, [{ node: 'n9', virtualServices: [], noneLeft: 0 }]);
    assert.match(renderImpact(only[0]!), /would take no serving member/);
  });
});

describe('virtual services view', () => {
  it('puts the ones needing attention first, with the reason', () => {
    const v = virtualServices(doc);
    assert.deepEqual(
      v.map((x) => [x.name, x.problem]),
      [
        ['vs-broken', 'apply failed: Invalid: VIP refused'],
        ['vs-empty', 'no members'],
        ['vs-api', null],
        ['vs-l7', null],
        ['vs-web', null],
      ],
    );
    assert.deepEqual(
      v.filter((x) => x.applyFailed).map((x) => x.name),
      ['vs-broken'],
    );
    const l7 = v.find((x) => x.name === 'vs-l7')!;
    assert.deepEqual(l7.listeners, ['HTTP/8080']);
    assert.deepEqual(l7.pools, ['api', 'web']);
    assert.deepEqual(l7.members, { total: 7, serving: 5, down: 1 });
    assert.deepEqual(l7.routes, [{ host: 'a.example', path: '/', pool: 'api' }]);
  });

  it('a pool whose members are all down or draining has no serving member', () => {
    const v = virtualServices({
      virtualServices: [{ name: 'x', vip: '192.0.2.1', port: 1, pool: 'p', lastApply: ok }],
      pools: [
        {
          name: 'p',
          service: 'a/b',
          members: [m('n1', 1, { health: down }), m('n2', 1, { enabled: false })],
          lastApply: ok,
        },
      ],
    });
    assert.equal(v[0]!.problem, 'no serving member (1 down, 1 draining)');
  });

  it('the node view carries the device health apart from our intent', () => {
    const n3 = byNode(doc, { node: 'n3' })[0]!;
    const api = n3.members.find((x) => x.pool === 'api')!;
    assert.equal(api.state, 'enabled');
    assert.equal(api.health, 'down');
    assert.equal(api.healthReason, 'L4CON');
    assert.equal(n3.members.find((x) => x.pool === 'web')!.health, 'unknown');
  });
});
