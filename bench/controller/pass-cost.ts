/**
 * What one load-balancer pass costs per single-Pod change, at two scales side by side in one
 * process: the controller's pass (desired-state cache, plan, gates, apply on the memory adapter,
 * record, status, Events) over a cluster view of S LoadBalancer Services with 10 Pods each, after
 * a cold pass, then N changes of one Pod's NodePortLocal mapping each (the Service named as
 * changed, as the controller's handlers name it). CPU time (process.cpuUsage) per change, so a
 * slow day of a shared machine cannot hide a regression; the scales alternate, and the median of
 * the rounds is reported with the ratio.
 *
 *   node --import tsx bench/controller/pass-cost.ts [--small 500] [--large 5000] [--changes 400] [--rounds 3]
 *     [--profile FILE: a CPU profile of the large scale's changes alone]
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { LbReconciler } from '../../src/controller/lb-reconciler.ts';
import type { LbIngress } from '../../src/controller/lb-status.ts';
import { StateTracker } from '../../src/controller/state.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { nodeSchema, podSchema, serviceSchema, type Pod } from '../../src/kube/objects.ts';
import type { PodSelector } from '../../src/source/members.ts';
import type { Service } from '../../src/kube/objects.ts';
import type { ClusterView } from '../../src/source/view.ts';

const { values } = parseArgs({
  options: {
    small: { type: 'string', default: '500' },
    large: { type: 'string', default: '5000' },
    changes: { type: 'string', default: '400' },
    rounds: { type: 'string', default: '3' },
    profile: { type: 'string' },
  },
});
const NODES = 50;
const PER_SERVICE = 10;
const nodeIP = (n: number) => `192.0.2.${n + 1}`;
const ann = (node: number, nodePort: number) =>
  JSON.stringify([{ podPort: 8080, nodeIP: nodeIP(node), nodePort, protocol: 'tcp', ipFamily: 'IPv4' }]);

function pod(i: number, services: number, nodePort: number, rv: number): Pod {
  return podSchema.parse({
    metadata: {
      name: `pod-${i}`,
      namespace: 'default',
      uid: `p${i}`,
      resourceVersion: String(rv),
      labels: { app: `app-${i % services}` },
      annotations: { [NPL_POD_ANNOTATION]: ann(i % NODES, nodePort) },
    },
    spec: {
      nodeName: `node-${i % NODES}`,
      containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }],
    },
    status: {
      phase: 'Running',
      podIP: `10.244.${i >> 8}.${i & 255}`,
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
}

/** Pods by their app label, kept in step as the controller's cache keeps its index. */
class AppIndex implements PodSelector {
  private readonly byApp = new Map<string, Map<string, Pod>>();
  put(p: Pod): void {
    const app = p.metadata.labels.app!;
    let m = this.byApp.get(app);
    if (!m) this.byApp.set(app, (m = new Map()));
    m.set(p.metadata.name, p);
  }
  select(svc: Service): Pod[] {
    return [...(this.byApp.get(svc.spec.selector?.app ?? '')?.values() ?? [])];
  }
}

interface Scale {
  index: AppIndex;
  services: number;
  lb: LbReconciler;
  view: ClusterView;
  pods: Pod[];
  rv: number;
}

