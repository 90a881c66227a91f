/**
 * `npl-lb pools --failed` and `-o wide` against a state document with a failed pool, served by a
 * throwaway HTTP server on loopback.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { runPools } from '../../../src/main/pools.ts';

const at = '2026-11-23T00:00:00.000Z';
const doc = {
  apiVersion: 'npl-lb.io/v1',
  kind: 'LoadBalancerState',
  clusterName: 'c1',
  adapter: 'memory',
  generatedAt: at,
  virtualServices: [
    {
      kind: 'l4',
      name: 'vs-ok',
      vip: '192.0.2.7',
      port: 80,
      pool: 'p-ok',
      lastApply: { ok: true, op: 'create', at },
    },
    {
      kind: 'l4',
      name: 'vs-bad',
      vip: '192.0.2.8',
      port: 81,
      pool: 'p-bad',
      lastApply: { ok: true, op: 'create', at },
    },
  ],
  pools: [
    {
      name: 'p-ok',
      service: 'default/ok',
      members: [
        { address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/ok-1', enabled: true, health: null },
      ],
      lastApply: { ok: true, op: 'update', at },
    },
    {
      name: 'p-bad',
      service: 'default/bad',
      members: [
        {
          address: '192.0.2.2',
          port: 61001,
          node: 'n2',
          pod: 'default/bad-1',
          enabled: true,
          health: { state: 'down', admin: 'maint', reason: 'L4CON', at },
        },
      ],
      lastApply: {
        ok: false,
        op: 'update',
        at,
        error: { code: 'Unavailable', message: 'timeout', terminal: false },
      },
    },
  ],
  conflicts: [],
};

describe('npl-lb pools --failed and -o wide', () => {
  it('shows only what failed, with the reason; wide adds the device view', async (t) => {
    const server = createServer((_req, res) => res.end(JSON.stringify(doc)));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    let out = '';
    await runPools(['--server', url, '--failed'], (s) => (out += s));
    assert.match(
      out,
      /^VIRTUAL SERVICE\s+VIP\s+PROBLEM\nvs-bad\s+192\.0\.2\.8:81\s+pool p-bad apply failed: Unavailable: timeout\n/,
    );
    assert.match(out, /\nn2\s+192\.0\.2\.2:61001\s+default\/bad-1\s+enabled\s+down\s+p-bad/);
    assert.doesNotMatch(out, /vs-ok|default\/ok-1/);
    out = '';
    await runPools(['--server', url, '-o', 'wide', '--node', 'n2'], (s) => (out += s));
    assert.match(out, /DEVICE ADMIN\s+HEALTH DETAIL\s+HEALTH READ\s+READINESS GATE/);
    assert.match(
      out,
      /\nn2\s+192\.0\.2\.2:61001\s+default\/bad-1\s+enabled\s+down\s+maint\s+L4CON\s+2026-11-23T00:00:00\.000Z\s+-\s+p-bad/,
    );
    out = '';
    await runPools(['--server', url, '--failed', '-o', 'json'], (s) => (out += s));
    const json = JSON.parse(out) as { virtualServices: { name: string }[]; nodes: { node: string }[] };
    assert.deepEqual(
      [json.virtualServices.map((v) => v.name), json.nodes.map((n) => n.node)],
      [['vs-bad'], ['n2']],
    );
  });
});
