/**
 * F5 benchmark. (1) 1,000 LoadBalancer Services with 10 members each: the AS3 declaration's size
 * and the time to render it and to validate it against the AS3 schema (medians of 5). (2) The
 * sandbox (own process), the controller with the F5 adapter and the BIG-IP simulator at 2 s per
 * declaration: one Service scaled from 3 to 50 Pods, first 8 at a time, then (scaled back to 3)
 * paced evenly over 6 s; declarations posted and time to converge. A declaration is in flight at
 * a time and what arrives meanwhile goes in the next, so the paced run may post at most
 * 1 + ceil(6 s / 2 s) = 4.
 * (3) Whole-tenant against per-application declarations at 1,000 Services (modes.ts).
 * Loopback only; bounded (the run aborts after 15 minutes).
 *
 *   npm run bench:f5
 */
import { KubeConfig } from '@kubernetes/client-node';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { validateAs3 } from '../../adapters/f5/as3-validate.ts';
import { APP, renderPool, renderVirtualService } from '../../adapters/f5/declaration.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { dispatcher, pool as inParallel, quantile, send, printTable } from '../http-load.ts';
import { startSandboxProcess } from '../sandbox-process.ts';
import { bothModes, poolMembers, printModes } from './modes.ts';

const deadline = setTimeout(() => {
  console.error('benchmark exceeded 15 minutes; aborting');
  process.exit(1);
}, 900_000);

const SERVICES = 1000;
const PACED_MS = 6000;
const DECLARATION_MS = 2000;
const median = (xs: number[]) => quantile(xs, 0.5);

// (1) Render and validate.
const pools: Pool[] = [];
const vss: VirtualService[] = [];
for (let i = 0; i < SERVICES; i++) {
  const name = `bench--default-svc-${i}-http`;
  pools.push({
    name,
    protocol: 'TCP',
    health: 'tcp',
    service: `default/svc-${i}`,
    servicePort: 'http',
    members: Array.from({ length: 10 }, (_, m) => ({
      address: `192.0.2.${(m % 50) + 1}`,
      port: 61000 + i,
      node: `node-${m % 50}`,
      pod: `default/svc-${i}-${m}`,
      enabled: true,
    })),
  });
  vss.push({
    kind: 'l4',
    name: `bench--default-svc-${i}-TCP-80`,
    vip: `198.18.${i >> 8}.${i & 255}`,
    port: 80,
    protocol: 'TCP',
    pool: name,
    source: `default/svc-${i}`,
  });
}
const render = () => {
  const app: Record<string, unknown> = { class: 'Application', template: 'generic' };
  for (const p of pools) app[p.name] = renderPool(p, 'bench');
  for (const v of vss) Object.assign(app, renderVirtualService(v, 'bench'));
  return {
    class: 'ADC',
    schemaVersion: '3.56.0',
    id: 'bench',
    npl_lb_bench: { class: 'Tenant', [APP]: app },
  };
};
const t0 = performance.now();
validateAs3({}); // compiles the schema once
const compileMs = performance.now() - t0;
const renderMs: number[] = [];
const validateMs: number[] = [];
let size = 0;
for (let k = 0; k < 5; k++) {
  const a = performance.now();
  const body = render();
  size = JSON.stringify(body).length;
  const b = performance.now();
  const problems = validateAs3(body);
  const c = performance.now();
  if (problems.length > 0) throw new Error(`declaration invalid: ${problems[0]!.path}`);
  renderMs.push(b - a);
  validateMs.push(c - b);
}

