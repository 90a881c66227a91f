/**
 * Avi benchmark: the sandbox (own process) with 1,000 LoadBalancer Services (3 Pods each) and 20
 * Ingresses of 10 paths (200 paths) of our IngressClass; the controller with the Avi adapter on the
 * Avi Controller simulator at 20 ms per API call. Measures the cold sync (time and calls), then one
 * Service scaled from 3 to 50 Pods: calls made, and writes of its pool per 100 ms window.
 * Loopback only; bounded (the run aborts after 10 minutes).
 *
 *   npm run bench:avi
 */
import { KubeConfig } from '@kubernetes/client-node';
import { AviAdapter } from '../../adapters/avi/adapter.ts';
import PQueue from 'p-queue';
import { AviSession } from '../../adapters/avi/session.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import {
  annotatedPod,
  dispatcher,
  pool as inParallel,
  send,
  printTable,
  createNodes,
  createLbServices,
} from '../http-load.ts';
import { startSandboxProcess } from '../sandbox-process.ts';
import { l7TlsColdSync, l7TlsTable } from './l7-tls.ts';
import { AviSimulatorProcess } from './sim-process.ts';

/** Calls alone, `concurrency` at a time, on a fresh simulator at this latency: their time and its ratio to the ideal. */
async function rawCallFloor(latency: number, concurrency: number, calls: number) {
  const sim = new AviSimulatorProcess();
  const url = await sim.start();
  const session = new AviSession({
    url,
    username: 'admin',
    password: 'admin',
    version: '22.1.3',
    tenant: 'admin',
  });
  try {
    await session.login();
    await sim.setLatency(latency);
    const q = new PQueue({ concurrency });
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        q.add(() =>
          session.call('POST', '/api/pool', {
            name: `floor-${i}`,
            cloud_ref: '/api/cloud?name=Default-Cloud',
            servers: [],
          }),
        ),
      ),
    );
    const ms = performance.now() - t0;
    return { calls, ms, ratio: ms / ((calls / concurrency) * latency) };
  } finally {
    await session.close();
    await sim.close();
  }
}

const deadline = setTimeout(() => {
  console.error('benchmark exceeded 10 minutes; aborting');
  process.exit(1);
}, 600_000);

const SERVICES = 1000;
const NODES = 20;
const LATENCY = 20;
/** The adapter's concurrency (its default). */
const CONCURRENCY = 8;
const nodeIP = (n: number) => `192.0.2.${n + 1}`;

