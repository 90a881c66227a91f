/**
 * What the whole controller process costs per change, at two cluster sizes side by side in one run
 * (issue "The house ready for the next vendor", item 6): `npl-lb controller` as its own process
 * (as deployed, health reads on), the sandbox and the Avi Controller simulator (100 ms a call) as
 * processes of their own, S LoadBalancer Services of 10 Pods each on 50 nodes. The process's CPU
 * (user + system from /proc, everything it does: informers, passes, status writes, health reads,
 * timers, logs) is read over idle stretches (its background work, per second) and runs of paced
 * single-Pod changes (each a new node port of one Pod, 10 a second, to different pools among the
 * first 100 at both sizes), in turn: idle, run, idle, run, ..., idle (`--segments` runs, the
 * changes and the idle time shared among them). The whole passes (the sweep: the device observed again, everything planned) are read
 * from the controller's metrics and counted apart. Per change: each run's CPU less its whole
 * passes and less the background beside it (the mean of the steady rate of the idle stretches
 * before and after it) times its length, by its changes; the median of the runs without a sweep
 * in them where there are any (a sweep's cost, read over its span, holds the changes' work beside
 * it), else of all of them. A background
 * read once, before every change, was charged to the changes wherever it drifted (the first
 * sync's tail, a sweep): the same tree read 0.75x to 3.9x from one run to the next. Background =
 * the idle stretches' median steady rate (CPU less whole passes, per second) plus the last whole
 * pass's cost over the sweep's period (the sweep at its rate, whether or not one fell in a
 * stretch). Change-to-device latency: from the Pod's PATCH to the
 * simulator answering the write of its pool.
 *
 *   node --import tsx bench/controller/process-cost.ts [--small 100] [--large 1000] [--changes 150]
 *     [--idle 20] [--rounds 1] [--segments 3: runs of changes, an idle stretch before and after each]
 *     [--health-interval 10: the controller's health reads, seconds; 0 off]
 *     [--log-dir DIR: the controller's debug log and stdout per size, when it started and each run's
 *      span (run-<size>-<k>.txt: start and end, ms since the epoch, and its changes), for finding
 *      what a tail waits on, or reading V8's traces against the runs]
 *     [--cpu-prof-dir DIR: the controller's V8 CPU profile per size, written when it stops]
 *     [--controller-node-options=FLAGS: node flags for the controller alone, after "=" (V8 heap sizes, say)]
 *     [--touched 100: the changes go to the first N Services at every size (each change to a
 *      different one of them in turn), so that the sizes differ in the cluster alone]
 *
 * Loopback only; every phase is bounded in time, and every process it starts is stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import {
  annotatedPod,
  createLbServices,
  createNodes,
  pool,
  printTable,
  quantile,
  dispatcher,
} from '../http-load.ts';
import { fetch } from 'undici';
import { startSandboxProcess } from '../sandbox-process.ts';
import { AviSimulatorProcess } from '../avi/sim-process.ts';

const { values } = parseArgs({
  options: {
    small: { type: 'string', default: '100' },
    large: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '150' },
    idle: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
    segments: { type: 'string', default: '3' },
    'health-interval': { type: 'string', default: '10' },
    'log-dir': { type: 'string' },
    'cpu-prof-dir': { type: 'string' },
    'controller-node-options': { type: 'string' },
    touched: { type: 'string', default: '100' },
  },
});
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODES = 50;
const PER_SERVICE = 10;
const LATENCY = 100;
const RATE = 10;
const nodeIP = (n: number) => `192.0.2.${n + 1}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// The whole run is bounded: a hang stops it.
setTimeout(() => {
  console.error('process-cost: aborted after 30 minutes');
  process.exit(1);
}, 30 * 60_000).unref();

/** A process's CPU so far (utime + stime, clock ticks of 10 ms), in ms. */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(stat[11]) + Number(stat[12])) * 10;
}

