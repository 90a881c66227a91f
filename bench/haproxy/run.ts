/**
 * HAProxy benchmark (runtime transport, real HAProxy): the sandbox, three agents forwarding in
 * userspace on loopback node IPs, Pods that are real HTTP servers, the controller and HAProxy.
 * One LoadBalancer Service scales 3 -> 50 -> 3 Pods (scale-in drains first: Pods are held by a
 * finalizer until their members drain) under a bounded request loop (4 at a time). Measures
 * reloads, time to converge each way, and failed requests. Loopback only; aborts after 5 minutes.
 *
 *   npm run bench:haproxy
 */
import { printTable } from '../http-load.ts';
import { createServer, type Server } from 'node:http';
import { Agent, request } from 'undici';
import { adminSocket, socketCommand } from '../../adapters/haproxy/process.ts';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, startAgent } from '../../test/support/cluster.ts';
import { startHaproxy } from '../../test/support/haproxy.ts';
import { useSandbox } from '../../test/support/sandbox.ts';

const deadline = setTimeout(() => {
  console.error('benchmark exceeded 5 minutes; aborting');
  process.exit(1);
}, 300_000);
const cleanups: (() => Promise<void> | void)[] = [];
const t = { after: (fn: () => Promise<void> | void) => void cleanups.push(fn) };
const PODS = 50;
const FINALIZER = 'bench.npl-lb.io/hold';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  for (let i = 1; i <= 3; i++) {
    await c.node(`n${i}`, { internal: [`127.0.14.${i}`] });
    await startAgent(t, kc, {
      nodeName: `n${i}`,
      backend: new UserspaceBackend(),
      range: { start: 45000, end: 45199 },
    });
  }
  const rig = await startHaproxy(t);
  const { paths } = rig;
  const adapter = rig.adapter('bench');
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.32.0/24]}\n',
    ),
    adapter,
    events: { record: async () => {} },
    sweepIntervalMs: 0,
  });
  await ctl.start();
  cleanups.push(() => ctl.stop());
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 18090, targetPort: 8080 }],
  });
  const servers: Server[] = [];
  cleanups.push(() =>
    Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(() => undefined),
  );
  const pod = async (i: number) => {
    const ip = `127.0.22.${i}`;
    const s = createServer((_q, res) => res.end(`pod web-${i}\n`));
    await new Promise<void>((r) => s.listen(8080, ip, () => r()));
    servers.push(s);
    await c.pod(`web-${i}`, { node: `n${(i % 3) + 1}`, ips: [ip], ports: [{ containerPort: 8080 }] });
    await c.patchPod(`web-${i}`, { metadata: { finalizers: [FINALIZER] } });
    await c.patchPodStatus(`web-${i}`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  };
  for (let i = 1; i <= 3; i++) await pod(i);
  /** Servers HAProxy itself reports for the backend: total, and usable (UP, not in maintenance or drain). */
  const haproxyServers = async () => {
    const lines = (await socketCommand(adminSocket(paths), 'show servers state bench--default-web-http'))
      .split('\n')
      .filter((l) => /^\d+ \S+ \d+ /.test(l));
    const cols = lines.map((l) => l.split(' '));
    return {
      total: cols.length,
      up: cols.filter((x) => x[5] === '2' && x[6] === '0' && x[7] !== '0').length,
    };
  };
  let vip = '';
  for (let k = 0; k < 300 && !vip; k++) {
    const s = await c.core.readNamespacedService({ name: 'web', namespace: 'default' });
    vip = s.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
    await sleep(50);
  }
  while ((await haproxyServers()).up < 3) await sleep(50);
  const dispatcher = new Agent({ connections: 4 });
  cleanups.push(() => dispatcher.close());
  let stop = false;
  const counts = { ok: 0, failed: 0 };
  const worker = async () => {
    for (let n = 0; n < 50_000 && !stop; n++) {
      try {
        const r = await request(`http://${vip}:18090/`, {
          dispatcher,
          headersTimeout: 3000,
          bodyTimeout: 3000,
        });
        await r.body.text();
        if (r.statusCode === 200) counts.ok++;
        else counts.failed++;
      } catch {
        counts.failed++;
      }
    }
  };
  const loop = Promise.all([worker(), worker(), worker(), worker()]);
  const reloads0 = adapter.stats.reloads;
  const outStart = performance.now();
  for (let i = 4; i <= PODS; i++) await pod(i);
  const created = performance.now() - outStart;
  while ((await haproxyServers()).up < PODS && performance.now() - outStart < 60_000) await sleep(20);
  const outMs = performance.now() - outStart;
  const inStart = performance.now();
  for (let i = 4; i <= PODS; i++)
    await c.core.deleteNamespacedPod({ name: `web-${i}`, namespace: 'default' });
  while ((await haproxyServers()).up > 3 && performance.now() - inStart < 60_000) await sleep(20);
  const drainedMs = performance.now() - inStart;
  for (let i = 4; i <= PODS; i++) await c.patchPod(`web-${i}`, { metadata: { finalizers: null } });
  while ((await haproxyServers()).total > 3 && performance.now() - inStart < 30_000) await sleep(20);
  const inMs = performance.now() - inStart;
  await sleep(300);
  stop = true;
  await loop;
  const rows: [string, string, string][] = [
    [
      'reloads during 3 -> 50 -> 3',
      String(adapter.stats.reloads - reloads0),
      'target 0 for the runtime transport',
    ],
    [
      '3 -> 50: first new Pod to 50 servers up in HAProxy',
      `${(outMs / 1000).toFixed(2)} s`,
      `Pods created one by one over ${(created / 1000).toFixed(2)} s; servers wait for their first health check`,
    ],
    ['50 -> 3: Pods deleted to 47 servers drained', `${(drainedMs / 1000).toFixed(2)} s`, ''],
    [
      '50 -> 3: to 3 servers left in HAProxy',
      `${(inMs / 1000).toFixed(2)} s`,
      'after the finalizers were released',
    ],
    ['requests through the VIP during the run', String(counts.ok + counts.failed), '4 at a time'],
    ['failed requests', String(counts.failed), 'target 0'],
    ['runtime commands sent', String(adapter.stats.runtimeCommands), 'add/set/del server'],
  ];
  printTable(rows);
} finally {
  for (const f of cleanups.reverse()) await Promise.resolve(f()).catch(() => undefined);
  clearTimeout(deadline);
}
