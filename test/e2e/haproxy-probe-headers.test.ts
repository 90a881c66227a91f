/**
 * Issue 33, item 1 (headers): a readiness probe that sends headers (`httpHeaders`, Host among
 * them) on a real HAProxy. The app answers /healthz 200 only for its own Host and 404 otherwise, so
 * a check without the header would call it down. The runtime transport sends the headers and the
 * member is up by its HTTP check (L7OK); when /healthz fails it goes down (L7STS). The Data Plane
 * transports do not write the headers yet: the probe is not followed there, the Service says so
 * (ProbeNotFollowed) and the member keeps a TCP check, never a check that would fail a healthy app.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Cluster, RecordingEvents, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { eventually, serviceVip, useSandbox } from '../support/sandbox.ts';

const VIP_PORT = 18199;
const POD_IP = '127.0.57.22';

async function app(t: TestContext, health: { ok: boolean }): Promise<void> {
  const server = createServer((req, res) => {
    const ours = req.headers.host === 'app.example.com' && req.headers['x-probe'] === 'npl lb';
    if (req.url === '/healthz' && ours) res.writeHead(health.ok ? 200 : 500).end();
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

for (const tr of TRANSPORTS)
  describe(`probe headers on HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('the check sends the probe’s Host and headers where the transport can; elsewhere the TCP check, said', async (t) => {
      assertNoListeners('127.0.57.', [VIP_PORT]);
      const health = { ok: true };
      await app(t, health);
      const { kc, url } = await useSandbox(t);
      const c = new Cluster(kc);
      const rig = await tr.start(t, 4, { healthChecks: true });
      const events = new RecordingEvents();
      const ctl = await runController(
        t,
        kc,
        rig.adapter,
        'clusterName: e2e\nserviceType: ClusterIP\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.57.64/28]}\n',
        events,
      );
      await c.node('n1', { internal: ['127.0.57.250'] });
      await c.service('app', {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app: 'app' },
        ports: [{ name: 'http', port: VIP_PORT, targetPort: 'http' }],
      });
      await c.pod('app-1', {
        node: 'n1',
        labels: { app: 'app' },
        ips: [POD_IP],
        ports: [{ name: 'http', containerPort: 8080 }],
        readinessProbe: {
          httpGet: {
            path: '/healthz',
            port: 'http',
            httpHeaders: [
              { name: 'Host', value: 'app.example.com' },
              { name: 'X-Probe', value: 'npl lb' },
            ],
          },
          periodSeconds: 1,
          timeoutSeconds: 1,
          failureThreshold: 1,
        },
      });
      await c.patchPodStatus('app-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      await serviceVip(url, 'default', 'app');
      const pools = () => ctl.state.document().pools.filter((p) => p.service === 'default/app');
      let seen: string[] = [];
      const until = (re: RegExp, what: string) =>
        eventually(
          async () => {
            await ctl.health.refresh();
            seen = pools().flatMap((p) =>
              p.members.map((m) => `${m.health?.state ?? '-'} ${m.health?.reason ?? ''}`),
            );
            return seen.length > 0 && seen.every((h) => re.test(h));
          },
          10_000,
          what,
        ).catch((e: Error) => assert.fail(`${e.message}: ${seen.join('; ')}`));
      if (rig.adapter.capabilities().checkHeaders) {
        await eventually(() => pools()[0]?.check?.headers?.length === 2, 10_000, 'a check with the headers');
        await until(/^up L7OK$/, 'up by its HTTP check with the headers');
        health.ok = false;
        await until(/^down L7STS$/, 'down when /healthz fails');
      } else {
        await eventually(
          () =>
            events.seen.some(
              (e) => e.reason === 'ProbeNotFollowed' && /sends headers \(Host, X-Probe\)/.test(e.message),
            ),
          10_000,
          'ProbeNotFollowed naming the headers',
        );
        assert.equal(pools()[0]?.check, undefined);
        await until(/^up L4OK$/, 'up by a TCP check');
      }
      assert.deepEqual(rig.specProblems(), []);
    });
  });
