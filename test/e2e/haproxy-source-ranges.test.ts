/**
 * Issue 33, item 4 (L4): a LoadBalancer Service's `loadBalancerSourceRanges` on a real HAProxy,
 * every transport (runtime; Data Plane API v2 and v3 on the simulator), with real connections from
 * two loopback source addresses: the one inside the range is served, the one outside is refused
 * (HAProxy closes the connection it accepted); lifting the ranges serves both. Issue 46: a list
 * of 1,000 ranges (past HAProxy's 64 words a line) is served and still refuses the outside client.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { Cluster, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { eventually, serviceVip, useSandbox } from '../support/sandbox.ts';

const VIP_PORT = 18198;
const POD_IP = '127.0.57.21';
const INSIDE = '127.0.57.200';
const OUTSIDE = '127.0.57.201';
/** Inside the long list only. */
const INSIDE_LONG = '127.0.57.202';

/** 1,000 ranges (the cap): INSIDE and INSIDE_LONG among 998 others, OUTSIDE in none. */
const LONG_LIST = [
  `${INSIDE}/32`,
  `${INSIDE_LONG}/32`,
  ...Array.from({ length: 998 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`),
];

async function app(t: TestContext): Promise<void> {
  const server: Server = createServer((s) => s.end('hello\n'));
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

/** What a connection from `from` to the VIP gets: the app's greeting, or '' when closed or refused. */
const answer = (vip: string, from: string): Promise<string> =>
  new Promise((resolve) => {
    let got = '';
    const s = connect({ host: vip, port: VIP_PORT, localAddress: from });
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('close', () => resolve(got.trim()));
    s.on('error', () => undefined);
    s.setTimeout(3000, () => s.destroy());
  });

for (const tr of TRANSPORTS)
  describe(`loadBalancerSourceRanges on HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('a client inside the ranges is served, one outside is refused, with 1 range and with 1,000; lifting the ranges serves both', async (t) => {
      assertNoListeners('127.0.57.', [VIP_PORT]);
      await app(t);
      const { kc, url } = await useSandbox(t);
      const c = new Cluster(kc);
      const rig = await tr.start(t, 4);
      const ctl = await runController(
        t,
        kc,
        rig.adapter,
        'clusterName: e2e\nserviceType: ClusterIP\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.57.48/28]}\n',
      );
      await c.node('n1', { internal: ['127.0.57.250'] });
      await c.service('app', {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app: 'app' },
        ports: [{ name: 'tcp', port: VIP_PORT, targetPort: 8080 }],
        spec: { loadBalancerSourceRanges: [`${INSIDE}/32`] },
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
        async () => (await answer(vip, INSIDE)) === 'hello',
        15_000,
        'served inside the range',
      );
      for (let i = 0; i < 5; i++) assert.equal(await answer(vip, OUTSIDE), '', 'refused outside the range');
      assert.equal(await answer(vip, INSIDE), 'hello');

      // 1,000 ranges: served (the new one inside lets in INSIDE_LONG), the outside still refused.
      await c.patchService('app', { spec: { loadBalancerSourceRanges: LONG_LIST } });
      await eventually(
        async () => (await answer(vip, INSIDE_LONG)) === 'hello',
        15_000,
        'served inside the long list',
      );
      for (let i = 0; i < 5; i++)
        assert.equal(await answer(vip, OUTSIDE), '', 'refused outside the long list');
      assert.equal(await answer(vip, INSIDE), 'hello');

      await c.patchService('app', { spec: { loadBalancerSourceRanges: null } });
      await eventually(
        async () => (await answer(vip, OUTSIDE)) === 'hello',
        15_000,
        'served once lifted',
      ).catch(async (e: Error) => {
        const svc = await c.core.readNamespacedService({ name: 'app', namespace: 'default' });
        assert.fail(
          `${e.message}: spec ${JSON.stringify(svc.spec?.loadBalancerSourceRanges)}; vs ${JSON.stringify(ctl.state.document().virtualServices)}`,
        );
      });
      assert.deepEqual(rig.specProblems(), []);
    });
  });
