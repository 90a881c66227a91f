/**
 * Issue 30, item 5, the controller's side: HAProxy run by someone else (the runtime transport
 * beside a host or sidecar HAProxy, no supervisor of ours) dies with kill -9 while nothing is
 * pending. The controller notices within a few seconds by itself (its idle probe of the admin
 * socket): a Warning `LoadBalancerUnreachable` on its own Pod, `npl_lb_device_reachable 0`, not
 * ready, writes held while a Pod scales up. HAProxy started again: `LoadBalancerReachable`, and a
 * full pass writes what changed meanwhile; traffic reaches both Pods.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { it } from 'node:test';
import { request } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const VIP = '127.0.52.1';
const PORT = 18180;
const NODE_IP = '127.0.52.11';
const PODS = [18181, 18182];

const get = async (): Promise<string | undefined> => {
  try {
    const r = await request(`http://${VIP}:${PORT}/`, {
      reset: true,
      headersTimeout: 1000,
      bodyTimeout: 1000,
    });
    return await r.body.text();
  } catch {
    return undefined;
  }
};

it(
  'HAProxy killed while idle: noticed by the probe, said on the controller Pod, writes held, a full pass once it is back',
  { skip: haproxyMissing() },
  async (t) => {
    assertNoListeners('127.0.52.', [PORT]);
    for (const [i, port] of PODS.entries()) {
      const server = createServer((_req, res) => res.end(`pod-${i}`));
      await new Promise<void>((r) => server.listen(port, NODE_IP, () => r()));
      t.after(() => new Promise<void>((r) => server.close(() => r())));
    }
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: [NODE_IP] });
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: PORT, targetPort: 'http' }],
    });
    await c.nplPod('web-0', { node: 'n1', entries: [{ nodeIP: NODE_IP, nodePort: PODS[0]! }] });

    const rig = await startHaproxy(t);
    const adapter = rig.adapter('c1', { healthChecks: false });
    const events = new RecordingEvents();
    const self = {
      kind: 'Pod',
      apiVersion: 'v1',
      namespace: 'npl-lb',
      name: 'npl-lb-controller-0',
      uid: 'u-self',
    };
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [${VIP}/32]}\n`,
      ),
      adapter,
      events,
      self,
      coalesceMs: 10,
      sweepIntervalMs: 0,
      deviceIdleProbeMs: 500,
      deviceProbeMs: 250,
    });
    t.after(async () => {
      await ctl.stop();
      await adapter.close();
    });
    await ctl.start();
    await eventually(async () => (await get()) === 'pod-0', 10_000, 'traffic through HAProxy');
    await ctl.settled();
    const said = (reason: string) =>
      events.seen.filter((e) => e.reason === reason && e.target === 'npl-lb/npl-lb-controller-0');

    // kill -9 of the worker takes the master with it: nothing listens, nothing is pending.
    const worker = Number(/^Pid: (\d+)/m.exec(await rig.proc.runtime('show info'))![1]);
    const killed = Date.now();
    process.kill(worker, 'SIGKILL');
    await eventually(
      () => said('LoadBalancerUnreachable').length === 1,
      5000,
      'the Warning on the controller Pod',
    );
    const noticed = Date.now() - killed;
    t.diagnostic(`HAProxy's death noticed ${noticed} ms after kill -9`);
    assert.ok(noticed < 3000, `noticed after ${noticed} ms`);
    assert.match(said('LoadBalancerUnreachable')[0]!.message, /admin|sock|ECONNREFUSED|ENOENT/i);
    assert.equal(ctl.isReady, false);
    assert.match(await ctl.metrics.registry.metrics(), /^npl_lb_device_reachable 0$/m);
    assert.equal(ctl.state.document().device.reachable, false);

    // A Pod comes while HAProxy is down: held, not retried at the device.
    await c.nplPod('web-1', { node: 'n1', entries: [{ nodeIP: NODE_IP, nodePort: PODS[1]! }] });
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(said('LoadBalancerUnreachable').length, 1, 'said once, not per probe');

    // Back (from the configuration file as it was): a full pass adds the new member.
    await rig.proc.start();
    const restarted = Date.now();
    await eventually(() => said('LoadBalancerReachable').length === 1, 5000, 'the device answers again');
    const seen = new Set<string>();
    await eventually(
      async () => {
        const body = await get();
        if (body) seen.add(body);
        return seen.has('pod-0') && seen.has('pod-1');
      },
      5000,
      'traffic to both Pods',
    );
    t.diagnostic(`converged ${Date.now() - restarted} ms after HAProxy started again`);
    assert.ok(ctl.isReady);
    assert.match(await ctl.metrics.registry.metrics(), /^npl_lb_device_reachable 1$/m);
  },
);
