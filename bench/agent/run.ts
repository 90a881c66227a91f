/**
 * Agent benchmarks, side by side in one run:
 *  1. Service annotation -> all Pod annotations written, 1,000 Pods on one node (median of 3).
 *  2. iptables: one iptables-restore batch vs one `iptables -A` call per rule, 1,000 rules, in a
 *     network namespace of our own (needs root and iptables; skipped otherwise).
 *  3. Userspace forwarder vs a direct connection on loopback: throughput of 64 KiB transfers and
 *     round-trip latency.
 * Loopback and our own namespaces only; every loop is bounded; the run aborts after 10 minutes.
 *
 *   npm run bench:agent
 */
import { printTable } from '../http-load.ts';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { KubeConfig, CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { AgentMetrics } from '../../src/agent/metrics.ts';
import { NplAgent } from '../../src/agent/npl-controller.ts';
import type { Mapping } from '../../src/agent/port-table.ts';
import { type CommandRunner, runCommand } from '../../src/agent/rules/exec.ts';
import type { ForwardingBackend } from '../../src/agent/rules/types.ts';
import { noneBackend } from '../../src/agent/rules/none.ts';
import { IptablesBackend, NPL_CHAIN, restoreInput, ruleArgs } from '../../src/agent/rules/iptables.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { startSandboxProcess } from '../sandbox-process.ts';
import { apiServerSource, Informer } from '../../src/kube/informer.ts';
import { RESOURCES } from '../../src/kube/paths.ts';

/** 1,000; fewer in the short profile the test suite runs (BENCH_PODS). */
const PODS = Number(process.env.BENCH_PODS ?? 1000);
/** Bursts timed for the one-call-per-rule comparison: 3; 1 in the short profile (BENCH_PER_RULE_RUNS). */
const PER_RULE_RUNS = Number(process.env.BENCH_PER_RULE_RUNS ?? 3);
const deadline = setTimeout(() => {
  console.error('benchmark exceeded 10 minutes; aborting');
  process.exit(1);
}, 600_000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
const rows: [string, string, string][] = [];

interface BenchBackend {
  label: string;
  backend: ForwardingBackend;
  /** Restores and processes so far (iptables only). */
  counts?: () => { restores: number; processes: number };
  /** Bursts timed (3 unless said; the median is reported). */
  runs?: number;
}

/** In a network namespace of the bench's own: the agent's iptables backend, batched or one call per rule. */
function iptablesBackends(ns: string): BenchBackend[] {
  let perRuleProcesses = 0;
  const inNs: CommandRunner = (cmd, args, input) =>
    runCommand('ip', ['netns', 'exec', ns, cmd, ...args], input);
  const batched = new IptablesBackend({ run: inNs, ipv6: false });
  const base = new IptablesBackend({ run: inNs, ipv6: false });
  // Ports are reserved on the node IP (loopback), not the host's wildcard: the bench binds nothing else.
  const onNodeIp = (b: ForwardingBackend): ForwardingBackend => ({
    name: b.name,
    bindsWildcard: false,
    start: () => b.start(),
    sync: (ms) => b.sync(ms),
    add: (m) => b.add(m),
    remove: (m) => b.remove(m),
    stop: () => b.stop(),
    cleanup: () => b.cleanup(),
  });
  // What the agent did before batching: one `iptables -A` / `-D` process per rule.
  const single = async (op: '-A' | '-D', m: Mapping) => {
    perRuleProcesses++;
    const r = await inNs('iptables', ['-w', '-t', 'nat', op, NPL_CHAIN, ...ruleArgs(m)]);
    if (r.code !== 0 && op === '-A') throw new Error(r.stderr);
  };
  return [
    {
      label: 'iptables, one restore per burst',
      backend: onNodeIp(batched),
      counts: () => ({ restores: batched.stats.restores, processes: batched.stats.processes }),
    },
    {
      label: 'iptables, one call per rule',
      backend: { ...onNodeIp(base), add: (m) => single('-A', m), remove: (m) => single('-D', m) },
      counts: () => ({ restores: base.stats.restores, processes: base.stats.processes + perRuleProcesses }),
      runs: PER_RULE_RUNS,
    },
  ];
}

/** The API server runs as its own process, as it would in a cluster; the agent and this load share this one. */
async function annotationLatency(b: BenchBackend): Promise<void> {
  const sandbox = await startSandboxProcess();
  const stopSandbox = () => sandbox.child.kill('SIGTERM');
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: sandbox.url }));
  const watcher = new Informer({
    name: 'bench-pods',
    source: apiServerSource({ kubeConfig: kc, resource: RESOURCES.pods }),
  });
  watcher.start();
  const core = kc.makeApiClient(CoreV1Api);
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  await core.createNode({
    body: {
      metadata: { name: 'n1' },
      status: { addresses: [{ type: 'InternalIP', address: '127.0.10.1' }] },
    },
  });
  await core.createNamespacedService({
    namespace: 'default',
    body: {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
    },
  });
  for (let i = 0; i < PODS; i += 50) {
    await Promise.all(
      // 50 at a time; the last batch only what is left (BENCH_PODS need not be a multiple).
      Array.from({ length: Math.min(50, PODS - i) }, async (_, j) => {
        const name = `web-${i + j}`;
        await core.createNamespacedPod({
          namespace: 'default',
          body: {
            metadata: { name, labels: { app: 'web' } },
            spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x' }] },
          },
        });
        await core.patchNamespacedPodStatus(
          {
            name,
            namespace: 'default',
            body: { status: { phase: 'Running', podIP: `10.244.${(i + j) >> 8}.${(i + j) & 255}` } },
          },
          merge,
        );
      }),
    );
  }
  const agent = new NplAgent({
    kubeConfig: kc,
    nodeName: 'n1',
    portRange: { start: 61000, end: 62999 },
    backend: b.backend,
    metrics: new AgentMetrics(),
    events: { record: async () => {} },
    resyncIntervalMs: 0,
  });
  await agent.start();
  await watcher.waitForSync();
  const annotated = () =>
    watcher
      .list()
      .filter(
        (p) => (p.metadata as { annotations?: Record<string, string> }).annotations?.[NPL_POD_ANNOTATION],
      ).length;
  const times: number[] = [];
  const bursts: { restores: number; processes: number }[] = [];
  const runs = b.runs ?? 3;
  for (let run = 0; run < runs; run++) {
    const before = b.counts?.();
    const t0 = performance.now();
    await core.patchNamespacedService(
      {
        name: 'web',
        namespace: 'default',
        body: { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } } },
      },
      merge,
    );
    while (annotated() < PODS && performance.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 2));
    times.push(performance.now() - t0);
    const after = b.counts?.();
    if (before && after) {
      bursts.push({
        restores: after.restores - before.restores,
        processes: after.processes - before.processes,
      });
    }
    await core.patchNamespacedService(
      {
        name: 'web',
        namespace: 'default',
        body: { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': null } } },
      },
      merge,
    );
    const t1 = performance.now();
    while (annotated() > 0 && performance.now() - t1 < 60_000) await new Promise((r) => setTimeout(r, 5));
  }
  console.log(`JSON ${JSON.stringify({ label: b.label, pods: PODS, times, bursts })}`);
  const perBurst =
    bursts.length > 0
      ? `; per burst ${median(bursts.map((x) => x.restores))} restores, ${median(bursts.map((x) => x.processes))} processes`
      : '';
  rows.push([
    `Service annotated -> ${PODS} Pods mapped and annotated, ${b.label} (median of ${runs})`,
    `${median(times).toFixed(0)} ms`,
    `runs ${times.map((x) => x.toFixed(0)).join(', ')} ms${perBurst}; target < 2000 ms${b.counts ? ', <= 3 restores' : ''}`,
  ]);
  await agent.stop();
  await watcher.stop();
  stopSandbox();
}

