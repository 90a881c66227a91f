/**
 * Node maintenance on a real HAProxy, on both transports: the sandbox, three nodes with agents
 * forwarding in userspace, six Pods that are real HTTP servers, and a bounded request loop through
 * the L4 VIP, one connection per request. A node is labelled exclude-from-external-load-balancers:
 * its servers drain and go; then its Pods' servers stop and the Pods are deleted. Not one request
 * fails; unlabelled, the node's new Pods serve again.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { request } from 'undici';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { EXCLUDE_LABEL } from '../../src/source/maintenance.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const NODES = ['127.0.16.1', '127.0.16.2', '127.0.16.3'];

async function podServer(t: TestContext, ip: string, name: string): Promise<Server> {
  const server = createServer((_req, res) => res.end(`pod ${name}\n`));
  await new Promise<void>((r) => server.listen(8080, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return server;
}

type Transport = 'runtime' | 'dataplane';

const scenario =
  (transport: Transport) =>
  async (t: TestContext): Promise<void> => {
    assertNoListeners('127.0.33.', [18082]);
    const { kc, url } = await useSandbox(t);
    const c = new Cluster(kc);
    for (const [i, ip] of NODES.entries()) {
      await c.node(`n${i + 1}`, { internal: [ip] });
      await startAgent(t, kc, {
        nodeName: `n${i + 1}`,
        backend: new UserspaceBackend(),
        range: { start: 44100, end: 44199 },
      });
    }
    const adapter =
      transport === 'runtime'
        ? (await startHaproxy(t)).adapter('e2e', { healthChecks: true })
        : (await startDataplaneSim(t)).adapter('e2e', 'v3', {
            slots: 10,
            healthChecks: true,
            transparentBinds: false,
          });
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: e2e\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.33.0/24]}\ndrainSeconds: 1\n',
      ),
      adapter,
      events: { record: async () => {} },
      coalesceMs: 20,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 18082, targetPort: 8080 }],
    });
    const servers = new Map<string, Server>();
    const pod = async (i: number, node: string) => {
      const name = `web-${i}`;
      const ip = `127.0.22.${i}`;
      servers.set(name, await podServer(t, ip, name));
      await c.pod(name, { node, labels: { app: 'web' }, ips: [ip], ports: [{ containerPort: 8080 }] });
      await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    };
    for (let i = 1; i <= 6; i++) await pod(i, `n${((i - 1) % 3) + 1}`);
    let vip = '';
    await eventually(
      async () => {
        const r = await api(url, 'GET', '/api/v1/namespaces/default/services/web');
        vip =
          ((r.body.status as { loadBalancer?: { ingress?: { ip: string }[] } }).loadBalancer?.ingress ??
            [])[0]?.ip ?? '';
        return vip !== '';
      },
      15_000,
      'VIP published',
    );
    const get = async () => {
      const r = await request(`http://${vip}:18082/`, {
        reset: true,
        headersTimeout: 3000,
        bodyTimeout: 3000,
      });
      return { status: r.statusCode, body: (await r.body.text()).trim() };
    };
    const seen = () => new Set<string>();
    let pods = seen();
    await eventually(
      async () => {
        pods.add((await get().catch(() => ({ body: '' }))).body);
        return pods.size >= 6;
      },
      15_000,
      'all six Pods serve',
    );

    let stop = false;
    const results = { ok: 0, failed: [] as string[], pods: seen() };
    const loop = (async () => {
      for (let n = 0; n < 20_000 && !stop; n++) {
        try {
          const r = await get();
          if (r.status === 200) {
            results.ok++;
            results.pods.add(r.body);
          } else results.failed.push(`status ${r.status}`);
        } catch (err) {
          results.failed.push(String(err));
        }
      }
    })();
    const members = () =>
      ctl.state.document().pools.find((p) => p.name === 'e2e--default-web-http')?.members ?? [];
    await c.core.patchNode(
      { name: 'n2', body: { metadata: { labels: { [EXCLUDE_LABEL]: '' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      () => members().filter((m) => m.node === 'n2' && !m.enabled).length === 2,
      2000,
      'n2 drains within 2 s',
    );
    await eventually(() => !members().some((m) => m.node === 'n2'), 5000, 'n2 leaves after the drain time');
    await new Promise((r) => setTimeout(r, 300));
    // The node's Pods go away for real: their servers stop, then the Pods are deleted.
    for (const name of ['web-2', 'web-5']) {
      await new Promise<void>((r) => servers.get(name)!.close(() => r()));
      await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    }
    results.pods.clear();
    await new Promise((r) => setTimeout(r, 1000));
    stop = true;
    await loop;
    assert.deepEqual(
      results.failed.slice(0, 5),
      [],
      `${results.failed.length} of ${results.ok + results.failed.length} requests failed`,
    );
    assert.ok(results.ok > 20, `requests made: ${results.ok}`);
    assert.deepEqual([...results.pods].sort(), ['pod web-1', 'pod web-3', 'pod web-4', 'pod web-6']);

    // Back in service: a new Pod on n2 serves.
    await c.core.patchNode(
      { name: 'n2', body: { metadata: { labels: { [EXCLUDE_LABEL]: null } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await pod(7, 'n2');
    pods = seen();
    await eventually(
      async () => {
        pods.add((await get().catch(() => ({ body: '' }))).body);
        return pods.has('pod web-7');
      },
      10_000,
      'a Pod on n2 serves again',
    );
  };

describe('node maintenance on a real HAProxy', { skip: haproxyMissing() }, () => {
  const name = 'a node drained for maintenance, then its Pods deleted: no failed request through HAProxy';
  it(`${name} (runtime socket)`, scenario('runtime'));
  it(`${name} (Data Plane API v3)`, scenario('dataplane'));
});
