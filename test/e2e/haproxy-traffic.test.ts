/**
 * End to end with real traffic: the sandbox, agents forwarding in userspace on loopback node IPs,
 * Pods that are real HTTP servers, the controller, and a real HAProxy driven by either transport
 * (the runtime socket, or the Data Plane API simulator in front of it). Requests to the L4 VIP and
 * to the Ingress host reach the Pods; scaling 3 -> 20 -> 3 under a bounded request loop loses no
 * request (Pods drain before they go) and reloads HAProxy not once.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Agent, request } from 'undici';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const NODES = ['127.0.13.1', '127.0.13.2', '127.0.13.3'];
const FINALIZER = 'test.npl-lb.io/hold';

async function podServer(t: TestContext, ip: string, name: string): Promise<Server> {
  const server = createServer((_req, res) => res.end(`pod ${name}\n`));
  await new Promise<void>((r) => server.listen(8080, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return server;
}

type Transport = 'runtime' | 'dataplane';

/** The adapter under test, and how many times its HAProxy has reloaded. */
async function haproxyAdapter(
  t: TestContext,
  transport: Transport,
): Promise<{ adapter: LoadBalancerAdapter; reloads: () => number }> {
  if (transport === 'runtime') {
    const adapter = (await startHaproxy(t)).adapter('e2e');
    return { adapter, reloads: () => adapter.stats.reloads };
  }
  const rig = await startDataplaneSim(t);
  // 20 slots per backend step: the scale-out to 20 Pods fits without growing.
  const adapter = rig.adapter('e2e', 'v3', { slots: 20, healthChecks: true, transparentBinds: false });
  return { adapter, reloads: () => rig.sim.stats.reloads };
}

const scenario = (transport: Transport) => async (t: TestContext) => {
  assertNoListeners('127.0.31.', [18080, 18081]);
  const { kc, url } = await useSandbox(t);
  const c = new Cluster(kc);
  for (const [i, ip] of NODES.entries()) {
    await c.node(`n${i + 1}`, { internal: [ip] });
    await startAgent(t, kc, {
      nodeName: `n${i + 1}`,
      backend: new UserspaceBackend(),
      range: { start: 44000, end: 44099 },
    });
  }
  const { adapter, reloads } = await haproxyAdapter(t, transport);
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: e2e\nvip: {cidrs: [127.0.31.0/24]}\ningressHttpPort: 18081\n',
    ),
    adapter,
    events: { record: async () => {} },
    coalesceMs: 20,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();

  await api(url, 'POST', '/apis/networking.k8s.io/v1/ingressclasses', {
    metadata: { name: 'npl' },
    spec: { controller: 'npl-lb.io/ingress-controller' },
  });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 18080, targetPort: 8080 }],
  });
  await c.patchService('web', { spec: { loadBalancerClass: 'npl-lb.io/lb' } });
  await api(url, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
    metadata: { name: 'web' },
    spec: {
      ingressClassName: 'npl',
      rules: [
        {
          host: 'web.example',
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { number: 18080 } } },
              },
            ],
          },
        },
      ],
    },
  });
  const pod = async (i: number) => {
    const name = `web-${i}`;
    const ip = `127.0.21.${i}`;
    await podServer(t, ip, name);
    await c.pod(name, { node: `n${(i % 3) + 1}`, ips: [ip], ports: [{ containerPort: 8080 }] });
    await c.patchPod(name, { metadata: { finalizers: [FINALIZER] } });
    await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  };
  for (let i = 1; i <= 3; i++) await pod(i);

  const dispatcher = new Agent({ connections: 4 });
  t.after(() => dispatcher.close());
  const vip = async (path: string) => {
    const r = await api(url, 'GET', path);
    return ((r.body.status as { loadBalancer?: { ingress?: { ip: string }[] } }).loadBalancer?.ingress ??
      [])[0]?.ip;
  };
  let l4 = '';
  let l7 = '';
  await eventually(
    async () => {
      l4 = (await vip('/api/v1/namespaces/default/services/web')) ?? '';
      l7 = (await vip('/apis/networking.k8s.io/v1/namespaces/default/ingresses/web')) ?? '';
      return l4 !== '' && l7 !== '';
    },
    15_000,
    'VIPs published',
  );
  const get = async (target: string, host?: string) => {
    const r = await request(target, {
      dispatcher,
      // The L4 VIP balances connections (mode tcp), so each request opens its own.
      reset: true,
      headers: host ? { host } : {},
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    const body = await r.body.text();
    return { status: r.statusCode, body };
  };
  await eventually(
    async () => (await get(`http://${l4}:18080/`).catch(() => ({ status: 0 }))).status === 200,
    15_000,
    'traffic through the L4 VIP',
  );
  // The Ingress's VIP is published once its virtual service exists; its L7 pool may be one pass
  // behind (members are written per pool), so the first 200 is awaited, then checked.
  let viaIngress = { status: 0, body: '' };
  await eventually(
    async () => {
      viaIngress = await get(`http://${l7}:18081/`, 'web.example').catch(() => ({ status: 0, body: '' }));
      return viaIngress.status === 200;
    },
    15_000,
    'traffic through the Ingress VIP',
  );
  assert.match(viaIngress.body, /^pod web-[123]\n$/);

  // A bounded request loop runs through the whole scale-out and scale-in.
  let stop = false;
  const results = { ok: 0, failed: [] as string[], pods: new Set<string>() };
  const loop = (async () => {
    for (let n = 0; n < 20_000 && !stop; n++) {
      try {
        const r = await get(`http://${l4}:18080/`);
        if (r.status === 200) {
          results.ok++;
          results.pods.add(r.body.trim());
        } else results.failed.push(`status ${r.status}`);
      } catch (err) {
        results.failed.push(String(err));
      }
    }
  })();
  const reloadsBefore = reloads();
  const members = () =>
    ctl.state.document().pools.find((p) => p.name === 'e2e--default-web-http')?.members ?? [];
  for (let i = 4; i <= 20; i++) await pod(i);
  await eventually(() => members().filter((m) => m.enabled).length === 20, 20_000, '20 enabled members');
  await eventually(() => results.pods.size >= 15, 20_000, 'traffic spread over the new Pods');
  // Scale in: Pods 4..20 terminate (held by a finalizer), drain, then go.
  for (let i = 4; i <= 20; i++) await c.core.deleteNamespacedPod({ name: `web-${i}`, namespace: 'default' });
  await eventually(() => members().filter((m) => !m.enabled).length === 17, 20_000, '17 draining members');
  await new Promise((r) => setTimeout(r, 500));
  for (let i = 4; i <= 20; i++) await c.patchPod(`web-${i}`, { metadata: { finalizers: null } });
  await eventually(() => members().length === 3, 20_000, 'back to 3 members');
  await new Promise((r) => setTimeout(r, 500));
  stop = true;
  await loop;
  assert.deepEqual(
    results.failed.slice(0, 5),
    [],
    `${results.failed.length} of ${results.ok + results.failed.length} requests failed`,
  );
  assert.ok(results.ok > 50, `requests made: ${results.ok}`);
  assert.equal(reloads(), reloadsBefore, 'scaling reloaded HAProxy');
  for (let i = 1; i <= 3; i++) await c.patchPod(`web-${i}`, { metadata: { finalizers: null } });
};

describe('HAProxy with real traffic', { skip: haproxyMissing() }, () => {
  const name = 'L4 and Ingress traffic reach the Pods; 3 -> 20 -> 3 loses no request and reloads nothing';
  it(`${name} (runtime socket)`, scenario('runtime'));
  it(`${name} (Data Plane API v3)`, scenario('dataplane'));
});