const { url, child } = await startSandboxProcess();
// The device in a process of its own, as a real controller is another machine.
const sim = new AviSimulatorProcess();
const simUrl = await sim.start();
const adapter = new AviAdapter({
  owner: 'bench',
  url: simUrl,
  username: 'admin',
  password: 'admin',
  version: '22.1.3',
  tenant: 'admin',
});
let controller: NplController | undefined;
try {
  await createNodes(url, NODES, nodeIP);
  await createLbServices(url, SERVICES);
  let nextPort = 61000;
  const pod = (name: string, app: string, n: number) =>
    annotatedPod(url, { name, app, n, nodes: NODES, nodeIP, nodePort: nextPort++ });
  await inParallel(
    Array.from({ length: SERVICES * 3 }, (_, k) => k),
    16,
    (k) => pod(`pod-${k}`, `app-${k % SERVICES}`, k),
  );
  await send(url, 'POST', '/apis/networking.k8s.io/v1/ingressclasses', {
    metadata: { name: 'npl' },
    spec: { controller: 'npl-lb.io/ingress-controller' },
  });
  for (let g = 0; g < 20; g++) {
    await send(url, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
      metadata: { name: `ing-${g}` },
      spec: {
        ingressClassName: 'npl',
        rules: [
          {
            host: `app-${g}.example`,
            http: {
              paths: Array.from({ length: 10 }, (_, p) => ({
                path: `/p${p}`,
                pathType: 'Prefix',
                backend: { service: { name: `svc-${g * 10 + p}`, port: { number: 80 } } },
              })),
            },
          },
        ],
      },
    });
  }

  await sim.setLatency(LATENCY);
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: url }));
  controller = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      // Health reads (one call per pool per interval on Avi) are off: this measures the write path.
      'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/20]}\nhealthIntervalSeconds: 0',
    ),
    adapter,
    events: { record: async () => {} },
    sweepIntervalMs: 0,
  });
  const calls0 = (await sim.stats()).calls;
  const t0 = performance.now();
  await controller.start();
  const vsCount = () => sim.count('virtualservice');
  while ((await vsCount()) < SERVICES + 1 && performance.now() - t0 < 300_000)
    await new Promise((r) => setTimeout(r, 50));
  await controller.settled();
  const settledMs = performance.now() - t0;
  const stats = await sim.stats();
  const coldCalls = stats.calls - calls0;
  // The device has everything when its last write is done (the simulator logs a write after its
  // latency, as it answers).
  const coldLog = await sim.writeLog();
  const coldMs = coldLog[coldLog.length - 1]!.at - t0;
  const firstWriteMs = coldLog[0]!.at - t0;
  const ideal = (coldCalls / CONCURRENCY) * LATENCY;
  const coldWrites = coldLog.length;
  const l7 = await sim.get('httppolicyset', 'bench--ingress-npl');
  const rules = ((l7?.http_request_policy as { rules?: unknown[] } | undefined)?.rules ?? []).length;

  // Scale one Service from 3 to 50 Pods, 8 Pods at a time.
  const target = 'bench--default-svc-500-http';
  const servers = async () => (((await sim.get('pool', target))?.servers ?? []) as unknown[]).length;
  const calls1 = stats.calls;
  const log1 = coldLog.length;
  const s0 = performance.now();
  await inParallel(
    Array.from({ length: 47 }, (_, k) => k),
    8,
    (k) => pod(`scale-${k}`, 'app-500', 3000 + k),
  );
  while ((await servers()) < 50 && performance.now() - s0 < 60_000)
    await new Promise((r) => setTimeout(r, 10));
  const scaleMs = performance.now() - s0;
  await controller.settled();
  const writes = await sim.writeLog(log1);
  const scaleCalls = (await sim.stats()).calls - calls1;
  const poolWrites = writes.filter((w) => w.type === 'pool' && w.name === target).map((w) => w.at);
  let maxPer100 = 0;
  for (let a = 0, b = 0; b < poolWrites.length; b++) {
    while (poolWrites[b]! - poolWrites[a]! >= 100) a++;
    maxPer100 = Math.max(maxPer100, b - a + 1);
  }
  // The floor side by side: the same simulator and session with nothing but calls, 8 at a time.
  const floor = await rawCallFloor(LATENCY, CONCURRENCY, 800);
  const rows: [string, string, string][] = [
    [
      `cold sync: ${SERVICES} L4 services + 1 L7 with ${rules} path rules, ${LATENCY} ms per call, start -> last write answered`,
      `${(coldMs / 1000).toFixed(1)} s`,
      `${coldCalls} calls (${coldWrites} writes), at most ${stats.maxInflight} at once; ideal (calls / ${CONCURRENCY} x ${LATENCY} ms) ${(ideal / 1000).toFixed(1)} s: ${(coldMs / ideal).toFixed(2)}x; goal <= 1.3x: ${coldMs / ideal <= 1.3 ? 'met' : 'NOT met'}; first write answered at ${(firstWriteMs / 1000).toFixed(2)} s`,
    ],
    [
      `raw call floor: ${floor.calls} calls of the same simulator and session, ${CONCURRENCY} at a time, ${LATENCY} ms per call`,
      `${(floor.ms / 1000).toFixed(2)} s`,
      `${floor.ratio.toFixed(2)}x the ideal: what one process's HTTP client and simulator add per call on this machine; the cold sync is ${(coldMs / ideal / floor.ratio).toFixed(2)}x the floor`,
    ],
    [
      'cold sync until the controller is idle (statuses written, Services annotated)',
      `${(settledMs / 1000).toFixed(1)} s`,
      '',
    ],
    [
      'scale-out 3 -> 50 Pods of one Service: time to 50 servers',
      `${(scaleMs / 1000).toFixed(2)} s`,
      `Pods created 8 at a time`,
    ],
    [
      'scale-out: API calls made',
      String(scaleCalls),
      `${writes.length} writes, ${poolWrites.length} of them to the pool`,
    ],
    [
      'scale-out: most writes to the pool in any 100 ms',
      String(maxPer100),
      `goal <= 1: ${maxPer100 <= 1 ? 'met' : 'NOT met'}`,
    ],
  ];
  printTable(rows);
  // The L7 shape with TLS at 20 and 100 ms per call (issue "Avi: HTTPS ..."), in its own sandbox.
  await controller.stop();
  controller = undefined;
  console.log('');
  if (!process.env.SKIP_L7_TLS) l7TlsTable(await l7TlsColdSync());
} finally {
  await controller?.stop();
  await adapter.close();
  await sim.close();
  child.kill('SIGTERM');
  clearTimeout(deadline);
  await dispatcher.close();
}
