/**
 * Issue 33, item 1, on a real HAProxy, every transport (runtime; Data Plane API v2 and v3 on the
 * simulator): the members' check follows the application. An API that answers 404 on `/` and 200
 * on `/healthz` and `/api` is served through its Ingress and its HTTPRoute: with an httpGet
 * readinessProbe on /healthz its members are checked there (HAProxy says L7OK), and with none
 * they get a TCP check, never a GET / that would mark them down. When /healthz starts failing the
 * member goes down and requests get 503; a rollout whose Pods probe /ready moves the check there
 * and traffic is back. A probe the load balancer cannot follow as written (HTTPS) is said on the
 * Service and leaves the TCP check.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { request } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const ING_PORT = 18195;
const GW_PORT = 18196;
const POD_IPS = ['127.0.55.11', '127.0.55.12'] as const;

/** The app: 404 on `/`, 200 on /api and /ready, /healthz 200 until told to fail. */
async function app(t: TestContext, ip: string, health: { ok: boolean }): Promise<void> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') res.writeHead(health.ok ? 200 : 500).end(health.ok ? 'ok' : 'sick');
    else if (path === '/api' || path === '/ready') res.writeHead(200).end(`api on ${ip}`);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(8080, ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

const get = async (url: string, host: string) => {
  try {
    const r = await request(url, { headers: { host }, reset: true, headersTimeout: 2000, bodyTimeout: 2000 });
    return { status: r.statusCode, body: await r.body.text() };
  } catch {
    return { status: 0, body: '' };
  }
};

for (const tr of TRANSPORTS)
  describe(`member checks follow the readiness probe (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('404 on / is healthy; the probe path is the check; a failing probe path drains; a rollout moves the check', async (t) => {
      assertNoListeners('127.0.54.', [ING_PORT, GW_PORT]);
      const health = { ok: true };
      for (const ip of POD_IPS) await app(t, ip, health);
      const { kc, url } = await useSandbox(t);
      const c = new Cluster(kc);
      await installGatewayApi(url);
      const rig = await tr.start(t, 4, { healthChecks: true });
      const events = new RecordingEvents();
      const ctl = new NplController({
        kubeConfig: kc,
        config: parseControllerConfig(
          `clusterName: e2e\nserviceType: ClusterIP\nvip: {cidrs: [127.0.54.32/28]}\ningressHttpPort: ${ING_PORT}\n`,
        ),
        adapter: rig.adapter,
        events,
        coalesceMs: 20,
        sweepIntervalMs: 0,
      });
      t.after(() => ctl.stop());
      await ctl.start();
      await c.node('n1', { internal: ['127.0.54.250'] });
      await c.service('api', {
        enabled: null,
        selector: { app: 'api' },
        ports: [{ name: 'http', port: 8080, targetPort: 'http' }],
      });
      const probe = (path: string, scheme = 'HTTP') => ({
        httpGet: { path, port: 'http', scheme },
        periodSeconds: 1,
        timeoutSeconds: 1,
        failureThreshold: 1,
      });
      const pod = async (name: string, ip: string, readinessProbe?: object) => {
        await c.pod(name, {
          node: 'n1',
          labels: { app: 'api' },
          ips: [ip],
          ports: [{ name: 'http', containerPort: 8080 }],
          ...(readinessProbe ? { readinessProbe } : {}),
        });
        await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      };
      await pod('api-1', POD_IPS[0], probe('/healthz'));
      const net = kc.makeApiClient(NetworkingV1Api);
      await net.createIngressClass({
        body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
      });
      await net.createNamespacedIngress({
        namespace: 'default',
        body: {
          metadata: { name: 'api' },
          spec: {
            ingressClassName: 'npl',
            rules: [
              {
                host: 'api.example.com',
                http: {
                  paths: [
                    {
                      path: '/',
                      pathType: 'Prefix',
                      backend: { service: { name: 'api', port: { name: 'http' } } },
                    },
                  ],
                },
              },
            ],
          },
        },
      });
      const post = async (path: string, body: object) =>
        assert.equal((await api(url, 'POST', path, body)).status, 201);
      await post(`${GW_API}/gatewayclasses`, {
        metadata: { name: 'npl-lb' },
        spec: { controllerName: 'npl-lb.io/gateway-controller' },
      });
      await post(`${GW_API}/namespaces/default/gateways`, {
        metadata: { name: 'gw' },
        spec: { gatewayClassName: 'npl-lb', listeners: [{ name: 'http', port: GW_PORT, protocol: 'HTTP' }] },
      });
      await post(`${GW_API}/namespaces/default/httproutes`, {
        metadata: { name: 'api' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          hostnames: ['gw.example.com'],
          rules: [{ backendRefs: [{ name: 'api', port: 8080 }] }],
        },
      });
      const vipOf = async (path: string, pick: (b: never) => string | undefined) => {
        let vip = '';
        await eventually(
          async () => {
            vip = pick((await api(url, 'GET', path)).body as never) ?? '';
            return vip !== '';
          },
          15_000,
          `address of ${path}`,
        );
        return vip;
      };
      const ingVip = await vipOf(
        '/apis/networking.k8s.io/v1/namespaces/default/ingresses/api',
        (b: { status?: { loadBalancer?: { ingress?: { ip: string }[] } } }) =>
          b.status?.loadBalancer?.ingress?.[0]?.ip,
      );
      const gwVip = await vipOf(
        `${GW_API}/namespaces/default/gateways/gw`,
        (b: { status?: { addresses?: { value: string }[] } }) => b.status?.addresses?.[0]?.value,
      );
      const viaIngress = () => get(`http://${ingVip}:${ING_PORT}/api`, 'api.example.com');
      const viaRoute = () => get(`http://${gwVip}:${GW_PORT}/api`, 'gw.example.com');
      const healthOf = async () => {
        await ctl.health.refresh();
        return ctl.state
          .document()
          .pools.filter((p) => p.service === 'default/api')
          .flatMap((p) =>
            p.members.map(
              (m) =>
                `${p.name.includes('.l7') || p.name.includes('http') ? 'l7' : 'l4'} ${m.address} ${m.health?.state ?? '-'} ${m.health?.reason ?? ''}`,
            ),
          );
      };

      // The app answers 404 on /, and is served: checked at /healthz (L7OK).
      await eventually(
        async () => (await viaIngress()).status === 200 && (await viaRoute()).status === 200,
        15_000,
        'served through the Ingress and the HTTPRoute',
      );
      const pools = () => ctl.state.document().pools.filter((p) => p.service === 'default/api');
      assert.ok(pools().length >= 1);
      for (const p of pools()) assert.equal(p.check?.path, '/healthz', p.name);
      await eventually(
        async () => (await healthOf()).every((h) => / up L7OK$/.test(h)),
        10_000,
        'members up by their HTTP check',
      );

      // /healthz fails: the member goes down, requests get 503 (no other member).
      health.ok = false;
      await eventually(
        async () => (await viaIngress()).status === 503,
        10_000,
        'a failing probe path drains the member',
      );
      assert.equal((await viaRoute()).status, 503);
      let seen: string[] = [];
      await eventually(
        async () => (seen = await healthOf()).every((h) => / down L7STS$/.test(h)),
        10_000,
        'down by L7STS',
      ).catch((e: Error) => assert.fail(`${e.message}: ${seen.join('; ')}`));

      // A rollout whose Pods probe /ready: the check moves there and traffic is back.
      await pod('api-2', POD_IPS[1], probe('/ready'));
      await c.core.deleteNamespacedPod({ name: 'api-1', namespace: 'default' });
      await eventually(
        async () => pools().every((p) => p.check?.path === '/ready'),
        10_000,
        'the check follows the probe',
      );
      await eventually(
        async () => (await viaIngress()).body === `api on ${POD_IPS[1]}` && (await viaRoute()).status === 200,
        15_000,
        'traffic back',
      );

      // A probe the load balancer cannot follow as written: TCP check, said on the Service.
      await pod('api-3', '127.0.55.13', probe('/ready', 'HTTPS'));
      await c.core.deleteNamespacedPod({ name: 'api-2', namespace: 'default' });
      await eventually(
        () =>
          events.seen.some(
            (e) => e.reason === 'ProbeNotFollowed' && e.target === 'default/api' && /HTTPS/.test(e.message),
          ),
        10_000,
        'ProbeNotFollowed on the Service',
      );
      await eventually(async () => pools().every((p) => p.check === undefined), 10_000, 'a TCP check');
      assert.deepEqual(rig.specProblems(), []);
    });
  });
