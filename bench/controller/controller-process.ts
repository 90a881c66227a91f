/**
 * The built `npl-lb controller` as its own process, for the controller bench's memory figures:
 * VmHWM and RssAnon once it has synced, within the chart's memory limit (container-memory.ts), its
 * CPU until then, its V8 heap as its metrics say, and optionally a heap
 * snapshot (written into `heapSnapshotDir`); and the floor of its cold sync.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, type KubeConfig, makeInformer } from '@kubernetes/client-node';
import { fetch } from 'undici';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { contain } from './container-memory.ts';

/** A process's CPU so far: utime + stime in clock ticks (USER_HZ, 100 on Linux), in ms. */
function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) * 10;
}

/**
 * Runs the built `npl-lb controller` (as deployed: compiled, no tsx) as its own process on the
 * loaded sandbox and reads its RSS once it has synced.
 */
export async function controllerProcessRss(
  server: string,
  services: number,
  opts: { heapSnapshotDir?: string | undefined; limitMiB: number },
): Promise<{ hwm: number; anon: number; cpuMs: number; how: string }> {
  const { heapSnapshotDir, limitMiB } = opts;
  execFileSync('npm', ['run', 'build'], { stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'npl-bench-'));
  try {
    writeFileSync(join(dir, 'kubeconfig'), renderKubeconfig({ server }));
    writeFileSync(
      join(dir, 'config.yaml'),
      'clusterName: rss\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/15]}\n',
    );
    // As the chart deploys it: within the controller's memory limit (0: this host's, unlimited).
    const box = limitMiB > 0 ? contain(limitMiB) : undefined;
    const node = (box?.wrap ?? ((cmd: string, args: string[]) => ({ cmd, args })))(process.execPath, [
      ...(box?.nodeFlags ?? []),
      ...(heapSnapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapSnapshotDir}`] : []),
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
    ]);
    const proc = spawn(node.cmd, node.args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((r) => proc.once('exit', r));
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
        if (doc.virtualServices.length >= services) break;
        await new Promise((r) => setTimeout(r, 200));
      }
      await new Promise((r) => setTimeout(r, 1000));
      const cpuMs = processCpuMs(proc.pid!);
      const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
      // The V8 heap as the controller's own metrics say (live and committed), beside RSS.
      const metrics = await (await fetch(`${http}/metrics`)).text();
      const gauge = (name: string) =>
        Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1] ?? NaN) / 2 ** 20;
      console.log(
        `controller heap: used ${gauge('nodejs_heap_size_used_bytes').toFixed(0)} MiB, total ${gauge('nodejs_heap_size_total_bytes').toFixed(0)} MiB, external ${gauge('nodejs_external_memory_bytes').toFixed(0)} MiB`,
      );
      if (heapSnapshotDir) {
        proc.kill('SIGUSR2');
        // The snapshot is written when the file stops growing.
        await new Promise((r) => setTimeout(r, 30_000));
      }
      return {
        hwm: kb('VmHWM'),
        anon: kb('RssAnon'),
        cpuMs,
        how: box?.how ?? "with this host's memory (no limit: V8 sizes its heap from 24 GiB)",
      };
    } finally {
      proc.kill('SIGTERM');
      await exited;
      box?.release();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The cold sync's floor: bare client-node informers listing and watching the same collections
 * (Pods, Services, Nodes) in this process, doing nothing with them; timed and CPU-counted as the
 * controller's cold sync is, and stopped before it starts.
 */
export async function coldSyncFloor(kc: KubeConfig): Promise<{ ms: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const core = kc.makeApiClient(CoreV1Api);
  const floor = [
    makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces()),
    makeInformer(kc, '/api/v1/services', () => core.listServiceForAllNamespaces()),
    makeInformer(kc, '/api/v1/nodes', () => core.listNode()),
  ];
  await Promise.all(floor.map((i) => i.start()));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await Promise.all(floor.map((i) => i.stop()));
  await new Promise((r) => setTimeout(r, 500));
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}
