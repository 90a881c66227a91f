/**
 * End to end with Avi: the sandbox, NodePortLocal agents on three nodes, the controller with the
 * Avi adapter on the Avi Controller simulator. Each pool lists only the nodes that host a backend
 * Pod, one server per Pod at its NodePortLocal port, `hostname` = the node; scaling, readiness
 * flips and Pod deletion converge; a controller restart writes nothing when nothing changed.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, RecordingEvents, startAgent } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';
import { aviAdapter } from '../support/lb-fixtures.ts';

// Loopback node addresses: the agents reserve their ports on the node IP. No traffic is sent.
const NODES = { n1: '127.0.11.1', n2: '127.0.11.2', n3: '127.0.11.3' } as const;

async function controller(t: TestContext, kc: KubeConfig, url: string) {
  const adapter = aviAdapter(url);
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
    ),
    adapter,
    events: new RecordingEvents(),
    coalesceMs: 20,
    sweepIntervalMs: 0,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await ctl.stop();
    await adapter.close();
  };
  t.after(stop);
  await adapter.verify();
  await ctl.start();
  return { ctl, stop };
}

describe('Avi end to end on the sandbox with agents', () => {
  it('servers follow the Pods and name their nodes; a restart writes nothing', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    for (const [name, ip] of Object.entries(NODES)) await c.node(name, { internal: [ip] });
    for (const [i, name] of Object.keys(NODES).entries()) {
      await startAgent(t, kc, { nodeName: name, range: { start: 42000 + i * 100, end: 42099 + i * 100 } });
    }
    const sim = new AviSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const first = await controller(t, kc, url);

    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    const ready = (name: string, ok: boolean) =>
      c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: ok ? 'True' : 'False' }] } });
    const pod = async (name: string, node: keyof typeof NODES, i: number) => {
      await c.pod(name, { node, ips: [`10.244.1.${i}`], ports: [{ name: 'http', containerPort: 8080 }] });
      await ready(name, true);
    };
    /** The pool as the Avi admin sees it: ip:port hostname (enabled). */
    const servers = () =>
      (
        (sim.objects('pool').get('c1--default-web-http')?.servers ?? []) as {
          ip: { addr: string };
          port: number;
          hostname: string;
          enabled: boolean;
        }[]
      )
        .map((s) => `${s.ip.addr}:${s.port} ${s.hostname}${s.enabled ? '' : ' disabled'}`)
        .sort();
    const expected = async (pods: string[], disabled: string[] = []) => {
      const out: string[] = [];
      for (const p of pods) {
        const [e] = await c.entries(p);
        if (!e) return undefined;
        const node = Object.entries(NODES).find(([, ip]) => ip === e.nodeIP)![0];
        out.push(`${e.nodeIP}:${e.nodePort} ${node}${disabled.includes(p) ? ' disabled' : ''}`);
      }
      return out.sort();
    };
    const converged = async (pods: string[], disabled: string[] = []) =>
      JSON.stringify(await expected(pods, disabled)) === JSON.stringify(servers());

    await pod('web-1', 'n1', 1);
    await pod('web-2', 'n2', 2);
    await eventually(() => converged(['web-1', 'web-2']), 10_000, 'initial pool');
    assert.ok(!servers().some((s) => s.includes(NODES.n3)), 'n3 hosts no backend Pod');
    assert.ok(sim.objects('virtualservice').get('c1--default-web-TCP-80'), 'the L4 virtual service');

    for (const [i, name] of ['web-3', 'web-4', 'web-5', 'web-6'].entries())
      await pod(name, (['n1', 'n2', 'n3'] as const)[i % 3]!, 3 + i);
    const all = ['web-1', 'web-2', 'web-3', 'web-4', 'web-5', 'web-6'];
    await eventually(() => converged(all), 15_000, 'scaled out');
    await ready('web-3', false);
    await eventually(() => converged(all, ['web-3']), 10_000, 'not ready: disabled');
    await ready('web-3', true);
    await eventually(() => converged(all), 10_000, 'ready again');
    for (const name of ['web-1', 'web-4', 'web-5'])
      await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    await eventually(() => converged(['web-2', 'web-3', 'web-6']), 15_000, 'Pods deleted');

    await first.ctl.settled();
    await first.stop();
    const writes = sim.stats.writes;
    const second = await controller(t, kc, url);
    await eventually(() => second.ctl.stats.lbReconciles > 0, 10_000, 'the new controller synced');
    await second.ctl.settled();
    assert.equal(sim.stats.writes, writes, 'a restart with nothing changed writes nothing');
  });
});