async function iptablesBatchVsSingle(): Promise<void> {
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v iptables-restore']).status !== 0) {
    rows.push(['iptables batch vs per rule', 'skipped', 'needs root and iptables']);
    return;
  }
  const ns = `npl-bench-${randomBytes(2).toString('hex')}`;
  if (spawnSync('ip', ['netns', 'add', ns]).status !== 0) {
    rows.push(['iptables batch vs per rule', 'skipped', 'cannot create a network namespace']);
    return;
  }
  try {
    const inNs = (cmd: string, args: string[], input?: string) =>
      runCommand('ip', ['netns', 'exec', ns, cmd, ...args], input);
    const mappings: Mapping[] = Array.from({ length: PODS }, (_, i) => ({
      podKey: `default/web-${i}`,
      podPort: 8080,
      protocol: 'tcp',
      family: 'IPv4',
      podIP: `10.244.${i >> 8}.${i & 255}`,
      nodePort: 61000 + i,
      hostPort: false,
      reservation: undefined,
    }));
    const batch: number[] = [];
    const single: number[] = [];
    for (let run = 0; run < 3; run++) {
      await inNs('iptables', ['-w', '-t', 'nat', '-F', NPL_CHAIN]);
      let t = performance.now();
      const r = await inNs('iptables-restore', ['-w', '--noflush'], restoreInput(mappings));
      if (r.code !== 0) throw new Error(r.stderr);
      batch.push(performance.now() - t);
      await inNs('iptables', ['-w', '-t', 'nat', '-F', NPL_CHAIN]);
      t = performance.now();
      for (const m of mappings) await inNs('iptables', ['-w', '-t', 'nat', '-A', NPL_CHAIN, ...ruleArgs(m)]);
      single.push(performance.now() - t);
    }
    rows.push([
      `iptables: ${PODS} rules in one iptables-restore (median of 3)`,
      `${median(batch).toFixed(0)} ms`,
      '',
    ]);
    rows.push([
      `iptables: ${PODS} rules, one iptables call each (median of 3)`,
      `${median(single).toFixed(0)} ms`,
      `batch is ${(median(single) / median(batch)).toFixed(0)}x faster`,
    ]);
  } finally {
    spawnSync('ip', ['netns', 'del', ns]);
  }
}

