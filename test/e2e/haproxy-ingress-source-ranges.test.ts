/**
 * Issue 33, item 4 (L7): an Ingress's `npl-lb.io/source-ranges` on a real HAProxy, every transport
 * (runtime; Data Plane API v2 and v3 on the simulator), with real requests from two loopback source
 * addresses: the client inside the range is served, the one outside gets 403, while another
 * Ingress of the same class (another host) serves both; lifting the annotation serves both; a
 * value that is not a CIDR serves neither client of that Ingress (fail closed: 503, no rule takes
 * its host) and leaves the
 * other Ingress served. Issue 46: 64 ranges (the cap; 56 and more broke HAProxy's 64-word line and
 * froze the shared frontend) are served and refuse the outside client, and another tenant's new
 * Ingress on the same class lands meanwhile.
 */
import assert from 'node:assert/strict';
import { createServer, get as httpGet } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Cluster, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const ING_PORT = 18196;
const POD_IP = '127.0.57.41';
const INSIDE = '127.0.57.202';
const OUTSIDE = '127.0.57.203';

async function app(t: TestContext): Promise<void> {
  const server = createServer((_req, res) => res.writeHead(200).end('hello'));
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

/** The status a request for `host` from `from` gets (0: no answer). */
function status(vip: string, host: string, from: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpGet(
      {
        host: vip,
        port: ING_PORT,
        path: '/',
        headers: { host },
        localAddress: from,
        agent: false,
        timeout: 2000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

for (const tr of TRANSPORTS)
  describe(`npl-lb.io/source-ranges on HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('inside served, outside 403, another Ingress of the class open; lifted: both; a bad value: neither', async (t) => {
      assertNoListeners('127.0.57.', [ING_PORT]);
      await app(t);
      const { kc, url } = await useSandbox(t);
      const c = new Cluster(kc);
      const rig = await tr.start(t, 4);
      await runController(
        t,
        kc,
        rig.adapter,
        `clusterName: e2e\nserviceType: ClusterIP\nvip: {cidrs: [127.0.57.64/28]}\ningressHttpPort: ${ING_PORT}\n`,
      );
      await c.node('n1', { internal: ['127.0.57.250'] });
      await c.service('web', {
        enabled: null,
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 8080, targetPort: 8080 }],
      });
      await c.pod('web-1', {
        node: 'n1',
        labels: { app: 'web' },
        ips: [POD_IP],
        ports: [{ containerPort: 8080 }],
      });
      await c.patchPodStatus('web-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      await c.ingressClass();
      await c.ingress('open', { host: 'open.example.com', service: 'web', port: 'http' });
      await c.ingress('guarded', { host: 'guarded.example.com', service: 'web', port: 'http' });
      const annotate = async (value: string | null) => {
        const r = await api(
          url,
          'PATCH',
          '/apis/networking.k8s.io/v1/namespaces/default/ingresses/guarded',
          { metadata: { annotations: { 'npl-lb.io/source-ranges': value } } },
          { 'Content-Type': 'application/merge-patch+json' },
        );
        assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 200));
      };
      await annotate(`${INSIDE}/32`);
      let vip = '';
      await eventually(
        async () => {
          const b = (await api(url, 'GET', '/apis/networking.k8s.io/v1/namespaces/default/ingresses/open'))
            .body as { status?: { loadBalancer?: { ingress?: { ip: string }[] } } };
          vip = b.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
          return vip !== '';
        },
        15_000,
        'the class address',
      );
      const all = async () =>
        [
          await status(vip, 'guarded.example.com', INSIDE),
          await status(vip, 'guarded.example.com', OUTSIDE),
          await status(vip, 'open.example.com', INSIDE),
          await status(vip, 'open.example.com', OUTSIDE),
        ].join(' ');
      await eventually(async () => (await all()) === '200 403 200 200', 20_000, 'filtered');

      // 64 ranges, and meanwhile another tenant's new Ingress on the same VIP.
      const long = [`${INSIDE}/32`, ...Array.from({ length: 63 }, (_, i) => `10.${i}.0.0/16`)];
      await annotate(long.join(','));
      await c.ingress('newcomer', { host: 'new.example.com', service: 'web', port: 'http' });
      await eventually(
        async () => (await status(vip, 'new.example.com', OUTSIDE)) === 200,
        20_000,
        "the other tenant's Ingress lands",
      );
      assert.equal(await all(), '200 403 200 200', 'the 64-range filter serves inside, refuses outside');

      await annotate(null);
      await eventually(async () => (await all()) === '200 200 200 200', 20_000, 'lifted');

      // Not a CIDR: the guarded host is served to nobody (no rule of the class takes it: HAProxy
      // answers 503 without a backend), the open one as before.
      await annotate('10.0.0.0/8 } or { always_true');
      await eventually(async () => (await all()) === '503 503 200 200', 20_000, 'refused, fail closed');
      assert.deepEqual(rig.specProblems(), []);
    });
  });
