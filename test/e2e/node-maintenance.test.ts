/**
 * Node maintenance drains the load balancer first: a node labelled
 * node.kubernetes.io/exclude-from-external-load-balancers, tainted ToBeDeletedByClusterAutoscaler
 * or (with drainCordonedNodes) cordoned has its members drained within 2 s and removed once the
 * drain time has passed; back in service, they return. Events on the Node say so. NodePortLocal
 * and NodePort modes.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { EXCLUDE_LABEL } from '../../src/source/maintenance.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODES = { n1: '192.0.2.201', n2: '192.0.2.202' } as const;

async function setup(t: TestContext, extra = '') {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  for (const [name, ip] of Object.entries(NODES)) {
    await c.node(name, { internal: [ip] });
    // Ready, which NodePort mode asks of a node.
    await c.core.patchNodeStatus(
      {
        name,
        body: {
          status: {
            addresses: [{ type: 'InternalIP', address: ip }],
            conditions: [{ type: 'Ready', status: 'True' }],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
  });
  for (const [i, node] of (['n1', 'n2'] as const).entries()) {
    await c.nplPod(`web-${i + 1}`, { node, entries: [{ nodeIP: NODES[node], nodePort: 61000 }] });
  }
  const device = new MemoryLoadBalancer();
  const events = new RecordingEvents();
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\ndrainSeconds: 1\n${extra}`,
    ),
    adapter: new MemoryAdapter({ owner: 'c1', device }),
    events,
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  const members = () =>
    (device.pools.get('c1--default-web-http')?.pool.members ?? [])
      .map((m) => `${m.node}${m.enabled ? '' : ' draining'}`)
      .sort()
      .join(',');
  await eventually(() => members() === 'n1,n2', 5000, 'both nodes serve');
  return { kc, c, device, events, members };
}

const patchNode = (kc: KubeConfig, c: Cluster, name: string, body: object) =>
  c.core.patchNode({ name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));

describe('node maintenance drains the load balancer first', () => {
  for (const [how, on, off] of [
    [
      'labelled',
      { metadata: { labels: { [EXCLUDE_LABEL]: '' } } },
      { metadata: { labels: { [EXCLUDE_LABEL]: null } } },
    ],
    [
      'tainted by the cluster autoscaler',
      {
        spec: {
          taints: [{ key: 'ToBeDeletedByClusterAutoscaler', value: '1700000000', effect: 'NoSchedule' }],
        },
      },
      { spec: { taints: [] } },
    ],
    ['cordoned', { spec: { unschedulable: true } }, { spec: { unschedulable: null } }],
  ] as const) {
    it(`a node ${how}: members drain within 2 s, leave after the drain time, return when it serves again`, async (t) => {
      const { kc, c, events, members } = await setup(t);
      const t0 = Date.now();
      await patchNode(kc, c, 'n2', on);
      await eventually(() => members() === 'n1,n2 draining', 2000, 'drained');
      assert.ok(Date.now() - t0 < 2000);
      await eventually(() => members() === 'n1', 3000, 'removed after the drain time (1 s)');
      assert.ok(Date.now() - t0 >= 1000, 'not before the drain time');
      await patchNode(kc, c, 'n2', off);
      await eventually(() => members() === 'n1,n2', 2000, 'back in rotation');
      const onNode = events.seen.filter((e) => e.target === '/n2').map((e) => e.reason);
      for (const r of [
        'DrainingLoadBalancerMembers',
        'RemovedLoadBalancerMembers',
        'RestoredLoadBalancerMembers',
      ])
        assert.ok(onNode.includes(r), `${r} on the Node`);
    });
  }

  it('drainCordonedNodes: false keeps a cordoned node serving', async (t) => {
    const { kc, c, members } = await setup(t, 'drainCordonedNodes: false');
    await patchNode(kc, c, 'n2', { spec: { unschedulable: true } });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(members(), 'n1,n2');
  });

  it('NodePort mode: the node itself leaves the pools the same way', async (t) => {
    const { kc, c, members } = await setup(t, 'serviceType: NodePort');
    await patchNode(kc, c, 'n1', { metadata: { labels: { [EXCLUDE_LABEL]: 'true' } } });
    await eventually(() => members() === 'n1 draining,n2', 2000, 'drained');
    await eventually(() => members() === 'n2', 3000, 'removed');
  });
});
