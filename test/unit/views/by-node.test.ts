import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { byNode, renderTable, stateDocumentSchema } from '../../../src/views/by-node.ts';

const doc = stateDocumentSchema.parse({
  apiVersion: 'npl-lb.io/v1',
  kind: 'LoadBalancerState',
  clusterName: 'c1',
  adapter: 'memory',
  generatedAt: '2026-11-22T00:00:00.000Z',
  lastSync: null,
  virtualServices: [
    {
      kind: 'l4',
      name: 'c1--default-web-TCP-80',
      vip: '192.0.2.7',
      port: 80,
      protocol: 'TCP',
      pool: 'c1--default-web-http',
      source: 'default/web',
      lastApply: null,
    },
    {
      kind: 'l7',
      name: 'c1--ingress-npl',
      vip: '192.0.2.9',
      port: 80,
      ingressClass: 'npl',
      routes: [{ host: 'a', path: '/', pathType: 'Prefix', pool: 'c1--shop-api-http', source: 'shop/a' }],
      defaultPool: null,
      lastApply: null,
    },
  ],
  pools: [
    {
      name: 'c1--default-web-http',
      protocol: 'TCP',
      health: 'tcp',
      service: 'default/web',
      servicePort: 'http',
      members: [
        { address: '192.0.2.202', port: 61000, node: 'n2', pod: 'default/web-2', enabled: false },
        {
          address: '192.0.2.201',
          port: 61000,
          node: 'n1',
          pod: 'default/web-1',
          enabled: true,
          gate: { status: 'False', reason: 'MemberNotApplied' },
        },
      ],
      lastApply: { ok: true, op: 'update', at: '2026-11-22T00:00:00.000Z' },
    },
    {
      name: 'c1--shop-api-http',
      protocol: 'TCP',
      health: 'http',
      service: 'shop/api',
      servicePort: 'http',
      members: [{ address: '192.0.2.201', port: 61001, node: 'n1', pod: 'shop/api-1', enabled: true }],
      lastApply: {
        ok: false,
        op: 'update',
        at: '2026-11-22T00:00:00.000Z',
        error: { code: 'Unavailable', message: 'busy', terminal: false },
      },
    },
  ],
  conflicts: [],
});

describe('pools by node', () => {
  it('groups members under their nodes with pool, virtual services, state and last apply; filters by node and namespace', () => {
    const view = byNode(doc);
    assert.deepEqual(
      view.map((n) => [n.node, n.members.map((m) => `${m.address}:${m.port} ${m.state} ${m.lastApply}`)]),
      [
        ['n1', ['192.0.2.201:61000 enabled ok', '192.0.2.201:61001 enabled failed']],
        ['n2', ['192.0.2.202:61000 draining ok']],
      ],
    );
    assert.deepEqual(view[0]!.members[0]!.virtualServices, ['c1--default-web-TCP-80 (192.0.2.7:80)']);
    assert.deepEqual(view[0]!.members[1]!.virtualServices, ['c1--ingress-npl (192.0.2.9:80)']);
    assert.equal(view[0]!.members[1]!.lastError, 'Unavailable: busy');
    assert.deepEqual(
      byNode(doc, { node: 'n2' }).map((n) => n.node),
      ['n2'],
    );
    assert.deepEqual(
      byNode(doc, { namespace: 'shop' }).flatMap((n) => n.members.map((m) => m.pod)),
      ['shop/api-1'],
    );
    const table = renderTable(view).split('\n');
    assert.match(table[0]!, /^NODE\s+MEMBER\s+POD\s+STATE\s+HEALTH\s+POOL\s+VIRTUAL SERVICES\s+LAST APPLY$/);
    assert.match(
      table[3]!,
      /^n2\s+192\.0\.2\.202:61000\s+default\/web-2\s+draining\s+unknown\s+c1--default-web-http/,
    );
    const wide = renderTable(view, true).split('\n');
    assert.match(wide[0]!, /\sHEALTH\s+DEVICE ADMIN\s+HEALTH DETAIL\s+HEALTH READ\s+READINESS GATE\s+POOL\s/);
    // A gated Pod's gate (issue 47 item 7); '-' for a Pod that lists none.
    assert.equal(view[0]!.members[0]!.gate, 'False (MemberNotApplied)');
    assert.equal(view[1]!.members[0]!.gate, null);
    assert.match(
      wide.find((l) => l.includes('default/web-1'))!,
      /\sFalse \(MemberNotApplied\)\s+c1--default-web-http/,
    );
  });

  it('refuses a document that is not a state document', () => {
    assert.equal(stateDocumentSchema.safeParse({ kind: 'Pod' }).success, false);
  });
});
