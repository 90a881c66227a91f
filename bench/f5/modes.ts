/**
 * Whole-tenant against per-application declarations, side by side in one run, on the same
 * simulated BIG-IP: 1,000 LoadBalancer Services (one Pod each) and a Service `web` of 3 Pods, the
 * device taking 100 ms plus 2 ms per KiB of what a declaration changes (a real BIG-IP takes longer
 * the bigger the tenant). For each mode: the cold sync, one Pod added (a single-Pod change), and
 * `web` scaled 3 -> 50 with its Pods paced over 6 s: declarations posted, bytes posted,
 * applications posted, and the time until the device has it. Loopback only; bounded.
 *
 *   node --import tsx bench/f5/modes.ts   (also run at the end of npm run bench:f5)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { annotatedPod, createLbServices, createNodes, pool as inParallel, send } from '../http-load.ts';
import { startSandboxProcess } from '../sandbox-process.ts';

const SERVICES = 1000;
const NODES = 10;
const PACED_MS = 6000;
const nodeIP = (n: number) => `192.0.2.${n + 1}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Mode = 'tenant' | 'application';

interface Cost {
  declarations: number;
  bytes: number;
  apps: number;
  ms: number;
}

export interface ModeFigures {
  mode: Mode;
  cold: Cost;
  onePod: Cost;
  paced: Cost;
}

/** The members of a pool on the device, in whichever layout (one application, or its own). */
export function poolMembers(sim: BigIpSimulator, tenant: string, pool: string): number {
  for (const app of Object.values(sim.tenants.get(tenant) ?? {})) {
    const p = (app as Record<string, { members?: unknown[] }> | null)?.[pool];
    if (p?.members) return p.members.length;
  }
  return 0;
}

async function scenario(mode: Mode): Promise<ModeFigures> {
  const { url, child } = await startSandboxProcess();
  const sim = new BigIpSimulator({ latencyMs: 100, latencyPerKiBMs: 2 });
  const simUrl = await sim.start();
  const adapter = new F5Adapter({
    owner: 'bench',
    url: simUrl,
    username: 'admin',
    password: 'admin',
    taskPollMs: 50,
    declarations: mode,
  });
  let controller: NplController | undefined;
  try {
    await createNodes(url, NODES, nodeIP);
    await createLbServices(url, SERVICES);
    await send(url, 'POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'web', annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      },
    });
    let port = 61000;
    const pod = (name: string, app: string, n: number) =>
      annotatedPod(url, { name, app, n, nodes: NODES, nodeIP, nodePort: port++ });
    await inParallel(
      Array.from({ length: SERVICES }, (_, i) => i),
      16,
      (i) => pod(`pod-${i}`, `app-${i}`, i),
    );
    for (let i = 0; i < 3; i++) await pod(`web-${i}`, 'web', i);

    const members = (name: string): number => poolMembers(sim, 'npl_lb_bench', name);
    const mark = () => ({
      d: sim.stats.declarations,
      b: sim.stats.bytesPosted,
      a: sim.stats.appsPosted,
      t: performance.now(),
    });
    const cost = (m: ReturnType<typeof mark>, end: number): Cost => ({
      declarations: sim.stats.declarations - m.d,
      bytes: sim.stats.bytesPosted - m.b,
      apps: sim.stats.appsPosted - m.a,
      ms: end - m.t,
    });
    const until = async (check: () => boolean, ms: number, what: string) => {
      const end = performance.now() + ms;
      while (!check()) {
        if (performance.now() > end) throw new Error(`${mode}: timed out waiting for ${what}`);
        await sleep(20);
      }
      return performance.now();
    };

    const kc = new KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: url }));
    controller = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/20]}',
      ),
      adapter,
      events: { record: async () => {} },
      sweepIntervalMs: 0,
    });
    const c0 = mark();
    await controller.start();
    const coldEnd = await until(
      () =>
        members('bench--default-web-http') === 3 && members(`bench--default-svc-${SERVICES - 1}-http`) === 1,
      180_000,
      'the cold sync',
    );
    const cold = cost(c0, coldEnd);
    await controller.settled();

    const o0 = mark();
    await pod('pod-extra', 'app-7', 7);
    const oneEnd = await until(
      () => members('bench--default-svc-7-http') === 2,
      60_000,
      'the single-Pod change',
    );
    const onePod = cost(o0, oneEnd);
    await controller.settled();

    const p0 = mark();
    for (let k = 0; k < 47; k++) {
      const wait = p0.t + (k * PACED_MS) / 47 - performance.now();
      if (wait > 0) await sleep(wait);
      await pod(`web-${k + 3}`, 'web', k + 3);
    }
    const pacedEnd = await until(
      () => members('bench--default-web-http') === 50,
      60_000,
      'the paced scale-out',
    );
    const paced = cost(p0, pacedEnd);
    await controller.settled();
    return { mode, cold, onePod, paced };
  } finally {
    await controller?.stop();
    await adapter.close();
    await sim.close();
    child.kill('SIGTERM');
  }
}

export async function bothModes(): Promise<ModeFigures[]> {
  const out: ModeFigures[] = [];
  for (const mode of ['tenant', 'application'] as const) {
    console.error(`declarations per ${mode}`);
    out.push(await scenario(mode));
  }
  return out;
}

export function printModes(runs: ModeFigures[]): void {
  const kib = (b: number) => `${(b / 1024).toFixed(1)} KiB`;
  const show = (c: Cost) =>
    `${c.declarations} decl., ${kib(c.bytes)}${c.apps ? `, ${c.apps} apps` : ''}, ${(c.ms / 1000).toFixed(2)} s`;
  console.log(
    `\n| at 1,000 Services, device 100 ms + 2 ms/KiB | ${runs.map((r) => `per ${r.mode}`).join(' | ')} |`,
  );
  console.log(`| --- |${runs.map(() => ' --- |').join('')}`);
  const row = (name: string, f: (r: ModeFigures) => Cost) =>
    console.log(`| ${name} | ${runs.map((r) => show(f(r))).join(' | ')} |`);
  row('cold sync: 1,001 Services', (r) => r.cold);
  row('one Pod added to one Service (a single-Pod change)', (r) => r.onePod);
  row(`scale-out 3 -> 50 Pods paced over ${PACED_MS / 1000} s`, (r) => r.paced);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const timer = setTimeout(() => {
    console.error('benchmark exceeded 10 minutes; aborting');
    process.exit(1);
  }, 600_000);
  try {
    printModes(await bothModes());
  } finally {
    clearTimeout(timer);
  }
}
