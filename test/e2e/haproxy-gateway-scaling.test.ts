/**
 * A weighted HTTPRoute through the whole product on a real HAProxy, on both transports (runtime;
 * Data Plane API v2 and v3 on the simulator, its backends sized with 64 server slots so that 50 members
 * fit without growing, see docs/haproxy.md): the
 * sandbox with the Gateway API CRDs, the controller, a Gateway, and an HTTPRoute splitting 80/20
 * between two Services and adding a header. One Service scales 3 -> 50 -> 3 Pods (scale-in
 * drains first: Pods are held by a finalizer until their members drain) under a bounded request
 * loop: no request fails, HAProxy never reloads, and the split and the header hold.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Agent, request } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const FINALIZER = 'test.npl-lb.io/hold';
const PORT = 18092;

async function podServer(t: TestContext, ip: string, app: string, name: string): Promise<void> {
  const server = createServer((req, res) => res.end(`${app} ${name} ${req.headers['x-split'] ?? '-'}\n`));
  await new Promise<void>((r) => server.listen(8080, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

for (const tr of TRANSPORTS)
  describe(`a weighted HTTPRoute on a real HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('80/20 with a header; 3 -> 50 -> 3 Pods of one side loses no request and reloads nothing', async (t) => {
      assertNoListeners('127.0.45.', [PORT]);
      const { kc, url } = await useSandbox(t);
      const c = new Cluster(kc);
      await installGatewayApi(url);
      const rig = await tr.start(t, 64);
      const adapter = rig.adapter;
      const ctl = new NplController({
        kubeConfig: kc,
        config: parseControllerConfig(
          'clusterName: e2e\nserviceType: ClusterIP\nvip: {cidrs: [127.0.45.0/24]}\n',
        ),
        adapter,
        events: { record: async () => {} },
        coalesceMs: 20,
        sweepIntervalMs: 0,
      });
      t.after(() => ctl.stop());
      await ctl.start();

      const post = async (path: string, body: object) => {
        const r = await api(url, 'POST', path, body);
        assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
      };
      await post(`${GW_API}/gatewayclasses`, {
        metadata: { name: 'npl-lb' },
        spec: { controllerName: 'npl-lb.io/gateway-controller' },
      });
      await c.node('n1', { internal: ['127.0.45.250'] });
      for (const app of ['v1', 'v2']) {
        await c.service(app, {
          enabled: null,
          selector: { app },
          ports: [{ name: 'http', port: 8080, targetPort: 8080 }],
        });
      }
      const pod = async (app: string, i: number, ip: string) => {
        const name = `${app}-${i}`;
        await podServer(t, ip, app, name);
        await c.pod(name, { node: 'n1', labels: { app }, ips: [ip], ports: [{ containerPort: 8080 }] });
        await c.patchPod(name, { metadata: { finalizers: [FINALIZER] } });
        await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      };
      for (let i = 1; i <= 3; i++) await pod('v1', i, `127.0.46.${i}`);
      for (let i = 1; i <= 3; i++) await pod('v2', i, `127.0.47.${i}`);
      await post(`${GW_API}/namespaces/default/gateways`, {
        metadata: { name: 'gw' },
        spec: { gatewayClassName: 'npl-lb', listeners: [{ name: 'http', port: PORT, protocol: 'HTTP' }] },
      });
      await post(`${GW_API}/namespaces/default/httproutes`, {
        metadata: { name: 'split' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          rules: [
            {
              filters: [
                {
                  type: 'RequestHeaderModifier',
                  requestHeaderModifier: { set: [{ name: 'X-Split', value: 'yes' }] },
                },
              ],
              backendRefs: [
                { name: 'v1', port: 8080, weight: 80 },
                { name: 'v2', port: 8080, weight: 20 },
              ],
            },
          ],
        },
      });
      let vip = '';
      await eventually(
        async () => {
          const gw = (await api(url, 'GET', `${GW_API}/namespaces/default/gateways/gw`)).body as {
            status?: { addresses?: { value: string }[] };
          };
          vip = gw.status?.addresses?.[0]?.value ?? '';
          return vip !== '';
        },
        15_000,
        'the Gateway has its address',
      );
      const dispatcher = new Agent({ connections: 4 });
      t.after(() => dispatcher.close());
      const get = async () => {
        const r = await request(`http://${vip}:${PORT}/`, {
          dispatcher,
          headersTimeout: 3000,
          bodyTimeout: 3000,
        });
        return { status: r.statusCode, body: (await r.body.text()).trim() };
      };
      // The route is whole once both sides answer (before, a side not yet resolved is a 500
      // share and its arrival changes the frontend): 40 requests in a row answered, by both sides.
      await eventually(
        async () => {
          const seen = new Set<string>();
          for (let i = 0; i < 40; i++) {
            const r = await get().catch(() => ({ status: 0, body: '' }));
            if (r.status !== 200) return false;
            seen.add(r.body.split(' ')[0]!);
          }
          return seen.has('v1') && seen.has('v2');
        },
        15_000,
        'traffic to both sides',
      );

      let stop = false;
      const results = { ok: 0, failed: [] as string[], v1: 0, v2: 0, header: 0 };
      const loop = (async () => {
        for (let n = 0; n < 20_000 && !stop; n++) {
          try {
            const r = await get();
            if (r.status !== 200) {
              results.failed.push(`status ${r.status}`);
              continue;
            }
            results.ok++;
            if (r.body.startsWith('v1 ')) results.v1++;
            else results.v2++;
            if (r.body.endsWith(' yes')) results.header++;
          } catch (err) {
            results.failed.push(String(err));
          }
        }
      })();
      // A reload asked for before (the route's last structural change) finishes first.
      await rig.idle();
      const reloads = rig.reloads();
      const members = () => ctl.state.document().pools.find((p) => p.service === 'default/v1')?.members ?? [];
      for (let i = 4; i <= 50; i++) await pod('v1', i, `127.0.46.${i}`);
      await eventually(() => members().filter((m) => m.enabled).length === 50, 30_000, '50 enabled members');
      for (let i = 4; i <= 50; i++)
        await c.core.deleteNamespacedPod({ name: `v1-${i}`, namespace: 'default' });
      await eventually(
        () => members().filter((m) => !m.enabled).length === 47,
        30_000,
        '47 draining members',
      );
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 4; i <= 50; i++) await c.patchPod(`v1-${i}`, { metadata: { finalizers: null } });
      await eventually(() => members().length === 3, 30_000, 'back to 3 members');
      await new Promise((r) => setTimeout(r, 300));
      stop = true;
      await loop;
      const total = results.ok + results.failed.length;
      assert.deepEqual(
        results.failed.slice(0, 5),
        [],
        `${results.failed.length} of ${total} requests failed`,
      );
      assert.ok(results.ok > 100, `requests made: ${results.ok}`);
      assert.equal(rig.reloads(), reloads, 'scaling a weighted route reloaded HAProxy');
      const share = results.v1 / results.ok;
      assert.ok(share > 0.7 && share < 0.9, `80/20 split: v1 took ${share.toFixed(2)}`);
      assert.equal(results.header, results.ok, 'every request carried the header the route sets');
      for (const app of ['v1', 'v2'])
        for (let i = 1; i <= 3; i++) await c.patchPod(`${app}-${i}`, { metadata: { finalizers: null } });
      assert.deepEqual(rig.specProblems(), [], 'every Data Plane exchange conforms to the spec');
    });
  });
