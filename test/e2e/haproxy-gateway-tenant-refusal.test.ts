/**
 * Issue 30 through the whole product on a real HAProxy, every transport (runtime; Data Plane API v2
 * and v3 on the simulator): the controller, a shared Gateway listener, and four tenants at once.
 * Team A's HTTPRoute holds an apostrophe in an exact header match and in a header it sets (it
 * broke every Data Plane transaction before the fix); team X's matches a header by a regular
 * expression JavaScript compiles and PCRE2 refuses (`[^]`); team Y's matches a dotted header name
 * (`X.Tenant`) HAProxy cannot fetch. Meanwhile team B's Pod goes NotReady and team C creates a
 * LoadBalancer Service. X and Y alone are refused (`Accepted=False/UnsupportedValue`, naming the
 * field); A is served with the apostrophe as data; B's NotReady Pod leaves the pool within 2 s;
 * C gets its VIP and traffic.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, serviceVip, useSandbox } from '../support/sandbox.ts';

const GW_PORT = 18190;
const B_PORT = 18191;
const C_PORT = 18192;
const POD_IPS = { a: '127.0.54.1', b1: '127.0.54.2', b2: '127.0.54.3', c: '127.0.54.4' } as const;
type PodName = keyof typeof POD_IPS;

async function podServer(t: TestContext, name: PodName): Promise<void> {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ pod: name, quote: req.headers['x-quote'] ?? null }));
  });
  await new Promise<void>((r) => server.listen(8080, POD_IPS[name], () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

async function fetchJson(url: string, headers: Record<string, string> = {}) {
  try {
    const r = await request(url, { headers, reset: true, headersTimeout: 2000, bodyTimeout: 2000 });
    const text = await r.body.text();
    return {
      status: r.statusCode,
      body: r.statusCode === 200 ? (JSON.parse(text) as { pod: string; quote: string | null }) : undefined,
    };
  } catch {
    return { status: 0, body: undefined };
  }
}

type Condition = { type: string; status: string; reason: string; message: string };
type RouteStatus = { status?: { parents?: { conditions?: Condition[] }[] } };

for (const tr of TRANSPORTS)
  describe(
    `one tenant never freezes another on a shared listener (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('an apostrophe is data, a PCRE-only regex and a dotted name are refused alone, every other change applies', async (t) => {
        assertNoListeners('127.0.53.', [GW_PORT, B_PORT, C_PORT]);
        for (const p of Object.keys(POD_IPS) as PodName[]) await podServer(t, p);
        const { kc, url } = await useSandbox(t);
        const c = new Cluster(kc);
        await installGatewayApi(url);
        const rig = await tr.start(t);
        const ctl = new NplController({
          kubeConfig: kc,
          config: parseControllerConfig(
            'clusterName: e2e\nserviceType: ClusterIP\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.53.0/28]}\n',
          ),
          adapter: rig.adapter,
          events: new RecordingEvents(),
          coalesceMs: 20,
          sweepIntervalMs: 0,
        });
        t.after(() => ctl.stop());
        await ctl.start();
        const post = async (path: string, body: object) => {
          const r = await api(url, 'POST', path, body);
          assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
        };
        await c.node('n1', { internal: ['127.0.53.250'] });
        const pod = async (name: PodName, app: string, ready = true) => {
          await c.pod(name, {
            node: 'n1',
            labels: { app },
            ips: [POD_IPS[name]],
            ports: [{ containerPort: 8080 }],
          });
          await c.patchPodStatus(name, {
            status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
          });
        };
        await c.service('a', {
          enabled: null,
          selector: { app: 'a' },
          ports: [{ name: 'http', port: 8080, targetPort: 8080 }],
        });
        await pod('a', 'a');
        await c.service('b', {
          type: 'LoadBalancer',
          enabled: null,
          selector: { app: 'b' },
          ports: [{ name: 'http', port: B_PORT, targetPort: 8080 }],
        });
        await pod('b1', 'b');
        await pod('b2', 'b');
        await pod('c', 'c');
        await post(`${GW_API}/gatewayclasses`, {
          metadata: { name: 'npl-lb' },
          spec: { controllerName: 'npl-lb.io/gateway-controller' },
        });
        await post(`${GW_API}/namespaces/default/gateways`, {
          metadata: { name: 'shared' },
          spec: {
            gatewayClassName: 'npl-lb',
            listeners: [{ name: 'http', port: GW_PORT, protocol: 'HTTP' }],
          },
        });
        const routeTo = (host: string, match: object, filters: object[] = []) => ({
          parentRefs: [{ name: 'shared' }],
          hostnames: [host],
          rules: [{ matches: [match], filters, backendRefs: [{ name: 'a', port: 8080 }] }],
        });
        // A baseline route first: the listener works before the tenants arrive.
        await post(`${GW_API}/namespaces/default/httproutes`, {
          metadata: { name: 'base' },
          spec: routeTo('base.example', { path: { type: 'PathPrefix', value: '/' } }),
        });
        let gwVip = '';
        await eventually(
          async () => {
            const gw = (await api(url, 'GET', `${GW_API}/namespaces/default/gateways/shared`)).body as {
              status?: { addresses?: { value: string }[] };
            };
            gwVip = gw.status?.addresses?.[0]?.value ?? '';
            return (
              gwVip !== '' &&
              (await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'base.example' })).status === 200
            );
          },
          15_000,
          'the shared listener serves',
        );
        const bVip = await serviceVip(url, 'default', 'b', 10_000);

        // All at once: three routes, B's Pod NotReady, C's new Service.
        await Promise.all([
          post(`${GW_API}/namespaces/default/httproutes`, {
            metadata: { name: 'team-a' },
            spec: routeTo('a.example', { headers: [{ type: 'Exact', name: 'X-Team', value: "it's" }] }, [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { set: [{ name: 'X-Quote', value: "it's (a) *test*! ~" }] },
              },
            ]),
          }),
          post(`${GW_API}/namespaces/default/httproutes`, {
            metadata: { name: 'team-x' },
            spec: routeTo('x.example', {
              headers: [{ type: 'RegularExpression', name: 'X-Team', value: '[^]' }],
            }),
          }),
          post(`${GW_API}/namespaces/default/httproutes`, {
            metadata: { name: 'team-y' },
            spec: routeTo('y.example', { headers: [{ type: 'Exact', name: 'X.Tenant', value: 'y' }] }),
          }),
          c.patchPodStatus('b2', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
          c.service('c', {
            type: 'LoadBalancer',
            enabled: null,
            selector: { app: 'c' },
            ports: [{ name: 'http', port: C_PORT, targetPort: 8080 }],
          }),
        ]);
        const changedAt = Date.now();

        // B: the NotReady Pod leaves the pool within 2 s (20 requests in a row all reach b1).
        await eventually(
          async () => {
            for (let i = 0; i < 20; i++)
              if ((await fetchJson(`http://${bVip}:${B_PORT}/`)).body?.pod !== 'b1') return false;
            return true;
          },
          5000,
          'b2 out of rotation',
        );
        const bTook = Date.now() - changedAt;
        t.diagnostic(`team B's NotReady Pod left the pool ${bTook} ms after the batch`);
        assert.ok(
          bTook <= 2000 + 1000,
          `b2 left after ${bTook} ms (2 s, plus the 20 requests that prove it)`,
        );

        // C: a VIP and traffic.
        await eventually(
          async () => {
            const svc = (await api(url, 'GET', '/api/v1/namespaces/default/services/c')).body as {
              status?: { loadBalancer?: { ingress?: { ip: string }[] } };
            };
            const ip = svc.status?.loadBalancer?.ingress?.[0]?.ip;
            return ip !== undefined && (await fetchJson(`http://${ip}:${C_PORT}/`)).body?.pod === 'c';
          },
          10_000,
          "team C's new Service serves on its VIP",
        );

        // A: served, the apostrophe and the rest as data, in the match and in the header set.
        await eventually(
          async () => {
            const r = await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'a.example', 'x-team': "it's" });
            return r.body?.pod === 'a' && r.body.quote === "it's (a) *test*! ~";
          },
          10_000,
          "team A's route, apostrophe and all",
        );
        assert.equal(
          (await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'a.example', 'x-team': 'its' })).status,
          404,
        );

        // X and Y: refused alone, naming the field; not served; the listener and A unaffected.
        const condition = async (name: string) => {
          const r = (await api(url, 'GET', `${GW_API}/namespaces/default/httproutes/${name}`))
            .body as RouteStatus;
          return r.status?.parents?.[0]?.conditions?.find((x) => x.type === 'Accepted');
        };
        await eventually(
          async () => (await condition('team-x'))?.status === 'False',
          10_000,
          'team X refused',
        );
        await eventually(
          async () => (await condition('team-y'))?.status === 'False',
          10_000,
          'team Y refused',
        );
        const x = (await condition('team-x'))!;
        const y = (await condition('team-y'))!;
        assert.equal(x.reason, 'UnsupportedValue');
        assert.match(x.message, /spec\.rules\[0\]\.matches\[0\]\.headers\[0\]\.value/);
        assert.equal(y.reason, 'UnsupportedValue');
        assert.match(y.message, /spec\.rules\[0\]\.matches\[0\]\.headers\[0\]\.name: .*"X\.Tenant"/);
        assert.equal((await condition('team-a'))?.status, 'True');
        assert.equal(
          (await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'x.example', 'x-team': 'x' })).status,
          404,
        );
        assert.equal(
          (await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'y.example', 'x.tenant': 'y' })).status,
          404,
        );
        assert.equal((await fetchJson(`http://${gwVip}:${GW_PORT}/`, { host: 'base.example' })).status, 200);
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
