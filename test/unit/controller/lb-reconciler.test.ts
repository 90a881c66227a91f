import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryAdapter } from '../../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { LbReconciler } from '../../../src/controller/lb-reconciler.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import { nodeSchema, podSchema, serviceSchema } from '../../../src/kube/objects.ts';
import type { ClusterView } from '../../../src/source/desired.ts';
import { useSandbox } from '../../support/sandbox.ts';

const svc = serviceSchema.parse({
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    type: 'LoadBalancer',
    selector: { app: 'web' },
    ports: [{ name: 'http', port: 80, targetPort: 8080 }],
  },
});
const pod = (nodePort: number) =>
  podSchema.parse({
    metadata: {
      name: 'p',
      namespace: 'default',
      labels: { app: 'web' },
      annotations: {
        'nodeportlocal.antrea.io': JSON.stringify([
          { podPort: 8080, nodeIP: '192.0.2.1', nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
        ]),
      },
    },
    spec: { nodeName: 'n1', containers: [{ name: 'c' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
const view = (nodePort: number): ClusterView => ({
  services: [svc],
  ingresses: [],
  ingressClasses: [],
  pods: [pod(nodePort)],
  nodes: [
    nodeSchema.parse({
      metadata: { name: 'n1' },
      status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
    }),
  ],
});

it('writes a pool at most once per interval; a deferred update lands on a later pass', async (t) => {
  const { kc } = await useSandbox(t);
  const config = parseControllerConfig(
    'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}',
  );
  const adapter = new MemoryAdapter({ owner: 'c1' });
  const r = new LbReconciler({
    kubeConfig: kc,
    config,
    adapter,
    events: { record: async () => {} },
    state: new StateTracker('c1', 'memory'),
    poolIntervalMs: 100,
  });
  let now = 1000;
  const clock = () => now;
  const first = await r.reconcile(view(61000), clock);
  assert.deepEqual(
    first.applied.map((a) => `${a.change.op} ${a.change.kind}`),
    ['create pool', 'create virtualService'],
  );
  now += 40;
  const second = await r.reconcile(view(61001), clock);
  assert.equal(second.applied.length, 0, 'too soon: deferred');
  assert.equal(second.deferredMs, 60);
  now += 60;
  const third = await r.reconcile(view(61001), clock);
  assert.deepEqual(
    third.applied.map((a) => `${a.change.op} ${a.change.kind}`),
    ['update pool'],
  );
  assert.equal(adapter.device.pools.get('c1--default-web-http')!.pool.members[0]!.port, 61001);
});

it('events: the service controller’s reasons; waiting is Normal within the grace period, then Warning', async (t) => {
  const { kc } = await useSandbox(t);
  const config = parseControllerConfig(
    'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}',
  );
  const seen: string[] = [];
  const r = new LbReconciler({
    kubeConfig: kc,
    config,
    adapter: new MemoryAdapter({ owner: 'c1' }),
    events: {
      record: async (_t, type, reason) => {
        seen.push(`${type} ${reason}`);
      },
    },
    state: new StateTracker('c1', 'memory'),
    waitGraceMs: 50,
    poolIntervalMs: 0,
  });
  // A new Service whose only Pod has no NodePortLocal mapping yet.
  const waiting: ClusterView = {
    ...view(61000),
    pods: [{ ...pod(61000), metadata: { ...pod(61000).metadata, annotations: {} } }],
  };
  await r.reconcile(waiting);
  assert.deepEqual(seen.sort(), ['Normal EnsuredLoadBalancer', 'Normal WaitingForNodePortLocal']);
  seen.length = 0;
  await new Promise((res) => setTimeout(res, 60));
  await r.reconcile(waiting);
  assert.deepEqual(seen.sort(), ['Warning NoReadyMembers', 'Warning WaitingForNodePortLocal']);
  seen.length = 0;
  // The mapping arrives: the pool is updated, the warnings stop.
  await r.reconcile(view(61000));
  assert.deepEqual(seen, ['Normal UpdatedLoadBalancer']);
});