/** The controller's whole passes so far: their count and CPU (ms), the last one's, the sweep's period (s). */
async function wholePasses(
  http: string,
): Promise<{ n: number; cpuMs: number; lastMs: number; periodS: number }> {
  const text = await (await fetch(`${http}/metrics`)).text();
  const v = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  return {
    n: v('npl_lb_controller_whole_passes_total'),
    cpuMs: v('npl_lb_controller_whole_pass_cpu_seconds_total') * 1000,
    lastMs: v('npl_lb_controller_whole_pass_last_cpu_seconds') * 1000,
    periodS: v('npl_lb_controller_sweep_period_seconds'),
  };
}

interface Figures {
  services: number;
  /**
   * Background CPU per second: the steady work (the idle stretch's CPU less the whole passes in
   * it) plus the sweep's whole pass spread over its period (its last cost / its period). A 60 s
   * stretch catches a sweep whose period is 100 s or more in some runs and not others; this
   * counts every sweep at its rate.
   */
  backgroundMsPerS: number;
  /** The idle stretch's CPU per second as it came (a sweep in it or not). */
  windowMsPerS: number;
  /** Sweeps in the idle stretch, their CPU, the last whole pass's cost and the sweep's period. */
  sweeps: { inWindow: number; cpuMsInWindow: number; lastMs: number; periodS: number };
  /** Per change, the median of the runs' (each run's CPU less its whole passes and the background beside it). */
  perChangeMs: number;
  /** Each run's own per-change figure. */
  perRun: number[];
  /** Runs with a sweep in them (set apart from the per-change median where others have none). */
  runsWithSweep: number;
  runCpuMs: number;
  runS: number;
  p50: number;
  p99: number;
  max: number;
  applied: number;
  /** The API server's answer to each change's PATCH (ms from sending it), median and p99. */
  apiP50: number;
  apiP99: number;
  /** From that answer to the device's answer to the pool's write (the controller and the device). */
  afterP50: number;
  afterP99: number;
  /** From the API server beginning the write (its `Npl-Write-Started`) to the device's answer. */
  writeP50: number;
  writeP99: number;
  writeMax: number;
  writeApplied: number;
  /** Each change's latency in order (ms, -1: never applied), for finding what a tail waits on. */
  latencies: number[];
  /** The process's CPU in each second of the idle stretches (ms). */
  idleTimeline: number[];
}

/** One idle stretch: its CPU, whole passes (sweeps) in it, the steady rest per second, by second. */
interface Idle {
  cpuMs: number;
  s: number;
  sweeps: number;
  wholeMs: number;
  steady: number;
  timeline: number[];
}

/** The process alone for `seconds` (health reads, resyncs, timers), read second by second. */
async function idleStretch(
  pid: number,
  http: string,
  seconds: number,
  services: number,
  k: number,
): Promise<Idle> {
  const w0 = await wholePasses(http);
  const c0 = cpuMs(pid);
  const i0 = performance.now();
  if (values['log-dir'])
    writeFileSync(join(values['log-dir'], `idle-${services}-${k}.txt`), `${new Date().toISOString()}\n`);
  const timeline: number[] = [];
  for (let s = 0, last = c0; s < Math.ceil(seconds); s++) {
    await sleep(i0 + Math.min(seconds, s + 1) * 1000 - performance.now());
    const now = cpuMs(pid);
    timeline.push(now - last);
    last = now;
  }
  const used = cpuMs(pid) - c0;
  const span = (performance.now() - i0) / 1000;
  const w1 = await wholePasses(http);
  const wholeMs = w1.cpuMs - w0.cpuMs;
  return { cpuMs: used, s: span, sweeps: w1.n - w0.n, wholeMs, steady: (used - wholeMs) / span, timeline };
}

/** Change i: one Pod of a different Service each time gets a new node port. */
/**
 * One Pod's new node port; resolves with when the API server began the write (the sandbox's
 * `Npl-Write-Started`, in this process's performance.now() clock), or undefined without it.
 */