async function scale(services: number): Promise<Scale> {
  const published = new Map<string, LbIngress[]>();
  const view: ClusterView = {
    services: Array.from({ length: services }, (_, s) =>
      serviceSchema.parse({
        metadata: { name: `svc-${s}`, namespace: 'default', uid: `s${s}`, resourceVersion: '1' },
        spec: {
          type: 'LoadBalancer',
          selector: { app: `app-${s}` },
          ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        },
        status: { loadBalancer: { ingress: [] } },
      }),
    ),
    ingresses: [],
    ingressClasses: [],
    nodes: Array.from({ length: NODES }, (_, n) =>
      nodeSchema.parse({
        metadata: { name: `node-${n}`, resourceVersion: '1' },
        status: {
          addresses: [{ type: 'InternalIP', address: nodeIP(n) }],
          conditions: [{ type: 'Ready', status: 'True' }],
        },
      }),
    ),
    pods: [],
  };
  const pods = Array.from({ length: services * PER_SERVICE }, (_, i) =>
    pod(i, services, 61000 + Math.floor(i / NODES), 1),
  );
  const index = new AppIndex();
  for (const p of pods) index.put(p);
  // As the controller's cache hands it out: the Pod list only when asked for, the index live.
  Object.defineProperty(view, 'pods', { get: () => pods, enumerable: true });
  view.podIndex = index;
  const byKey = new Map(view.services.map((svc) => [`default/${svc.metadata.name}`, svc]));
  view.serviceByKey = (k) => byKey.get(k);
  view.podByKey = (k) => pods[Number(k.slice('default/pod-'.length))];
  const lb = new LbReconciler({
    kubeConfig: new KubeConfig(),
    config: parseControllerConfig(
      'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/15]}',
    ),
    adapter: new MemoryAdapter({ owner: 'bench' }),
    events: { record: async () => {} },
    state: new StateTracker('bench', 'memory'),
    // Statuses as the API server would take them: the next view's Services carry them.
    statusWriter: { write: async (_kind, ns, name, ingress) => void published.set(`${ns}/${name}`, ingress) },
    poolIntervalMs: 0,
  });
  await lb.reconcile(view);
  view.services = view.services.map((svc) =>
    serviceSchema.parse({
      ...svc,
      status: { loadBalancer: { ingress: published.get(`default/${svc.metadata.name}`) ?? [] } },
    }),
  );
  byKey.clear();
  for (const svc of view.services) byKey.set(`default/${svc.metadata.name}`, svc);
  await lb.reconcile(view);
  return { index, services, lb, view, pods, rv: 1 };
}

/** CPU ms per change over `n` single-Pod changes, each its own pass. */
async function changes(s: Scale, n: number, offset: number): Promise<number> {
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < n; k++) {
    const i = ((k + offset) * 7919) % s.pods.length;
    const svc = `default/svc-${i % s.services}`;
    s.rv++;
    const after = pod(i, s.services, 62000 + (s.rv % 1000), s.rv);
    s.pods[i] = after;
    s.index.put(after);
    const r = await s.lb.reconcile(s.view, Date.now, new Set([svc]));
    if (r.applied.length !== 1) throw new Error(`expected one pool write, got ${r.applied.length}`);
  }
  const used = process.cpuUsage(cpu0);
  return (used.user + used.system) / 1000 / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const small = await scale(Number(values.small));
const large = await scale(Number(values.large));
const n = Number(values.changes);
// Warm-up: as many changes as a round, at each scale, so the rounds measure compiled code.
await changes(small, n, 0);
await changes(large, n, 0);
const perSmall: number[] = [];
const perLarge: number[] = [];
for (let r = 0; r < Number(values.rounds); r++) {
  perSmall.push(await changes(small, n, (r + 1) * n));
  perLarge.push(await changes(large, n, (r + 1) * n));
}
if (values.profile) {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  // Pods of their own (the same offset after a whole number of rounds would write the ports they have).
  await changes(large, n, (Number(values.rounds) + 1) * n);
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(values.profile, JSON.stringify(profile));
  session.disconnect();
}
const a = median(perSmall);
const b = median(perLarge);
console.log(
  `${small.services} Services / ${small.pods.length} Pods: ${a.toFixed(3)} ms CPU per change (rounds: ${perSmall.map((x) => x.toFixed(3)).join(', ')})`,
);
console.log(
  `${large.services} Services / ${large.pods.length} Pods: ${b.toFixed(3)} ms CPU per change (rounds: ${perLarge.map((x) => x.toFixed(3)).join(', ')})`,
);
console.log(`ratio ${(b / a).toFixed(2)}x (goal <= 1.25x)`);
console.log(
  `JSON ${JSON.stringify({ small: small.services, large: large.services, perSmall, perLarge, ratio: b / a })}`,
);
