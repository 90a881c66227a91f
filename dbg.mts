import { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from './adapters/memory/adapter.ts';
import { parseControllerConfig } from './src/config/controller-config.ts';
import { LbReconciler } from './src/controller/lb-reconciler.ts';
import { StateTracker } from './src/controller/state.ts';
import { serviceSchema } from './src/kube/objects.ts';
const config = parseControllerConfig(
  'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
);
const services = [0, 1].map((s) =>
  serviceSchema.parse({
    metadata: { name: `svc-${s}`, namespace: 'default', uid: `s${s}`, resourceVersion: '1' },
    spec: {
      type: 'LoadBalancer',
      selector: { app: `app-${s}` },
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
    status: { loadBalancer: { ingress: [] } },
  }),
);
const a: any[] = [],
  b: any[] = [],
  n: any[] = [];
const view = () => ({ services, nodes: n, ingresses: a, ingressClasses: b, pods: [] });
const memory = new MemoryAdapter({ owner: 'c1' });
const lb = new LbReconciler({
  kubeConfig: new KubeConfig(),
  config,
  adapter: memory,
  events: { record: async () => {} },
  state: new StateTracker('c1', 'memory'),
  statusWriter: { write: async () => {} },
  poolIntervalMs: 0,
});
await lb.reconcile(view());
memory.device.pools.clear();
lb.invalidate();
const r = await lb.reconcile(view(), Date.now, new Set());
console.log(
  r.applied.map((a) => a.change.name),
  [...memory.device.pools.keys()],
  lb.plans,
);