/** Starts a peer process (the Pod's server, or the forwarder) and reads its port. */
async function peer(
  role: 'server' | 'forwarder',
  podPort?: number,
): Promise<{ port: number; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/agent/peer.ts', role, String(podPort ?? '')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`${role} exited with ${code}`)));
  });
  return { port, stop: () => child.stdin!.end() };
}

function open(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const c = connect({ host, port }, () => resolve(c));
    c.setNoDelay(true);
    c.on('error', reject);
  });
}

async function throughput(host: string, port: number, transfers: number): Promise<number> {
  const c = await open(host, port);
  const chunk = randomBytes(65536);
  const t0 = performance.now();
  let acks = 0;
  await new Promise<void>((resolve) => {
    c.on('data', (d: Buffer) => {
      acks += d.length;
      if (acks >= transfers) resolve();
    });
    let sent = 0;
    const pump = () => {
      while (sent < transfers) {
        sent++;
        if (!c.write(chunk)) {
          c.once('drain', pump);
          return;
        }
      }
    };
    pump();
  });
  const seconds = (performance.now() - t0) / 1000;
  c.destroy();
  return (transfers * 65536) / seconds / 1e6;
}

async function latency(host: string, port: number, n: number): Promise<number[]> {
  const c = await open(host, port);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      c.once('data', () => resolve());
      c.write('x');
    });
    out.push(performance.now() - t0);
  }
  c.destroy();
  return out;
}

/** Client here, the Pod's server and the forwarder each in a process of its own, as on a node. */
async function userspaceVsDirect(): Promise<void> {
  const srv = await peer('server');
  const fwd = await peer('forwarder', srv.port);
  const direct: number[] = [];
  const forwarded: number[] = [];
  const latDirect: number[] = [];
  const latForwarded: number[] = [];
  for (let round = 0; round < 7; round++) {
    direct.push(await throughput('127.0.20.1', srv.port, 2000));
    forwarded.push(await throughput('127.0.10.1', fwd.port, 2000));
    latDirect.push(...(await latency('127.0.20.1', srv.port, 2000)));
    latForwarded.push(...(await latency('127.0.10.1', fwd.port, 2000)));
  }
  const d = median(direct);
  const f = median(forwarded);
  rows.push(['64 KiB transfers, direct (median of 7 x 2,000)', `${d.toFixed(0)} MB/s`, '']);
  rows.push([
    '64 KiB transfers, through the userspace forwarder',
    `${f.toFixed(0)} MB/s`,
    `${((f / d) * 100).toFixed(0)}% of direct; target >= 50%`,
  ]);
  const p50d = quantile(latDirect, 0.5);
  const p50f = quantile(latForwarded, 0.5);
  rows.push([
    '1-byte round trip p50, direct',
    `${(p50d * 1000).toFixed(0)} us`,
    `p99 ${(quantile(latDirect, 0.99) * 1000).toFixed(0)} us`,
  ]);
  rows.push([
    '1-byte round trip p50, forwarded',
    `${(p50f * 1000).toFixed(0)} us`,
    `added p50 ${((p50f - p50d) * 1000).toFixed(0)} us; target < 200 us`,
  ]);
  fwd.stop();
  srv.stop();
}

/** The agent with real iptables in a namespace of the bench's own, batched and per rule, side by side. */
async function agentWithIptables(): Promise<void> {
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v iptables-restore']).status !== 0) {
    rows.push(['agent with iptables', 'skipped', 'needs root and iptables']);
    return;
  }
  const ns = `npl-bench-${randomBytes(2).toString('hex')}`;
  if (spawnSync('ip', ['netns', 'add', ns]).status !== 0) {
    rows.push(['agent with iptables', 'skipped', 'cannot create a network namespace']);
    return;
  }
  try {
    for (const b of iptablesBackends(ns)) {
      await annotationLatency(b);
      spawnSync('ip', ['netns', 'exec', ns, 'iptables', '-w', '-t', 'nat', '-F', NPL_CHAIN]);
    }
  } finally {
    spawnSync('ip', ['netns', 'del', ns]);
  }
}

console.log(`node ${process.version}; loopback and own network namespaces only`);
// ONLY_IPTABLES: the agent on iptables alone (the short profile of the test suite).
const only = process.env.ONLY_IPTABLES
  ? 'iptables'
  : process.env.ONLY_FORWARDER
    ? 'forwarder'
    : process.env.ONLY_ANNOTATION
      ? 'annotation'
      : undefined;
if (only === undefined || only === 'annotation')
  await annotationLatency({ label: 'forwarding none', backend: noneBackend() });
if (only === undefined || only === 'annotation' || only === 'iptables') await agentWithIptables();
if (only === undefined) await iptablesBatchVsSingle();
if (only === undefined || only === 'forwarder') await userspaceVsDirect();
printTable(rows);
clearTimeout(deadline);
