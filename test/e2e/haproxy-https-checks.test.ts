/**
 * Issue 33, item 1 (scheme): an HTTPS readiness probe on a LoadBalancer Service's port, on a real
 * HAProxy, every transport (runtime; Data Plane API v2 and v3 on the simulator). Its Pods serve
 * TLS there (self-signed, as most do), 404 on `/`, 200 on /healthz: the L4 pool passes the TLS
 * through and checks each member with an HTTPS GET of /healthz, the certificate not verified as the
 * kubelet does not verify it (HAProxy says L7OK). When /healthz fails the member goes down (L7STS)
 * and the VIP refuses; when it answers again the member is back. A member that speaks plain HTTP
 * on that port fails the HTTPS check (not a TCP check that would call it up).
 */
import assert from 'node:assert/strict';
import { createServer as createHttps } from 'node:https';
import { createServer as createHttp, type Server } from 'node:http';
import { connect } from 'node:tls';
import { describe, it, type TestContext } from 'node:test';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { testCertificate } from '../support/certs.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { eventually, serviceVip, useSandbox } from '../support/sandbox.ts';

const VIP_PORT = 18443;
const POD_IP = '127.0.56.11';
const PLAIN_IP = '127.0.56.12';

function handler(health: { ok: boolean }) {
  return (req: { url?: string }, res: { writeHead(s: number): { end(b: string): void } }) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') res.writeHead(health.ok ? 200 : 500).end(health.ok ? 'ok' : 'sick');
    else res.writeHead(404).end('not found');
  };
}

async function listen(t: TestContext, server: Server, ip: string): Promise<void> {
  await new Promise<void>((r) => server.listen(8443, ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

/** One TLS handshake through the VIP: the certificate's CN, or '' when refused. */
const handshake = (host: string): Promise<string> =>
  new Promise((resolve) => {
    const s = connect({ host, port: VIP_PORT, rejectUnauthorized: false, servername: 'app.example.com' });
    const done = (v: string) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(2000, () => done(''));
    s.once('secureConnect', () => done(String(s.getPeerCertificate().subject?.CN ?? '?')));
    s.once('error', () => done(''));
  });

for (const tr of TRANSPORTS)
  describe(
    `HTTPS member checks from an HTTPS readiness probe (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('checked over TLS without verifying; a failing probe path drains; plain HTTP on the port fails the check', async (t) => {
        assertNoListeners('127.0.56.', [VIP_PORT]);
        const health = { ok: true };
        const cert = await testCertificate({ dns: ['app.example.com'] });
        await listen(t, createHttps(cert, handler(health)) as unknown as Server, POD_IP);
        await listen(t, createHttp(handler(health)), PLAIN_IP);
        const { kc, url } = await useSandbox(t);
        const c = new Cluster(kc);
        const rig = await tr.start(t, 4, { healthChecks: true });
        const ctl = new NplController({
          kubeConfig: kc,
          config: parseControllerConfig(
            'clusterName: e2e\nserviceType: ClusterIP\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.56.32/28]}\n',
          ),
          adapter: rig.adapter,
          events: new RecordingEvents(),
          coalesceMs: 20,
          sweepIntervalMs: 0,
        });
        t.after(() => ctl.stop());
        await ctl.start();
        await c.node('n1', { internal: ['127.0.56.250'] });
        await c.service('app', {
          type: 'LoadBalancer',
          enabled: null,
          selector: { app: 'app' },
          ports: [{ name: 'https', port: VIP_PORT, targetPort: 'https' }],
        });
        const pod = async (name: string, ip: string) => {
          await c.pod(name, {
            node: 'n1',
            labels: { app: 'app' },
            ips: [ip],
            ports: [{ name: 'https', containerPort: 8443 }],
            readinessProbe: {
              httpGet: { path: '/healthz', port: 'https', scheme: 'HTTPS' },
              periodSeconds: 1,
              timeoutSeconds: 1,
              failureThreshold: 1,
            },
          });
          await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
        };
        await pod('app-1', POD_IP);
        const vip = await serviceVip(url, 'default', 'app');
        const pools = () => ctl.state.document().pools.filter((p) => p.service === 'default/app');
        const healthOf = async () => {
          await ctl.health.refresh();
          return pools().flatMap((p) =>
            p.members.map((m) => `${m.address} ${m.health?.state ?? '-'} ${m.health?.reason ?? ''}`),
          );
        };
        await eventually(() => pools()[0]?.check?.tls === true, 10_000, 'an HTTPS check');
        assert.equal(pools()[0]!.check!.path, '/healthz');
        let seen: string[] = [];
        const until = (re: RegExp, what: string) =>
          eventually(
            async () => (seen = await healthOf()).length > 0 && seen.every((h) => re.test(h)),
            10_000,
            what,
          ).catch((e: Error) => assert.fail(`${e.message}: ${seen.join('; ')}`));
        await until(/ up L7OK$/, 'up by its HTTPS check');
        // Checked up is not yet bound: the VIP's frontend may still be on its way (a reload).
        await eventually(
          async () => (await handshake(vip)) === 'app.example.com',
          10_000,
          'the Pod’s TLS passes through',
        );

        // /healthz fails: down by L7STS, and the VIP has no server left.
        health.ok = false;
        await until(/ down L7STS$/, 'down by its HTTPS check');
        await eventually(async () => (await handshake(vip)) === '', 10_000, 'refused');
        health.ok = true;
        await until(/ up L7OK$/, 'back up');

        // A Pod that answers plain HTTP on the port: the HTTPS check fails it (a TCP check would not).
        await pod('app-2', PLAIN_IP);
        await eventually(
          async () => (seen = await healthOf()).some((h) => h.startsWith(`${PLAIN_IP} down`)),
          10_000,
          'the plain-HTTP member down',
        ).catch((e: Error) => assert.fail(`${e.message}: ${seen.join('; ')}`));
        assert.ok(
          seen.some((h) => h.startsWith(`${POD_IP} up`)),
          seen.join('; '),
        );
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
