/**
 * End to end with F5: the sandbox, NodePortLocal agents on three nodes, the controller with the F5
 * adapter on the BIG-IP simulator. Pools list only the nodes that host a backend Pod, at their
 * NodePortLocal ports, each member labelled with its node; scale-out and scale-in converge; a
 * malformed desired state (a bogus VIP) never reaches the device and is an Event instead.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { VIP_ANNOTATION } from '../../src/kube/annotations.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { Cluster, RecordingEvents, startAgent } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

// Loopback node addresses: the agents reserve their ports on the node IP. No traffic is sent.
const NODES = { n1: '127.0.10.1', n2: '127.0.10.2', n3: '127.0.10.3' } as const;

describe('F5 end to end on the sandbox with agents', () => {
  it('pools follow the Pods: hosting nodes only, one member per Pod at its NPL port, labelled with the node', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    for (const [name, ip] of Object.entries(NODES)) await c.node(name, { internal: [ip] });
    for (const [i, name] of Object.keys(NODES).entries()) {
      await startAgent(t, kc, { nodeName: name, range: { start: 41000 + i * 100, end: 41099 + i * 100 } });
    }
    const sim = new BigIpSimulator({ latencyMs: 20 });
    const url = await sim.start();
    const adapter = new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin' });
    t.after(async () => {
      await adapter.close();
      await sim.close();
    });
    const events = new RecordingEvents(new EventRecorder(kc, 'npl-lb-controller', 'test', { dedupeMs: 0 }));
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
      ),
      adapter,
      events,
      coalesceMs: 20,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await adapter.verify();
    await ctl.start();

    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    const pod = async (name: string, node: keyof typeof NODES, i: number) => {
      await c.pod(name, { node, ips: [`10.244.0.${i}`], ports: [{ name: 'http', containerPort: 8080 }] });
      await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    };
    await pod('web-1', 'n1', 1);
    await pod('web-2', 'n1', 2);
    await pod('web-3', 'n2', 3);

    // AS3 3.56 on the simulator: per-application declarations, the pool in an application of its own.
    const poolPath = '~npl_lb_c1~P_c1--default-web-http~c1--default-web-http';
    /** What the BIG-IP admin sees: member -> node label, from the iControl view. */
    const seen = async () => {
      const r = await adapter.client.call('GET', `/mgmt/tm/ltm/pool/${poolPath}/members`);
      if (r.status !== 200) return [];
      return (r.body as { items: { name: string; description: string }[] }).items
        .map((m) => `${m.name} ${m.description}`)
        .sort();
    };
    /** What the agents published: nodeIP:nodePort node, per Pod. */
    const expected = async (pods: string[]) => {
      const out: string[] = [];
      for (const p of pods) {
        const [e] = await c.entries(p);
        if (!e) return undefined;
        const node = Object.entries(NODES).find(([, ip]) => ip === e.nodeIP)![0];
        out.push(`${e.nodeIP}:${e.nodePort} node ${node}`);
      }
      return out.sort();
    };
    const converged = async (pods: string[]) => {
      const want = await expected(pods);
      const got = await seen();
      return want !== undefined && JSON.stringify(want) === JSON.stringify(got);
    };
    await eventually(() => converged(['web-1', 'web-2', 'web-3']), 10_000, 'initial pool');
    const addresses = (await seen()).map((m) => m.split(':')[0]);
    assert.ok(!addresses.includes(NODES.n3), 'n3 hosts no backend Pod and is not in the pool');

    // Scale out to 8 across all nodes, then in to 2.
    const more = ['web-4', 'web-5', 'web-6', 'web-7', 'web-8'];
    for (const [i, name] of more.entries()) await pod(name, (['n1', 'n2', 'n3'] as const)[i % 3]!, 4 + i);
    const all = ['web-1', 'web-2', 'web-3', ...more];
    await eventually(() => converged(all), 15_000, 'scaled out');
    for (const name of ['web-1', 'web-3', 'web-4', 'web-5', 'web-6', 'web-7']) {
      await c.core.deleteNamespacedPod({ name, namespace: 'default' });
    }
    await eventually(() => converged(['web-2', 'web-8']), 15_000, 'scaled in');

    // A bogus VIP: refused at the validation boundary, never sent, and the Service gets an Event.
    await c.service('bad', {
      type: 'LoadBalancer',
      enabled: null,
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    await c.patchService('bad', { metadata: { annotations: { [VIP_ANNOTATION]: 'not-an-ip' } } });
    await eventually(
      () =>
        events.seen.some(
          (e) =>
            e.target === 'default/bad' && e.reason === 'InvalidVIP' && /not an IPv4 address/.test(e.message),
        ),
      10_000,
      'InvalidVIP event',
    );
    assert.equal(sim.stats.rejected, 0, 'the device never received a declaration it would reject');
    assert.ok(await converged(['web-2', 'web-8']), 'the rest still applied');
  });
});
