/**
 * The v1.35 load-balancer status on the sandbox: our Services show `ipMode: Proxy` (or VIP, as
 * configured) and `ports[]`, with the reason on a port the load balancer refused; the VIP stays
 * while another port works. The sandbox defaults and validates those fields as the API server does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Ingress = { ip?: string; ipMode?: string; ports?: { port: number; protocol: string; error?: string }[] };
const statusOf = async (url: string, name: string): Promise<Ingress[]> => {
  const r = await api(url, 'GET', `/api/v1/namespaces/default/services/${name}`);
  return ((r.body.status as { loadBalancer?: { ingress?: Ingress[] } }).loadBalancer?.ingress ??
    []) as Ingress[];
};

describe('Service load-balancer status (v1.35 fields)', () => {
  it('ipMode Proxy, and a refused port carries its reason while the others serve', async (t) => {
    const { kc, url } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.1'] });
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
      ),
      adapter: new MemoryAdapter({
        owner: 'c1',
        fault: (ch) =>
          ch.kind === 'virtualService' && ch.name === 'c1--default-web-TCP-8443'
            ? { code: 'Invalid', message: 'port refused by the device', terminal: true }
            : undefined,
      }),
      events: { record: async () => {} },
      coalesceMs: 10,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();
    await c.service('web', {
      type: 'LoadBalancer',
      ports: [
        { name: 'http', port: 80, targetPort: 8080 },
        { name: 'https', port: 8443, targetPort: 8443 },
      ],
    });
    await c.pod('web-1', {
      node: 'n1',
      ips: ['10.244.0.1'],
      ports: [{ containerPort: 8080 }, { containerPort: 8443 }],
    });
    await c.patchPodStatus('web-1', {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            { podPort: 8080, nodeIP: '192.0.2.1', nodePort: 61000, protocol: 'tcp', ipFamily: 'IPv4' },
            { podPort: 8443, nodeIP: '192.0.2.1', nodePort: 61001, protocol: 'tcp', ipFamily: 'IPv4' },
          ]),
        },
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    let st: Ingress[] = [];
    await eventually(
      async () => (st = await statusOf(url, 'web')).length === 1 && st[0]!.ports?.length === 2,
      10_000,
      'status',
    );
    assert.equal(st[0]!.ipMode, 'Proxy');
    assert.match(st[0]!.ip!, /^192\.0\.2\./);
    assert.deepEqual(st[0]!.ports, [
      { port: 80, protocol: 'TCP' },
      { port: 8443, protocol: 'TCP', error: 'npl-lb.io/Invalid' },
    ]);
    // Nothing changes: no more status writes (the stored status is what we want).
    const rv = (await api(url, 'GET', '/api/v1/namespaces/default/services/web')).body.metadata as {
      resourceVersion: string;
    };
    await new Promise((r) => setTimeout(r, 300));
    await ctl.settled();
    const rv2 = (await api(url, 'GET', '/api/v1/namespaces/default/services/web')).body.metadata as {
      resourceVersion: string;
    };
    assert.equal(rv2.resourceVersion, rv.resourceVersion);
  });

  it('a UDP port on a load balancer without UDP is refused in words, never silently dropped', async (t) => {
    const { kc, url } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.1'] });
    const adapter = new MemoryAdapter({ owner: 'c1' });
    const caps = adapter.capabilities();
    adapter.capabilities = () => ({ ...caps, l4: { tcp: true, udp: false } });
    const events = new RecordingEvents();
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
      ),
      adapter,
      events,
      coalesceMs: 10,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();
    await c.service('dns', {
      type: 'LoadBalancer',
      ports: [
        { name: 'dns-tcp', port: 53, targetPort: 53, protocol: 'TCP' },
        { name: 'dns-udp', port: 53, targetPort: 53, protocol: 'UDP' },
      ],
    });
    let st: Ingress[] = [];
    await eventually(async () => (st = await statusOf(url, 'dns')).length === 1, 10_000, 'status');
    assert.deepEqual(st[0]!.ports, [
      { port: 53, protocol: 'TCP' },
      { port: 53, protocol: 'UDP', error: 'npl-lb.io/UnsupportedProtocol' },
    ]);
    assert.deepEqual([...adapter.device.virtualServices.keys()], ['c1--default-dns-TCP-53']);
    assert.ok(
      ![...adapter.device.pools.keys()].some((p) => p.includes('udp')),
      'its pool is not sent either',
    );
    await eventually(
      () => events.seen.some((e) => e.reason === 'UnsupportedByLoadBalancer'),
      5000,
      'UnsupportedByLoadBalancer Event',
    );
    const e = events.seen.find((x) => x.reason === 'UnsupportedByLoadBalancer')!;
    assert.deepEqual([e.target, e.type], ['default/dns', 'Warning']);
    assert.match(e.message, /^the memory load balancer does not support UDP: port 53\/UDP is not served$/);
  });

  it('the sandbox defaults ipMode to VIP beside an ip and refuses what the API server refuses', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 's' },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    });
    const put = (ingress: unknown) =>
      api(
        url,
        'PATCH',
        '/api/v1/namespaces/default/services/s/status',
        { status: { loadBalancer: { ingress } } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
    let r = await put([{ ip: '192.0.2.9' }]);
    assert.equal(r.status, 200);
    assert.deepEqual((r.body.status as { loadBalancer: unknown }).loadBalancer, {
      ingress: [{ ip: '192.0.2.9', ipMode: 'VIP' }],
    });
    r = await put([
      {
        ip: '192.0.2.9',
        ipMode: 'Proxy',
        ports: [{ port: 80, protocol: 'TCP', error: 'npl-lb.io/Invalid' }],
      },
    ]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    for (const [bad, field, message] of [
      [
        [{ ip: '192.0.2.9', ipMode: 'Direct' }],
        'status.loadBalancer.ingress[0].ipMode',
        /Unsupported value: "Direct": supported values: "Proxy", "VIP"/,
      ],
      [
        [{ hostname: 'lb.example', ipMode: 'VIP' }],
        'status.loadBalancer.ingress[0].ipMode',
        /may not be specified when `ip` is not set/,
      ],
      [
        [{ ip: '192.0.2.9', ports: [{ port: 80, protocol: 'TCP', error: 'not camel case' }] }],
        'status.loadBalancer.ingress[0].ports[0].error',
        /CamelCase/,
      ],
      [
        [{ ip: '192.0.2.9', ports: [{ port: 0, protocol: 'TCP' }] }],
        'status.loadBalancer.ingress[0].ports[0].port',
        /between 1 and 65535/,
      ],
    ] as const) {
      r = await put(bad);
      assert.equal(r.status, 422, JSON.stringify(bad));
      const causes = (r.body.details as { causes: { field: string; message: string }[] }).causes;
      assert.equal(causes[0]!.field, field);
      assert.match(causes[0]!.message, message);
    }
  });
});
