/**
 * Services without a selector (the Gateway API suite's HTTPRouteServiceTypes "manual" Services):
 * their members are the NodePortLocal mappings of the Pods their EndpointSlices name, kept in
 * step as the slices and those Pods change. Slices the EndpointSlice controller writes are not
 * even listed; a targetRef into another namespace or to another kind is refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, DiscoveryV1Api, type V1EndpointSlice } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_ENABLED_ANNOTATION, NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODE_IP = '192.0.2.1';

const slice = (name: string, pods: { name: string; namespace?: string; kind?: string }[], labels = {}) =>
  ({
    metadata: { name, labels: { 'kubernetes.io/service-name': 'manual', ...labels } },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    endpoints: pods.map((p, i) => ({
      addresses: [`10.244.0.${i + 1}`],
      conditions: { ready: true },
      targetRef: { kind: p.kind ?? 'Pod', name: p.name, namespace: p.namespace ?? 'default' },
    })),
  }) as V1EndpointSlice;

describe('EndpointSlices of Services without a selector', () => {
  it('members follow the named Pods and the slices; the EndpointSlice controller’s and foreign targetRefs are left out', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const core = kc.makeApiClient(CoreV1Api);
    const discovery = kc.makeApiClient(DiscoveryV1Api);
    await c.node('n1', { internal: [NODE_IP] });
    // Pods no Service selects, each with a mapping of its port http (8080).
    for (const [name, port] of [
      ['a-1', 61001],
      ['b-1', 61002],
      ['c-1', 61003],
    ] as const)
      await c.nplPod(name, {
        node: 'n1',
        labels: { app: 'other' },
        entries: [{ nodeIP: NODE_IP, nodePort: port }],
      });
    await core.createNamespacedService({
      namespace: 'default',
      body: {
        metadata: { name: 'manual', annotations: { [NPL_ENABLED_ANNOTATION]: 'true' } },
        spec: { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 'http' as never }] },
      },
    });
    await discovery.createNamespacedEndpointSlice({
      namespace: 'default',
      body: slice('manual-1', [
        { name: 'a-1' },
        { name: 'x', namespace: 'kube-system' },
        { name: 'b-1', kind: 'Node' },
      ]),
    });
    // As the EndpointSlice controller would write one: never listed, so c-1 is not a member.
    await discovery.createNamespacedEndpointSlice({
      namespace: 'default',
      body: slice('manual-ctl', [{ name: 'c-1' }], {
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      }),
    });
    const device = new MemoryLoadBalancer();
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}\n`,
      ),
      adapter: new MemoryAdapter({ owner: 'c1', device }),
      events: new RecordingEvents(),
      coalesceMs: 20,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();
    const ports = () =>
      [...device.pools.values()]
        .filter(({ pool }) => pool.service === 'default/manual')
        .flatMap(({ pool }) => pool.members.map((m) => `${m.address}:${m.port}`))
        .sort();
    await eventually(() => ports().join() === `${NODE_IP}:61001`, 5000, 'a-1 alone');
    // And it stays so: c-1 (named by the controller-written slice) and the foreign refs never come.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(ports(), [`${NODE_IP}:61001`]);

    // The named Pod's mapping moves: its pool follows (the Pod names its Service through the slice).
    await c.patchPodStatus('a-1', {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            { podPort: 8080, nodeIP: NODE_IP, nodePort: 61011, protocol: 'tcp', ipFamily: 'IPv4' },
          ]),
        },
      },
    });
    await eventually(() => ports().join() === `${NODE_IP}:61011`, 5000, 'a-1 moved');

    // The slice names b-1 too; then a second slice names c-1.
    await discovery.replaceNamespacedEndpointSlice({
      name: 'manual-1',
      namespace: 'default',
      body: slice('manual-1', [{ name: 'a-1' }, { name: 'b-1' }]),
    });
    await eventually(() => ports().join() === `${NODE_IP}:61002,${NODE_IP}:61011`, 5000, 'b-1 added');
    await discovery.createNamespacedEndpointSlice({
      namespace: 'default',
      body: slice('manual-2', [{ name: 'c-1' }, { name: 'a-1' }]),
    });
    await eventually(() => ports().length === 3, 5000, 'c-1 from the second slice, a-1 once');

    // The slices go: no member is left.
    await discovery.deleteNamespacedEndpointSlice({ name: 'manual-1', namespace: 'default' });
    await discovery.deleteNamespacedEndpointSlice({ name: 'manual-2', namespace: 'default' });
    await eventually(() => ports().length === 0, 5000, 'no member');
  });
});
