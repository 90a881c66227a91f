/**
 * The LB pass without an API server: a hand-built cluster view, the memory adapter, a status
 * writer and an Event sink that record. First pass creates and publishes; a second pass over the
 * same cluster (statuses as written) writes nothing; a device that refuses a virtual service
 * leaves its port marked and says why in an Event.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import type { LbIngress } from '../../../src/controller/lb-status.ts';
import { LbReconciler } from '../../../src/controller/lb-reconciler.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import type { StatusWriter } from '../../../src/controller/status-writer.ts';
import { NPL_POD_ANNOTATION } from '../../../src/kube/annotations.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  podSchema,
  serviceSchema,
} from '../../../src/kube/objects.ts';
import type { ClusterView } from '../../../src/source/desired.ts';

const config = parseControllerConfig(
  'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
);

function view(serviceStatus: LbIngress[] = []): ClusterView {
  return {
    services: [
      serviceSchema.parse({
        metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '1' },
        spec: {
          type: 'LoadBalancer',
          selector: { app: 'web' },
          ports: [
            { name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' },
            { name: 'alt', port: 81, targetPort: 8080, protocol: 'TCP' },
          ],
        },
        status: { loadBalancer: { ingress: serviceStatus } },
      }),
    ],
    ingresses: [],
    ingressClasses: [],
    nodes: [
      nodeSchema.parse({
        metadata: { name: 'n1', resourceVersion: '1' },
        status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
      }),
    ],
    pods: [
      podSchema.parse({
        metadata: {
          name: 'web-1',
          namespace: 'default',
          uid: 'p1',
          resourceVersion: '1',
          labels: { app: 'web' },
          annotations: {
            [NPL_POD_ANNOTATION]: JSON.stringify([
              { podPort: 8080, nodeIP: '192.0.2.1', nodePort: 61000, protocol: 'tcp', ipFamily: 'IPv4' },
            ]),
          },
        },
        spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }] },
        status: { phase: 'Running', podIP: '10.244.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
      }),
    ],
  };
}

function rig(fault?: (name: string) => boolean, sources?: string[]) {
  const adapter = new MemoryAdapter({
    owner: 'c1',
    ...(fault
      ? {
          fault: (c) =>
            fault(c.name)
              ? {
                  code: 'Invalid' as const,
                  message: 'refused by the device',
                  terminal: true,
                  ...(sources ? { sources } : {}),
                }
              : undefined,
        }
      : {}),
  });
  const statuses: { kind: string; name: string; ingress: LbIngress[] }[] = [];
  const statusWriter: StatusWriter = {
    write: async (kind, namespace, name, ingress) =>
      void statuses.push({ kind, name: `${namespace}/${name}`, ingress }),
  };
  const events: { reason: string; message: string; on: string }[] = [];
  const lb = new LbReconciler({
    kubeConfig: new KubeConfig(),
    config,
    adapter,
    events: {
      record: async (t, _type, reason, message) =>
        void events.push({ reason, message, on: `${t.kind} ${t.namespace}/${t.name}` }),
    },
    state: new StateTracker('c1', 'memory'),
    statusWriter,
  });
  return { adapter, lb, statuses, events };
}

describe('LB reconciler (no API server)', () => {
  it('creates and publishes; the same cluster again writes nothing, status included', async () => {
    const r = rig();
    const first = await r.lb.reconcile(view());
    assert.deepEqual(first.applied.map((a) => `${a.change.op} ${a.change.name}`).sort(), [
      'create c1--default-web-TCP-80',
      'create c1--default-web-TCP-81',
      'create c1--default-web-alt',
      'create c1--default-web-http',
    ]);
    assert.equal(r.statuses.length, 1);
    const written = r.statuses[0]!.ingress;
    assert.equal(written[0]!.ipMode, 'Proxy');
    assert.deepEqual(written[0]!.ports, [
      { port: 80, protocol: 'TCP' },
      { port: 81, protocol: 'TCP' },
    ]);
    const writes = r.adapter.device.writes.length;
    const again = await r.lb.reconcile(view(written));
    assert.deepEqual(again.applied, []);
    assert.equal(r.adapter.device.writes.length, writes, 'no device write');
    assert.equal(r.statuses.length, 1, 'no status write');
  });

  it('a virtual service the device refuses: its port is marked, the VIP stays for the other, an Event says why', async () => {
    const r = rig((name) => name === 'c1--default-web-TCP-81');
    await r.lb.reconcile(view());
    assert.deepEqual(r.statuses.at(-1)!.ingress[0]!.ports, [
      { port: 80, protocol: 'TCP' },
      { port: 81, protocol: 'TCP', error: 'npl-lb.io/Invalid' },
    ]);
    assert.ok(
      r.events.some((e) => e.reason === 'SyncLoadBalancerFailed' && /refused by the device/.test(e.message)),
      JSON.stringify(r.events),
    );
    // Parked: the same desired state is not sent again.
    const again = await r.lb.reconcile(view(r.statuses.at(-1)!.ingress));
    assert.deepEqual(again.applied, []);
  });

  it('a shared Ingress frontend refused for one tenant: only that Ingress is told, the other is not', async () => {
    const r = rig((name) => name.includes('ingress'), ['default/b']);
    const ingress = (name: string) =>
      ingressSchema.parse({
        metadata: { name, namespace: 'default', uid: `i-${name}`, resourceVersion: '1' },
        spec: {
          ingressClassName: 'npl-lb',
          rules: [
            {
              host: `${name}.example.com`,
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: 'web', port: { name: 'http' } } },
                  },
                ],
              },
            },
          ],
        },
      });
    const v = view();
    const cls = ingressClassSchema.parse({
      metadata: { name: 'npl-lb', resourceVersion: '1' },
      spec: { controller: 'npl-lb.io/ingress-controller' },
    });
    const res = await r.lb.reconcile({
      ...v,
      ingresses: [ingress('a'), ingress('b')],
      ingressClasses: [cls],
    });
    const vs = res.applied.find(
      (a) => a.change.kind === 'virtualService' && a.change.name.includes('ingress'),
    );
    assert.ok(vs && !vs.ok, JSON.stringify(res.applied.map((a) => a.change.name)));
    const told = r.events.filter((e) => e.reason === 'SyncLoadBalancerFailed').map((e) => e.on);
    assert.deepEqual(told, ['Ingress default/b'], 'the culprit alone');
  });
});
