/**
 * Persistence on BIG-IP, where AS3 keeps it on the virtual server: an L4 service takes
 * `source-address` when its pool asks SourceIP and none otherwise (AS3's own default would persist
 * every TCP service); an HTTP service none, its rules a `persist` action each for the pools that
 * ask it (a cookie named per pool, as HAProxy names it), `disable` for the others and a last rule
 * for the default pool; a weighted rule over pools asking different persistence, or TLS passthrough
 * to such pools, refused for that virtual service alone. Read back after a restart unchanged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { renderVirtualService } from '../../../../adapters/f5/declaration.ts';
import { persistenceCookie } from '../../../../src/model/persistence.ts';
import type { L4VirtualService, L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';

type Json = Record<string, unknown>;
const pool = (name: string, extra: Partial<Pool> = {}): Pool => ({
  name,
  protocol: 'TCP',
  health: 'http',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/web-1', enabled: true }],
  service: 'default/web',
  servicePort: 'http',
  ...extra,
});
const l4 = (name: string, p: string): L4VirtualService => ({
  kind: 'l4',
  name,
  vip: '192.0.2.10',
  port: 80,
  protocol: 'TCP',
  pool: p,
  source: 'default/web',
});
const l7 = (routes: L7VirtualService['routes'], defaultPool?: string): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl',
  routes,
  defaultPool,
});
const route = (path: string, p: string) => ({
  host: 'a.example',
  path,
  pathType: 'Prefix' as const,
  pool: p,
  source: 'default/ing',
});

describe('F5: persistence on the virtual server', () => {
  const sticky = pool('sticky', { persistence: 'Cookie' });
  const byIp = pool('byip', { persistence: 'SourceIP', health: 'tcp' });
  const plain = pool('plain');
  const pools = new Map([sticky, byIp, plain].map((p) => [p.name, p]));

  it('L4: source-address where the pool asks SourceIP, none otherwise', () => {
    const svc = (p: string) => renderVirtualService(l4('v', p), 'c1', undefined, pools).v as Json;
    assert.deepEqual(svc('byip').persistenceMethods, ['source-address']);
    assert.deepEqual(svc('plain').persistenceMethods, []);
  });

  it('HTTP: a persist action per rule, disable on the others and for the default pool', () => {
    const objects = renderVirtualService(
      l7([route('/cart', 'sticky'), route('/api', 'plain')], 'plain'),
      'c1',
      undefined,
      pools,
    );
    assert.deepEqual((objects['c1--ingress-npl'] as Json).persistenceMethods, []);
    const rules = (objects['c1--ingress-npl_policy'] as { rules: { name: string; actions: Json[] }[] }).rules;
    const to = (p: string) =>
      rules.filter((r) => r.actions.some((a) => JSON.stringify(a.select ?? {}).includes(`"${p}"`)));
    for (const r of to('sticky'))
      assert.deepEqual(
        r.actions.find((a) => a.type === 'persist'),
        {
          type: 'persist',
          event: 'request',
          cookieInsert: { name: persistenceCookie('sticky'), expiry: '1d' },
        },
        r.name,
      );
    for (const r of to('plain'))
      assert.deepEqual(
        r.actions.find((a) => a.type === 'persist'),
        { type: 'persist', event: 'request', disable: {} },
        r.name,
      );
    const persistOf = (name: string) =>
      rules.find((r) => r.name === name)!.actions.find((a) => a.type === 'persist');
    assert.deepEqual(persistOf('default_pool'), { type: 'persist', event: 'request', disable: {} });
    // Without any persistence, no persist action and no extra rule.
    const none = renderVirtualService(l7([route('/api', 'plain')], 'plain'), 'c1', undefined, pools);
    const noneRules = (none['c1--ingress-npl_policy'] as { rules: { name: string; actions: Json[] }[] })
      .rules;
    assert.ok(
      noneRules.every((r) => r.name !== 'default_pool' && r.actions.every((a) => a.type !== 'persist')),
    );
  });

  it('on the simulator: applied and read back after a restart; a split over pools asking differently refused alone', async (t) => {
    const sim = new BigIpSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const adapter = () =>
      new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin', taskPollMs: 10 });
    const a = adapter();
    t.after(() => a.close());
    await a.observe();
    const good = l7([route('/cart', 'sticky'), route('/api', 'plain')], 'plain');
    const mixed: L7VirtualService = {
      ...l7([
        {
          ...route('/', ''),
          backends: [
            { pool: 'sticky', weight: 1 },
            { pool: 'plain', weight: 1 },
          ],
        },
      ]),
      name: 'c1--ingress-other',
      vip: '192.0.2.21',
    };
    const l4vs = l4('c1--default-web-TCP-80', 'byip');
    const results = await a.apply([
      ...[sticky, byIp, plain].map((p) => ({
        op: 'create' as const,
        kind: 'pool' as const,
        name: p.name,
        desired: p,
      })),
      { op: 'create', kind: 'virtualService', name: good.name, desired: good },
      { op: 'create', kind: 'virtualService', name: mixed.name, desired: mixed },
      { op: 'create', kind: 'virtualService', name: l4vs.name, desired: l4vs },
    ]);
    assert.deepEqual(
      results.filter((r) => !r.ok).map((r) => [r.change.name, r.error?.code, r.error?.message]),
      [
        [
          mixed.name,
          'Invalid',
          `a weighted rule of ${mixed.name} (default/ing) splits over pools that ask different persistence; BIG-IP keeps one per request`,
        ],
      ],
    );
    const b = adapter();
    t.after(() => b.close());
    const back = await b.observe();
    assert.deepEqual(back.owned.pools.map((p) => [p.name, p.persistence]).sort(), [
      ['byip', 'SourceIP'],
      ['plain', undefined],
      ['sticky', 'Cookie'],
    ]);
    assert.deepEqual(back.owned.virtualServices.map((v) => v.name).sort(), [l4vs.name, good.name].sort());
  });
});
