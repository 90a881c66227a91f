/**
 * Controller benchmark: sandbox (own process) with 10,000 Pods behind 1,000 LoadBalancer Services on
 * 50 nodes, Pods annotated as the agents would; the controller in this process with the memory
 * adapter at 5 ms per apply. Measures the cold-start sync, then 100 Pod annotation changes per
 * second (bounded: --seconds, default 60): p50/p99 from the change to the load balancer having it,
 * against a bare client-node informer seeing the same changes in the same run; writes per pool per
 * 100 ms; RSS. Loopback only; the run aborts after 15 minutes.
 *
 *   npm run bench:controller [-- --seconds 60 --pods 10000 --services 1000]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { dispatcher, pool, quantile, send, printTable, createNodes, createLbServices } from '../http-load.ts';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { startSandboxProcess } from '../sandbox-process.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    pods: { type: 'string', default: '10000' },
    services: { type: 'string', default: '1000' },
    rate: { type: 'string', default: '100' },
  },
});
const SECONDS = Number(values.seconds);
const PODS = Number(values.pods);
const SERVICES = Number(values.services);
const RATE = Number(values.rate);
const NODES = 50;
const deadline = setTimeout(() => {
  console.error('benchmark exceeded 15 minutes; aborting');
  process.exit(1);
}, 900_000);

/**
 * Runs the built `npl-lb controller` (as deployed: compiled, no tsx) as its own process on the
 * loaded sandbox and reads its RSS once it has synced.
 */
