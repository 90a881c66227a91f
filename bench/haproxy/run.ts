/**
 * HAProxy benchmark, for each transport on a real HAProxy: the runtime socket, and the Data Plane
 * API (v3, through the simulator) with 10 slots per step (the default: the backend grows) and with
 * 50 (it fits). The sandbox, three agents forwarding in userspace on loopback node IPs, Pods that
 * are real HTTP servers, the controller and HAProxy. One LoadBalancer Service scales 3 -> 50 -> 3
 * Pods (scale-in drains first: Pods are held by a finalizer until their members drain, then their
 * servers stop, then the Pods go) under a
 * bounded request loop (4 at a time). Measures reloads, time to converge each way, and failed
 * requests; three rounds, transports interleaved, medians. Then certificate rotation under load
 * (rotation.ts, every transport). Loopback only; aborts after 15 minutes.
 *
 *   npm run bench:haproxy
 */
import { createServer, type Server } from 'node:http';
import { Agent, request } from 'undici';
import { adminSocket, socketCommand } from '../../adapters/haproxy/process.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, startAgent } from '../../test/support/cluster.ts';
import { startDataplaneSim } from '../../test/support/dataplane.ts';
import { assertNoListeners, startHaproxy } from '../../test/support/haproxy.ts';
import { useSandbox } from '../../test/support/sandbox.ts';
import { quantile } from '../http-load.ts';
import { rotationOnEveryTransport, rotationTable } from './rotation.ts';

const deadline = setTimeout(() => {
  console.error('benchmark exceeded 15 minutes; aborting');
  process.exit(1);
}, 900_000);
const PODS = 50;
const FINALIZER = 'bench.npl-lb.io/hold';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Transport = { kind: 'runtime' } | { kind: 'dataplane'; slots: number };
const cleanups: (() => Promise<void> | void)[] = [];
const t = { after: (fn: () => Promise<void> | void) => void cleanups.push(fn) };
const cleanUp = async () => {
  for (const f of cleanups.splice(0).reverse()) await Promise.resolve(f()).catch(() => undefined);
};
// Interrupted: stop every HAProxy, agent and server, remove temporary files, then exit.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => void cleanUp().finally(() => process.exit(130)));
}

async function haproxyAdapter(transport: Transport): Promise<{
  adapter: LoadBalancerAdapter;
  socket: string;
  reloads: () => number;
  sent: () => string;
}> {
  if (transport.kind === 'runtime') {
    const rig = await startHaproxy(t);
    const adapter = rig.adapter('bench');
    return {
      adapter,
      socket: adminSocket(rig.paths),
      reloads: () => adapter.stats.reloads,
      sent: () => `${adapter.stats.runtimeCommands} runtime commands`,
    };
  }
  const rig = await startDataplaneSim(t);
  const adapter = rig.adapter('bench', 'v3', {
    slots: transport.slots,
    healthChecks: true,
    transparentBinds: false,
  });
  return {
    adapter,
    socket: adminSocket(rig.sim.proc.paths),
    reloads: () => rig.sim.stats.reloads,
    sent: () =>
      `${adapter.stats.transactions} transactions, ${adapter.calls.calls} API calls; ${rig.sim.stats.runtimeCommands} runtime commands by the API`,
  };
}