async function changePod(url: string, i: number, touched: number): Promise<number | undefined> {
  const svc = (i * 7) % touched;
  const res = await fetch(`${url}/api/v1/namespaces/default/pods/p-${svc}-0`, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/merge-patch+json' },
    dispatcher,
    body: JSON.stringify({
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            {
              podPort: 8080,
              nodeIP: nodeIP(svc % NODES),
              nodePort: 61000 + i,
              protocol: 'tcp',
              ipFamily: 'IPv4',
            },
          ]),
        },
      },
    }),
  });
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`PATCH pod p-${svc}-0: ${res.status}`);
  const started = Number(res.headers.get('npl-write-started') ?? NaN);
  return Number.isFinite(started) ? started - performance.timeOrigin : undefined;
}

async function startController(
  dir: string,
  server: string,
  sim: string,
  logName: string,
): Promise<{ proc: ChildProcess; http: string }> {
  writeFileSync(join(dir, 'kubeconfig'), renderKubeconfig({ server }));
  writeFileSync(
    join(dir, 'config.yaml'),
    `clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/16]}\nadapter: {type: avi, url: "${sim}"}\nhealthIntervalSeconds: ${values['health-interval']}\n`,
  );
  const proc = spawn(
    process.execPath,
    [
      ...(values['cpu-prof-dir'] ? ['--cpu-prof', '--cpu-prof-dir', values['cpu-prof-dir']] : []),
      ...(values['controller-node-options']?.split(/\s+/).filter(Boolean) ?? []),
      '--import',
      'tsx',
      'src/main/cli.ts',
      'controller',
      '--config',
      join(dir, 'config.yaml'),
      '--kubeconfig',
      join(dir, 'kubeconfig'),
      '--http-address',
      '127.0.0.1:0',
      '--leader-elect',
      'false',
      '--log-level',
      values['log-dir'] ? 'debug' : 'info',
    ],
    {
      cwd: ROOT,
      // Its stdout is V8's (--controller-node-options=--trace-gc-nvp, say): kept with --log-dir.
      stdio: ['ignore', values['log-dir'] ? 'pipe' : 'ignore', 'pipe'],
      env: { ...process.env, NPL_LB_AVI_USERNAME: 'admin', NPL_LB_AVI_PASSWORD: 'admin' },
    },
  );
  if (values['log-dir']) {
    writeFileSync(join(values['log-dir'], `spawned-${logName}.txt`), `${Date.now()}\n`);
    proc.stdout!.pipe(createWriteStream(join(values['log-dir'], `controller-${logName}.stdout`)));
  }
  const http = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"http":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        proc.stderr!.off('data', onData);
        // Its logs are kept (--log-dir) or read no further (drained: it never blocks on a full pipe).
        if (values['log-dir']) {
          const file = createWriteStream(join(values['log-dir'], `controller-${logName}.log`));
          file.write(out);
          proc.stderr!.pipe(file);
        } else proc.stderr!.resume();
        resolve(m[1]!);
      }
    };
    proc.stderr!.on('data', onData);
    proc.once('exit', () => reject(new Error(`controller exited: ${out.slice(-2000)}`)));
  });
  return { proc, http };
}