async function controllerProcessRss(server: string): Promise<number> {
  execFileSync('npm', ['run', 'build'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'npl-bench-'));
  try {
    writeFileSync(join(dir, 'kubeconfig'), renderKubeconfig({ server }));
    writeFileSync(
      join(dir, 'config.yaml'),
      'clusterName: rss\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/15]}\n',
    );
    const proc = spawn(
      process.execPath,
      [
        'dist/src/main/cli.js',
        'controller',
        '--config',
        join(dir, 'config.yaml'),
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--http-address',
        '127.0.0.1:0',
        '--leader-elect',
        'false',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    try {
      const http = await new Promise<string>((resolve, reject) => {
        let out = '';
        proc.stderr!.on('data', (d: Buffer) => {
          out += d.toString();
          const m = /"http":"(http:\/\/[^"]+)"/.exec(out);
          if (m) resolve(m[1]!);
        });
        proc.once('exit', () => reject(new Error(`controller exited: ${out}`)));
      });
      const until = performance.now() + 120_000;
      while (performance.now() < until) {
        const doc = (await (await fetch(`${http}/api/v1/state`)).json()) as { virtualServices: unknown[] };
        if (doc.virtualServices.length >= SERVICES) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 1000));
      const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    } finally {
      proc.kill('SIGTERM');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const nodeIP = (n: number) => `192.0.2.${n + 1}`;
const ann = (podPort: number, node: number, nodePort: number) =>
  JSON.stringify([{ podPort, nodeIP: nodeIP(node), nodePort, protocol: 'tcp', ipFamily: 'IPv4' }]);

const { url, child } = await startSandboxProcess();
const tmpDir = mkdtempSync(join(tmpdir(), 'npl-bench-'));
try {
  console.log(
    `load: ${PODS} pods, ${SERVICES} LoadBalancer services, ${NODES} nodes; memory adapter 5 ms per apply`,
  );
  await createNodes(url, NODES, nodeIP);
  await createLbServices(url, SERVICES);
  const podNode = (i: number) => i % NODES;
  await pool(
    Array.from({ length: PODS }, (_, i) => i),
    16,
    async (i) => {
      await send(url, 'POST', '/api/v1/namespaces/default/pods', {
        metadata: { name: `pod-${i}`, labels: { app: `app-${i % SERVICES}` } },
        spec: {
          nodeName: `node-${podNode(i)}`,
          containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }],
        },
      });
      await send(
        url,
        'PATCH',
        `/api/v1/namespaces/default/pods/pod-${i}/status`,
        {
          metadata: {
            annotations: { [NPL_POD_ANNOTATION]: ann(8080, podNode(i), 61000 + Math.floor(i / NODES)) },
          },
          status: {
            phase: 'Running',
            podIP: `10.244.${i >> 8}.${i & 255}`,
            conditions: [{ type: 'Ready', status: 'True' }],
          },
        },
        'application/merge-patch+json',
      );
    },
  );

  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: url }));
  const device = new MemoryLoadBalancer();
  const writesAt: { pool: string; at: number }[] = [];
  const pending = new Map<string, { pool: string; nodePort: number; sentAt: number }>();
  const applyLatency: number[] = [];
  const adapter = new MemoryAdapter({ owner: 'bench', device, latencyMs: 5 });
  const apply = adapter.apply.bind(adapter);
  adapter.apply = async (changes) => {
    const results = await apply(changes);
    const now = performance.now();
    for (const r of results) {
      if (!r.ok || r.change.kind !== 'pool' || r.change.op !== 'update') continue;
      writesAt.push({ pool: r.change.name, at: now });
      const members = r.change.desired.members;
      for (const [pod, p] of pending) {
        if (p.pool === r.change.name && members.some((m) => m.port === p.nodePort)) {
          applyLatency.push(now - p.sentAt);
          pending.delete(pod);
        }
      }
    }
    return results;
  };
  const controller = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/15]}',
    ),
    adapter,
    events: { record: async () => {} },
    sweepIntervalMs: 0,
  });
  const t0 = performance.now();
  await controller.start();
  while (device.virtualServices.size < SERVICES && performance.now() - t0 < 120_000)
    await new Promise((r) => setTimeout(r, 10));
  await controller.settled();
  const coldMs = performance.now() - t0;
  const membersTotal = [...device.pools.values()].reduce((n, p) => n + p.pool.members.length, 0);

  // The bare client-node informer runs in a process of its own, so it and the controller do not
  // share an event loop; both are timed on the wall clock from the same sent-at stamp.
  writeFileSync(join(tmpDir, 'kubeconfig'), renderKubeconfig({ server: url }));
  const bare = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/controller/bare-informer.ts', join(tmpDir, 'kubeconfig')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  let bareOut = '';
  bare.stdout!.on('data', (d: Buffer) => {
    bareOut += d.toString();
  });
  while (!bareOut.includes('ready')) await new Promise((r) => setTimeout(r, 50));

  const total = SECONDS * RATE;
  const startLoad = performance.now();
  for (let k = 0; k < total; k++) {
    const due = startLoad + (k * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const i = (k * 7919) % PODS;
    const nodePort = 62000 + (k % 1000);
    const sentAt = performance.now();
    pending.set(`pod-${i}`, { pool: `bench--default-svc-${i % SERVICES}-http`, nodePort, sentAt });
    const annotations = {
      [NPL_POD_ANNOTATION]: ann(8080, podNode(i), nodePort),
      'bench.npl-lb.io/sent-at': String(Date.now()),
    };
    void send(
      url,
      'PATCH',
      `/api/v1/namespaces/default/pods/pod-${i}/status`,
      { metadata: { annotations } },
      'application/merge-patch+json',
    );
  }
  const drain = performance.now();
  while (pending.size > 0 && performance.now() - drain < 10_000) await new Promise((r) => setTimeout(r, 20));
  const loadSeconds = (performance.now() - startLoad) / 1000;

  // Writes per pool within any 100 ms window.
  let maxPer100 = 0;
  const byPool = new Map<string, number[]>();
  for (const w of writesAt) byPool.set(w.pool, [...(byPool.get(w.pool) ?? []), w.at]);
  for (const times of byPool.values()) {
    for (let a = 0, b = 0; b < times.length; b++) {
      while (times[b]! - times[a]! >= 100) a++;
      maxPer100 = Math.max(maxPer100, b - a + 1);
    }
  }
  bare.stdin!.end();
  await new Promise<void>((r) => bare.once('exit', () => r()));
  const informerLatency = JSON.parse(bareOut.slice(bareOut.indexOf('\n') + 1).trim() || '[]') as number[];
  await controller.stop();
  const rss = await controllerProcessRss(url);
  const p50 = quantile(applyLatency, 0.5);
  const p99 = quantile(applyLatency, 0.99);
  const i50 = quantile(informerLatency, 0.5);
  const i99 = quantile(informerLatency, 0.99);
  const rows: [string, string, string][] = [
    [
      `cold start: ${SERVICES} virtual services and pools applied`,
      `${coldMs.toFixed(0)} ms`,
      `${membersTotal} members; target < 5 s`,
    ],
    [
      `annotation change -> applied, p50 (${applyLatency.length} of ${total} changes)`,
      `${p50.toFixed(1)} ms`,
      `includes 5 ms simulated apply; ${pending.size} not seen`,
    ],
    [
      'annotation change -> applied, p99',
      `${p99.toFixed(1)} ms`,
      `target < 105 ms (100 ms beyond the simulated latency)`,
    ],
    [
      'bare client-node informer (own process) sees the change, p50 / p99',
      `${i50.toFixed(1)} / ${i99.toFixed(1)} ms`,
      `controller/informer: p50 ${(p50 / i50).toFixed(1)}x, p99 ${(p99 / i99).toFixed(1)}x`,
    ],
    [
      'most writes to one pool in any 100 ms',
      String(maxPer100),
      `${writesAt.length} pool updates over ${loadSeconds.toFixed(0)} s; target <= 1`,
    ],
    [
      'RSS of the built `npl-lb controller` (own process) synced with all of it',
      `${rss.toFixed(0)} MiB`,
      'target < 250 MB',
    ],
  ];
  printTable(rows);
} finally {
  rmSync(tmpDir, { recursive: true, force: true });
  child.kill('SIGTERM');
  clearTimeout(deadline);
  await dispatcher.close();
}
