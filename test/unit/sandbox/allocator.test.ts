/**
 * Service cluster IPs and node ports at scale: a configurable node port range
 * (--service-node-port-range), allocations that do not slow down as Services pile up, ports freed
 * on delete and reused, and exhaustion answered as the real API server does (422, not 500).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePortRange } from '../../../src/sandbox/allocator.ts';
import { parseSandboxFlags } from '../../../src/main/sandbox.ts';
import { api, useSandbox } from '../../support/sandbox.ts';

const SVCS = '/api/v1/namespaces/default/services';
const lb = (name: string, ports = 1, extra: Record<string, unknown> = {}) => ({
  metadata: { name },
  spec: {
    type: 'LoadBalancer',
    selector: { app: name },
    ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 80 + i, ...extra })),
  },
});

describe('sandbox Service allocations', () => {
  it('--service-node-port-range is parsed as kube-apiserver’s', () => {
    assert.deepEqual(parsePortRange('30000-32767'), { start: 30000, end: 32767 });
    assert.deepEqual(
      parseSandboxFlags(['--service-node-port-range', '40000-40009'])['service-node-port-range'],
      {
        start: 40000,
        end: 40009,
      },
    );
    for (const bad of ['30000', '2-1', '0-5', '1-70000', 'a-b'])
      assert.equal(parsePortRange(bad), undefined, bad);
    assert.throws(() => parseSandboxFlags(['--service-node-port-range', '9-1']), /service-node-port-range/);
  });

  it('node ports come from the configured range; a full range is a 422 naming the port; a delete frees it', async (t) => {
    const { url } = await useSandbox(t, { nodePortRange: { start: 40000, end: 40003 } });
    const made = await api(url, 'POST', SVCS, lb('a', 3));
    assert.equal(made.status, 201);
    const ports = (made.body.spec as { ports: { nodePort: number }[] }).ports.map((p) => p.nodePort);
    assert.deepEqual(ports.sort(), [40000, 40001, 40002]);
    const full = await api(url, 'POST', SVCS, lb('b', 2));
    assert.equal(full.status, 422);
    assert.equal(full.body.reason, 'Invalid');
    assert.equal(
      full.body.message,
      'Service "b" is invalid: spec.ports[1].nodePort: Internal error: failed to allocate a nodePort: range is full',
    );
    const outside = await api(url, 'POST', SVCS, lb('c', 1, { nodePort: 30080 }));
    assert.equal(outside.status, 422);
    assert.match(
      String(outside.body.message),
      /provided port is not in the valid range\. The range of valid ports is 40000-40003/,
    );
    const taken = await api(url, 'POST', SVCS, lb('d', 1, { nodePort: 40001 }));
    assert.equal(taken.status, 422);
    assert.match(String(taken.body.message), /provided port is already allocated/);
    assert.equal((await api(url, 'DELETE', `${SVCS}/a`)).status, 200);
    const reused = await api(url, 'POST', SVCS, lb('b', 2));
    assert.equal(reused.status, 201, 'freed ports are handed out again');
    // An update keeps the object's own ports.
    const again = await api(
      url,
      'PATCH',
      `${SVCS}/b`,
      { metadata: { labels: { x: 'y' } } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(again.status, 200);
  });

  it('5,000 LoadBalancer Services: every one gets a distinct cluster IP and node port, at a flat cost', async (t) => {
    const { url } = await useSandbox(t, { nodePortRange: { start: 20000, end: 29999 } });
    const ips = new Set<string>();
    const ports = new Set<number>();
    const timings: number[] = [];
    for (let i = 0; i < 5000; i++) {
      const t0 = performance.now();
      const r = await api(url, 'POST', SVCS, lb(`s${i}`));
      timings.push(performance.now() - t0);
      assert.equal(r.status, 201, `service ${i}: ${JSON.stringify(r.body).slice(0, 200)}`);
      const spec = r.body.spec as { clusterIP: string; ports: { nodePort: number }[] };
      ips.add(spec.clusterIP);
      ports.add(spec.ports[0]!.nodePort);
    }
    assert.equal(ips.size, 5000);
    assert.equal(ports.size, 5000);
    // Time is reported, not asserted (the bench measures it): the last thousand should cost what
    // the first thousand did, where a scan of every Service per create made them dearer.
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const first = median(timings.slice(0, 1000));
    const last = median(timings.slice(-1000));
    t.diagnostic(`median create: first 1,000 ${first.toFixed(2)} ms, last 1,000 ${last.toFixed(2)} ms`);
  });
});