async function scale(services: number, changes: number, idleS: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'npl-process-cost-'));
  const { url, child: sandbox } = await startSandboxProcess();
  const sim = new AviSimulatorProcess();
  let controller: ChildProcess | undefined;
  try {
    await createNodes(url, NODES, nodeIP);
    await createLbServices(url, services);
    await pool(
      Array.from({ length: services * PER_SERVICE }, (_, n) => n),
      16,
      (n) =>
        annotatedPod(url, {
          name: `p-${n % services}-${Math.floor(n / services)}`,
          app: `app-${n % services}`,
          n,
          nodes: NODES,
          nodeIP,
          nodePort: 20000 + (n % 40000),
        }),
    );
    const simUrl = await sim.start();
    await sim.setLatency(LATENCY);
    const c = await startController(dir, url, simUrl, String(services));
    controller = c.proc;
    const http = c.http;
    const pid = controller.pid!;
    // Synced: every virtual service on the device, then quiet for a while.
    const t0 = performance.now();
    while ((await sim.count('virtualservice')) < services && performance.now() - t0 < 600_000)
      await sleep(200);
    await sleep(5000);
    // Idle stretches and runs of changes in turn (idle, run, idle, run, ..., idle): each run's
    // background is read beside it, the mean of the idle stretches before and after it, so a
    // background that drifts (the first sync's tail, a sweep) is not charged to the changes.
    const segments = Math.max(1, Number(values.segments));
    // Whole health periods each (as the runs are), so that every window holds as many reads.
    const period = Number(values['health-interval']);
    const idlePer =
      period > 0 ? Math.max(1, Math.round(idleS / (segments + 1) / period)) * period : idleS / (segments + 1);
    const perSegment = Math.ceil(changes / segments);
    // The same Services change at both sizes (the first --touched of them), so each size does the
    // same work per change (a pool changed again within 30 s has its Event folded into the last).
    const touched = Math.min(services, Number(values.touched));
    const idles: Idle[] = [await idleStretch(pid, http, idlePer, services, 0)];
    const log0 = (await sim.writeLog()).length;
    const sent: { pool: string; at: number; answered?: number; written?: number }[] = [];
    if (values['log-dir'])
      writeFileSync(join(values['log-dir'], `changes-${services}.txt`), `${Date.now()}\n`);
    const runs: { cpuMs: number; wholeMs: number; s: number; n: number }[] = [];
    for (let seg = 0, i = 0; seg < segments; seg++) {
      const w0 = await wholePasses(http);
      const run0 = cpuMs(pid);
      const r0 = performance.now();
      const n = Math.min(perSegment, changes - i);
      for (let k = 0; k < n; k++, i++) {
        await sleep(Math.max(0, r0 + (k * 1000) / RATE - performance.now()));
        const change: (typeof sent)[number] = {
          pool: `bench--default-svc-${(i * 7) % touched}-http`,
          at: performance.now(),
        };
        sent.push(change);
        // When the API server answered the PATCH (it has stored the Pod and told its watchers).
        void changePod(url, i, touched).then((written) => {
          change.answered = performance.now();
          if (written !== undefined) change.written = written;
        });
      }
      // Until the last change has been applied (the device takes 100 ms a call), and to a whole
      // number of health periods: each window then holds as many of its reads as the next one.
      await sleep(3000);
      const period = Number(values['health-interval']) * 1000;
      if (period > 0)
        await sleep(Math.ceil((performance.now() - r0) / period) * period - (performance.now() - r0));
      const w1 = await wholePasses(http);
      runs.push({
        cpuMs: cpuMs(pid) - run0,
        wholeMs: w1.cpuMs - w0.cpuMs,
        s: (performance.now() - r0) / 1000,
        n,
      });
      if (values['log-dir'])
        writeFileSync(
          join(values['log-dir'], `run-${services}-${seg}.txt`),
          `${Date.now() - (performance.now() - r0)} ${Date.now()} ${n}\n`,
        );
      idles.push(await idleStretch(pid, http, idlePer, services, seg + 1));
    }
    // Per change, each run apart: its CPU less its whole passes and its background, by its changes.
    const perRun = runs.map(
      (r, k) => (r.cpuMs - r.wholeMs - ((idles[k]!.steady + idles[k + 1]!.steady) / 2) * r.s) / r.n,
    );
    // A run with a sweep in it is set apart where another has none: the sweep's cost as the
    // controller counts it (its read of the device and its whole pass, the process's CPU over
    // them) holds whatever ran beside them, the changes' own work included, so that less it
    // says too little of them.
    const swept = runs.map((r) => r.wholeMs > 0);
    const clear = perRun.filter((_, k) => !swept[k]);
    const perChangeMs = quantile(clear.length > 0 ? clear : perRun, 0.5);
    const last = await wholePasses(http);
    const sweepMsPerS = last.periodS > 0 ? last.lastMs / last.periodS : 0;
    const steadyMsPerS = quantile(
      idles.map((x) => x.steady),
      0.5,
    );
    const backgroundMsPerS = steadyMsPerS + sweepMsPerS;
    const windowMsPerS = idles.reduce((a, x) => a + x.cpuMs, 0) / idles.reduce((a, x) => a + x.s, 0);
    const runCpuMs = runs.reduce((a, r) => a + r.cpuMs, 0);
    const runS = runs.reduce((a, r) => a + r.s, 0);
    const writes = (await sim.writeLog(log0)).filter((w) => w.type === 'pool');
    const each = sent.map((s) => {
      const w = writes.find((x) => x.name === s.pool && x.at > s.at);
      return w ? Math.round(w.at - s.at) : -1;
    });
    const lat = each.filter((x) => x >= 0);
    // The API server's part of each change: from the PATCH sent to its answer (the Pod stored,
    // the watchers told), and the rest (the controller, and the device's 100 ms) after it.
    const api = sent.flatMap((s) => (s.answered === undefined ? [] : [s.answered - s.at]));
    const after = sent.flatMap((s, i) =>
      s.answered === undefined || each[i]! < 0 ? [] : [s.at + each[i]! - s.answered],
    );
    // From the moment the API server began the write (the change exists in the cluster from
    // then: no watcher can hear of it sooner) to the device's answer: the controller and the
    // device, whatever the API server then took to store it, tell watchers and answer the PATCH.
    const fromWrite = sent.flatMap((s, i) =>
      s.written === undefined || each[i]! < 0 ? [] : [s.at + each[i]! - s.written],
    );
    return {
      services,
      backgroundMsPerS,
      windowMsPerS,
      sweeps: {
        inWindow: idles.reduce((a, x) => a + x.sweeps, 0),
        cpuMsInWindow: idles.reduce((a, x) => a + x.wholeMs, 0),
        lastMs: last.lastMs,
        periodS: last.periodS,
      },
      perChangeMs,
      perRun,
      runsWithSweep: swept.filter(Boolean).length,
      runCpuMs,
      runS,
      p50: quantile(lat, 0.5),
      p99: quantile(lat, 0.99),
      max: Math.max(...lat),
      applied: lat.length,
      apiP50: quantile(api, 0.5),
      apiP99: quantile(api, 0.99),
      afterP50: quantile(after, 0.5),
      afterP99: quantile(after, 0.99),
      writeP50: quantile(fromWrite, 0.5),
      writeP99: quantile(fromWrite, 0.99),
      writeMax: fromWrite.length > 0 ? Math.max(...fromWrite) : NaN,
      writeApplied: fromWrite.length,
      latencies: each,
      idleTimeline: idles.flatMap((x) => x.timeline),
    };
  } finally {
    if (controller && controller.exitCode === null) {
      const exited = new Promise((r) => controller!.once('exit', r));
      controller.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      if (controller.exitCode === null) controller.kill('SIGKILL');
    }
    await sim.close();
    sandbox.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

const small = Number(values.small);
const large = Number(values.large);
const changes = Number(values.changes);
const idle = Number(values.idle);
const results: Figures[][] = [[], []];
for (let r = 0; r < Number(values.rounds); r++) {
  results[0]!.push(await scale(small, changes, idle));
  results[1]!.push(await scale(large, changes, idle));
}
const median = (xs: number[]) => quantile(xs, 0.5);
const [a, b] = results as [Figures[], Figures[]];
const cell = (f: (x: Figures) => number, d = 2) =>
  `${median(a.map(f)).toFixed(d)} / ${median(b.map(f)).toFixed(d)} (${(median(b.map(f)) / median(a.map(f))).toFixed(2)}x)`;
printTable([
  [
    `controller process CPU per single-Pod change, ${small} / ${large} Services (x${PER_SERVICE} Pods)`,
    `${cell((x) => x.perChangeMs)} ms`,
    `goal: within 1.25x; the median of the runs without a sweep (runs with one: ${a.map((x) => x.runsWithSweep).join(',')} / ${b.map((x) => x.runsWithSweep).join(',')} of ${Number(values.segments)})`,
  ],
  [
    'background CPU, ms per second: steady (idle stretch less its whole passes) + the sweep at its rate',
    cell((x) => x.backgroundMsPerS),
    'proportional to time, not to the cluster, is the goal',
  ],
  [
    'the idle stretch as it came, ms per second (a sweep in it or not)',
    cell((x) => x.windowMsPerS),
    `sweeps in it: ${a.map((x) => x.sweeps.inWindow).join(',')} / ${b.map((x) => x.sweeps.inWindow).join(',')}; last whole pass ${median(a.map((x) => x.sweeps.lastMs)).toFixed(0)} / ${median(b.map((x) => x.sweeps.lastMs)).toFixed(0)} ms, period ${median(a.map((x) => x.sweeps.periodS)).toFixed(0)} / ${median(b.map((x) => x.sweeps.periodS)).toFixed(0)} s`,
  ],
  [
    `change-to-device p50 / p99 / max, Avi simulator at ${LATENCY} ms a call, ${changes} changes at ${RATE}/s`,
    `${median(a.map((x) => x.p50)).toFixed(0)} / ${median(a.map((x) => x.p99)).toFixed(0)} / ${median(a.map((x) => x.max)).toFixed(0)} ms; ${median(b.map((x) => x.p50)).toFixed(0)} / ${median(b.map((x) => x.p99)).toFixed(0)} / ${median(b.map((x) => x.max)).toFixed(0)} ms`,
    `goal: p99 <= ${LATENCY + 15} ms; applied ${a.map((x) => x.applied).join(',')} / ${b.map((x) => x.applied).join(',')} of ${changes}`,
  ],
  [
    'of which, small ; large Services: the API server answering the PATCH, p50 / p99; then the controller and the device, p50 / p99',
    `${median(a.map((x) => x.apiP50)).toFixed(1)} / ${median(a.map((x) => x.apiP99)).toFixed(1)}; ${median(a.map((x) => x.afterP50)).toFixed(1)} / ${median(a.map((x) => x.afterP99)).toFixed(1)} ms; ${median(b.map((x) => x.apiP50)).toFixed(1)} / ${median(b.map((x) => x.apiP99)).toFixed(1)}; ${median(b.map((x) => x.afterP50)).toFixed(1)} / ${median(b.map((x) => x.afterP99)).toFixed(1)} ms`,
    'the sandbox (one process for the whole cluster) is not the product; the rest is the controller and the device',
  ],
  [
    'change-to-device from the API server beginning the write (Npl-Write-Started), p50 / p99 / max',
    `${median(a.map((x) => x.writeP50)).toFixed(1)} / ${median(a.map((x) => x.writeP99)).toFixed(1)} / ${median(a.map((x) => x.writeMax)).toFixed(1)} ms; ${median(b.map((x) => x.writeP50)).toFixed(1)} / ${median(b.map((x) => x.writeP99)).toFixed(1)} / ${median(b.map((x) => x.writeMax)).toFixed(1)} ms`,
    `goal: p99 <= ${LATENCY + 15} ms; stamped ${a.map((x) => x.writeApplied).join(',')} / ${b.map((x) => x.writeApplied).join(',')} of ${changes}`,
  ],
]);
console.log(`JSON ${JSON.stringify(results)}`);
