/**
 * Issue 33, item 3 (HAProxy frontend options per class): a LoadBalancer Service of a class that the
 * controller's configuration maps to LoadBalancerParameters (`loadBalancerClasses`) gets the
 * parameters' `haproxy.frontend` on its frontend, on a real HAProxy, every transport (runtime;
 * Data Plane API v2 and v3 on the simulator), with real connections: with `clientTimeoutSeconds: 1`
 * an idle client is closed within about a second; parameters raising it to 30 keep the idle
 * client open; parameters that do not exist leave the Service unserved, said as InvalidParameters.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { installNplLbCrds } from '../../src/sandbox/npl-lb-crds.ts';
import { Cluster, RecordingEvents, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, serviceVip, useSandbox } from '../support/sandbox.ts';

const VIP_PORT = 18199;
const POD_IP = '127.0.57.31';
const PARAMS = '/apis/npl-lb.io/v1alpha1/namespaces/infra/loadbalancerparameters';

/** An echo server: it says nothing until the client does. */
async function echo(t: TestContext): Promise<void> {
  const server: Server = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

/**
 * A client that says `ping`, reads it back, then stays idle: whether the load balancer closed it
 * within `waitMs` (undefined: it was not even served).
 */
const closedWhileIdle = (vip: string, waitMs: number): Promise<boolean | undefined> =>
  new Promise((resolve) => {
    let served = false;
    const s = connect({ host: vip, port: VIP_PORT });
    const done = (v: boolean | undefined) => {
      clearTimeout(timer);
      s.destroy();
      resolve(v);
    };
    const timer = setTimeout(() => done(served ? false : undefined), waitMs);
    s.on('connect', () => s.write('ping\n'));
    s.on('data', (d: Buffer) => {
      if (d.toString().includes('ping')) served = true;
    });
    s.on('close', () => done(served ? true : undefined));
    s.on('error', () => undefined);
  });

for (const tr of TRANSPORTS)
  describe(`a class's HAProxy frontend settings (${tr.name})`, { skip: haproxyMissing() }, () => {
    it("an idle client is closed after the class's client timeout; raised, it stays; missing parameters serve nothing", async (t) => {
      assertNoListeners('127.0.57.', [VIP_PORT]);
      await echo(t);
      const { kc, url } = await useSandbox(t);
      await installNplLbCrds(url);
      const c = new Cluster(kc);
      await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'infra' } });
      const put = async (method: 'POST' | 'PUT', seconds: number) => {
        const current =
          method === 'PUT'
            ? ((await api(url, 'GET', `${PARAMS}/edge`)).body as { metadata: object })
            : undefined;
        const r = await api(url, method, method === 'PUT' ? `${PARAMS}/edge` : PARAMS, {
          apiVersion: 'npl-lb.io/v1alpha1',
          kind: 'LoadBalancerParameters',
          metadata: current?.metadata ?? { name: 'edge' },
          spec: { haproxy: { frontend: { maxConnections: 100, clientTimeoutSeconds: seconds } } },
        });
        assert.ok(r.status < 300, JSON.stringify(r.body).slice(0, 300));
      };
      await put('POST', 1);
      const rig = await tr.start(t, 4);
      const events = new RecordingEvents();
      const ctlRef = await runController(
        t,
        kc,
        rig.adapter,
        [
          'clusterName: e2e',
          'serviceType: ClusterIP',
          'vip: {cidrs: [127.0.57.48/28]}',
          'loadBalancerClasses:',
          '  - {name: example.com/edge, parameters: {namespace: infra, name: edge}}',
          '  - {name: example.com/nowhere, parameters: {namespace: infra, name: missing}}',
          '',
        ].join('\n'),
        events,
      );
      await c.node('n1', { internal: ['127.0.57.250'] });
      await c.service('app', {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app: 'app' },
        ports: [{ name: 'tcp', port: VIP_PORT, targetPort: 8080 }],
        spec: { loadBalancerClass: 'example.com/edge' },
      });
      await c.pod('app-1', {
        node: 'n1',
        labels: { app: 'app' },
        ips: [POD_IP],
        ports: [{ containerPort: 8080 }],
      });
      await c.patchPodStatus('app-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      const vip = await serviceVip(url, 'default', 'app');
      await eventually(
        async () => (await closedWhileIdle(vip, 3000)) === true,
        20_000,
        'closed after 1 s idle',
      );
      const t0 = Date.now();
      assert.equal(await closedWhileIdle(vip, 5000), true);
      assert.ok(Date.now() - t0 < 3000, `closed in ${Date.now() - t0} ms, about the 1 s timeout`);

      await put('PUT', 30);
      await eventually(
        async () => (await closedWhileIdle(vip, 2500)) === false,
        20_000,
        'kept open once raised',
      );

      // A Service of a class whose parameters do not exist: not served, and said.
      await c.service('lost', {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app: 'app' },
        ports: [{ name: 'tcp', port: VIP_PORT + 1, targetPort: 8080 }],
        spec: { loadBalancerClass: 'example.com/nowhere' },
      });
      await eventually(
        () =>
          events.seen.some(
            (e) =>
              e.reason === 'InvalidParameters' &&
              e.target === 'default/lost' &&
              /missing not found/.test(e.message),
          ),
        15_000,
        'InvalidParameters on the Service',
      );
      assert.equal(
        ctlRef.state.document().virtualServices.filter((v: { name: string }) => v.name.includes('-lost-'))
          .length,
        0,
        'nothing of it programmed',
      );
      assert.deepEqual(rig.specProblems(), []);
    });
  });