// (2) Scale-out through the whole stack.
const { url, child } = await startSandboxProcess();
const sim = new BigIpSimulator({ latencyMs: DECLARATION_MS });
const simUrl = await sim.start();
const adapter = new F5Adapter({ owner: 'bench', url: simUrl, username: 'admin', password: 'admin' });
let controller: NplController | undefined;
try {
  const nodeIP = (n: number) => `192.0.2.${n + 1}`;
  for (let n = 0; n < 10; n++) {
    await send(url, 'POST', '/api/v1/nodes', {
      metadata: { name: `node-${n}` },
      status: {
        addresses: [{ type: 'InternalIP', address: nodeIP(n) }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
  }
  await send(url, 'POST', '/api/v1/namespaces/default/services', {
    metadata: { name: 'web', annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
    spec: {
      type: 'LoadBalancer',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
  });
  const pod = async (i: number) => {
    await send(url, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: `web-${i}`, labels: { app: 'web' } },
      spec: {
        nodeName: `node-${i % 10}`,
        containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }],
      },
    });
    await send(
      url,
      'PATCH',
      `/api/v1/namespaces/default/pods/web-${i}/status`,
      {
        metadata: {
          annotations: {
            [NPL_POD_ANNOTATION]: JSON.stringify([
              {
                podPort: 8080,
                nodeIP: nodeIP(i % 10),
                nodePort: 61000 + i,
                protocol: 'tcp',
                ipFamily: 'IPv4',
              },
            ]),
          },
        },
        status: { phase: 'Running', podIP: `10.244.0.${i}`, conditions: [{ type: 'Ready', status: 'True' }] },
      },
      'application/merge-patch+json',
    );
  };
  for (let i = 0; i < 3; i++) await pod(i);
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: url }));
  controller = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/24]}',
    ),
    adapter,
    events: { record: async () => {} },
    sweepIntervalMs: 0,
  });
  await controller.start();
  const members = () => poolMembers(sim, 'npl_lb_bench', 'bench--default-web-http');
  const t3 = performance.now();
  while (members() < 3) {
    if (performance.now() - t3 > 60_000) throw new Error('the 3 first members never reached the device');
    await new Promise((r) => setTimeout(r, 50));
  }
  await controller.settled();
  const before = sim.stats.declarations;
  const started = performance.now();
  await inParallel(
    Array.from({ length: 47 }, (_, k) => k + 3),
    8,
    pod,
  );
  const created = performance.now() - started;
  while (members() < 50 && performance.now() - started < 60_000) await new Promise((r) => setTimeout(r, 20));
  const convergeMs = performance.now() - started;
  await controller.settled();
  const posted = sim.stats.declarations - before;

  // Back to 3, then the same scale-out paced over 6 s (one Pod every 6000 / 47 ms).
  for (let i = 3; i < 50; i++)
    await send(url, 'DELETE', `/api/v1/namespaces/default/pods/web-${i}`, undefined);
  while (members() > 3 && performance.now() - started < 120_000) await new Promise((r) => setTimeout(r, 50));
  await controller.settled();
  const pacedBefore = sim.stats.declarations;
  const pacedStart = performance.now();
  for (let k = 0; k < 47; k++) {
    const due = pacedStart + (k * PACED_MS) / 47;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await pod(k + 3);
  }
  while (members() < 50 && performance.now() - pacedStart < 60_000)
    await new Promise((r) => setTimeout(r, 20));
  const pacedMs = performance.now() - pacedStart;
  await controller.settled();
  const pacedPosted = sim.stats.declarations - pacedBefore;
  const pacedGoal = 1 + Math.ceil(PACED_MS / DECLARATION_MS);

  const rows: [string, string, string][] = [
    [
      'AS3 declaration for 1,000 L4 services (10 members each)',
      `${(size / 1024 / 1024).toFixed(2)} MiB`,
      `${size} bytes`,
    ],
    ['render the tenant, median of 5', `${median(renderMs).toFixed(1)} ms`, ''],
    [
      'validate against the AS3 3.56.0 schema, median of 5',
      `${median(validateMs).toFixed(1)} ms`,
      `schema compiled once: ${compileMs.toFixed(0)} ms`,
    ],
    [
      'scale-out 3 -> 50 Pods (8 at a time) at 2 s per declaration: declarations posted',
      String(posted),
      `goal <= 2: ${posted <= 2 ? 'met' : 'NOT met'}`,
    ],
    [
      'scale-out 3 -> 50: from the first new Pod to 50 members on the device',
      `${(convergeMs / 1000).toFixed(2)} s`,
      `Pods created over ${(created / 1000).toFixed(2)} s`,
    ],
    [
      `scale-out 3 -> 50 Pods paced over ${PACED_MS / 1000} s: declarations posted`,
      String(pacedPosted),
      `goal <= 1 + ceil(${PACED_MS / 1000} s / ${DECLARATION_MS / 1000} s) = ${pacedGoal}: ${pacedPosted <= pacedGoal ? 'met' : 'NOT met'}`,
    ],
    [
      'paced scale-out: from the first new Pod to 50 members on the device',
      `${(pacedMs / 1000).toFixed(2)} s`,
      `goal <= pacing + 2 declarations = ${(PACED_MS + 2 * DECLARATION_MS) / 1000} s: ${pacedMs <= PACED_MS + 2 * DECLARATION_MS ? 'met' : 'NOT met'}`,
    ],
    [
      'declarations refused by the device (never sent invalid)',
      String(sim.stats.rejected),
      `goal 0: ${sim.stats.rejected === 0 ? 'met' : 'NOT met'}`,
    ],
  ];
  printTable(rows);
  // (3) Whole-tenant against per-application declarations, side by side (modes.ts).
  printModes(await bothModes());
} finally {
  await controller?.stop();
  await adapter.close();
  await sim.close();
  child.kill('SIGTERM');
  clearTimeout(deadline);
  await dispatcher.close();
}