/** One run of 3 -> 50 -> 3; its figures. */
async function scenario(transport: Transport): Promise<Round> {
  assertNoListeners('127.0.32.', [18090]);
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
  const { adapter, socket, reloads, sent } = await haproxyAdapter(transport);
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
  const servers = new Map<number, Server>();
  const closeServer = (s: Server) => new Promise<void>((r) => (s.listening ? s.close(() => r()) : r()));
  cleanups.push(() => Promise.all([...servers.values()].map(closeServer)).then(() => undefined));
  const pod = async (i: number) => {
    const ip = `127.0.22.${i}`;
    const s = createServer((_q, res) => res.end(`pod web-${i}\n`));
    await new Promise<void>((r) => s.listen(8080, ip, () => r()));
    servers.set(i, s);
    await c.pod(`web-${i}`, { node: `n${(i % 3) + 1}`, ips: [ip], ports: [{ containerPort: 8080 }] });
    await c.patchPod(`web-${i}`, { metadata: { finalizers: [FINALIZER] } });
    await c.patchPodStatus(`web-${i}`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  };
  for (let i = 1; i <= 3; i++) await pod(i);
  /** Servers HAProxy itself reports for the backend: total, and usable (UP, not in maintenance or drain). */
  const haproxyServers = async () => {
    const lines = (await socketCommand(socket, 'show servers state bench--default-web-http'))
      .split('\n')
      .filter((l) => /^\d+ \S+ \d+ /.test(l));
    const cols = lines.map((l) => l.split(' '));
    // srv_admin_state bits: 0x23 maintenance (forced, inherited, resolution), 0x18 drain; 0x04
    // only records that the configuration said `disabled` (a slot brought up at runtime keeps it).
    const admin = (x: string[]) => Number(x[6]);
    const inRotation = (x: string[]) => (admin(x) & 0x23) === 0;
    return {
      // Servers not in maintenance (free slots of the dataplane transport are in maintenance).
      total: cols.filter(inRotation).length,
      up: cols.filter((x) => x[5] === '2' && inRotation(x) && (admin(x) & 0x18) === 0 && x[7] !== '0').length,
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
  const reloads0 = reloads();
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
  // The Pods' containers stop, as at the end of their grace period: their servers close (new
  // connections refused), then the Pods go.
  for (let i = 4; i <= PODS; i++) await closeServer(servers.get(i)!);
  for (let i = 4; i <= PODS; i++) await c.patchPod(`web-${i}`, { metadata: { finalizers: null } });
  while ((await haproxyServers()).total > 3 && performance.now() - inStart < 30_000) await sleep(20);
  const inMs = performance.now() - inStart;
  await sleep(300);
  stop = true;
  await loop;
  return {
    reloads: reloads() - reloads0,
    outMs,
    createdMs: created,
    drainedMs,
    inMs,
    requests: counts.ok + counts.failed,
    failed: counts.failed,
    sent: sent(),
  };
}

interface Round {
  reloads: number;
  outMs: number;
  createdMs: number;
  drainedMs: number;
  inMs: number;
  requests: number;
  failed: number;
  sent: string;
}

const TRANSPORTS: [string, Transport][] = [
  ['runtime', { kind: 'runtime' }],
  ['dataplane v3, slots 10', { kind: 'dataplane', slots: 10 }],
  ['dataplane v3, slots 50', { kind: 'dataplane', slots: 50 }],
];
const ROUNDS = 3;
const median = (xs: number[]) => quantile(xs, 0.5);
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
/** Each measure: its label and how a column of rounds reads. */
const MEASURES: [string, (r: Round[]) => string][] = [
  ['reloads during 3 -> 50 -> 3 (each round)', (r) => r.map((x) => x.reloads).join(', ')],
  ['3 -> 50: first new Pod to 50 servers up in HAProxy', (r) => secs(median(r.map((x) => x.outMs)))],
  ['(Pods created one by one over)', (r) => secs(median(r.map((x) => x.createdMs)))],
  ['50 -> 3: Pods deleted to 47 servers drained', (r) => secs(median(r.map((x) => x.drainedMs)))],
  ['50 -> 3: to 3 servers in rotation (finalizers released)', (r) => secs(median(r.map((x) => x.inMs)))],
  ['requests through the VIP (4 at a time, per round)', (r) => String(median(r.map((x) => x.requests)))],
  ['failed requests, all rounds (target 0)', (r) => String(r.reduce((n, x) => n + x.failed, 0))],
  ['sent (last round)', (r) => r[r.length - 1]!.sent],
];
try {
  // Rounds interleave the transports, so that the machine's noise falls on each alike.
  const rounds: Round[][] = TRANSPORTS.map(() => []);
  for (let k = 1; k <= ROUNDS; k++) {
    for (const [j, [name, transport]] of TRANSPORTS.entries()) {
      console.error(`round ${k}/${ROUNDS}: ${name}`);
      try {
        rounds[j]!.push(await scenario(transport));
      } finally {
        await cleanUp();
      }
    }
  }
  console.log(`\nmedians of ${ROUNDS} rounds\n`);
  console.log(`| measure | ${TRANSPORTS.map(([n]) => n).join(' | ')} |`);
  console.log(`| --- |${TRANSPORTS.map(() => ' --- |').join('')}`);
  for (const [m, show] of MEASURES) console.log(`| ${m} | ${rounds.map(show).join(' | ')} |`);
  console.log(`\n${rotationTable(await rotationOnEveryTransport())}`);
} finally {
  clearTimeout(deadline);
}
