/**
 * Avi cold sync of the L7 shape with TLS, at 20 ms and at 100 ms per API call: the sandbox (own
 * process) with 100 backend Services of 2 Pods each and 50 Ingresses of our class, each with its
 * own host, 4 paths and a `tls:` Secret (50 certificates: an HTTPS parent with the first, 49 SNI
 * children), beside the HTTP virtual service of the class. Reported with the ideal (calls made ÷
 * the adapter's concurrency × latency) and the ratio. Then a restart against the same simulator:
 * writes (goal 0). Loopback only; bounded (aborts after 10 minutes).
 *
 *   node --import tsx bench/avi/l7-tls.ts   (also run at the end of npm run bench:avi)
 */
import { KubeConfig } from '@kubernetes/client-node';
import { AviAdapter } from '../../adapters/avi/adapter.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { testCertificate, tlsSecret } from '../../test/support/certs.ts';
import { annotatedPod, createNodes, pool as inParallel, printTable, send } from '../http-load.ts';
import { startSandboxProcess } from '../sandbox-process.ts';
import { AviSimulatorProcess } from './sim-process.ts';

const INGRESSES = 50;
const PATHS = 4;
const BACKENDS = 100;
const NODES = 10;
const CONCURRENCY = 8;
const nodeIP = (n: number) => `192.0.2.${n + 1}`;

interface ColdSync {
  latency: number;
  ms: number;
  /** From the controller's start to its first write answered (reading the cluster, building the state). */
  startMs: number;
  calls: number;
  writes: number;
  ideal: number;
  restartWrites: number;
  certificates: number;
  children: number;
}

async function fill(url: string): Promise<void> {
  await createNodes(url, NODES, nodeIP);
  await inParallel(
    Array.from({ length: BACKENDS }, (_, i) => i),
    16,
    (i) =>
      send(url, 'POST', '/api/v1/namespaces/default/services', {
        metadata: { name: `svc-${i}` },
        spec: { selector: { app: `app-${i}` }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
      }),
  );
  let nodePort = 61000;
  await inParallel(
    Array.from({ length: BACKENDS * 2 }, (_, k) => k),
    16,
    (k) =>
      annotatedPod(url, {
        name: `pod-${k}`,
        app: `app-${k % BACKENDS}`,
        n: k,
        nodes: NODES,
        nodeIP,
        nodePort: nodePort++,
      }),
  );
  await send(url, 'POST', '/apis/networking.k8s.io/v1/ingressclasses', {
    metadata: { name: 'npl' },
    spec: { controller: 'npl-lb.io/ingress-controller' },
  });
  await inParallel(
    Array.from({ length: INGRESSES }, (_, g) => g),
    8,
    async (g) => {
      const host = `app-${g}.example.com`;
      await send(
        url,
        'POST',
        '/api/v1/namespaces/default/secrets',
        tlsSecret('default', `tls-${g}`, await testCertificate({ dns: [host] })),
      );
      await send(url, 'POST', '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
        metadata: { name: `ing-${g}` },
        spec: {
          ingressClassName: 'npl',
          tls: [{ hosts: [host], secretName: `tls-${g}` }],
          rules: [
            {
              host,
              http: {
                paths: Array.from({ length: PATHS }, (_, p) => ({
                  path: `/p${p}`,
                  pathType: 'Prefix',
                  backend: { service: { name: `svc-${(g * PATHS + p) % BACKENDS}`, port: { number: 80 } } },
                })),
              },
            },
          ],
        },
      });
    },
  );
}

async function coldSync(url: string, latency: number): Promise<ColdSync> {
  // The device in a process of its own, as a real controller is another machine.
  const sim = new AviSimulatorProcess();
  const simUrl = await sim.start();
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: url }));
  const make = () =>
    new AviAdapter({
      owner: 'bench',
      url: simUrl,
      username: 'admin',
      password: 'admin',
      version: '22.1.3',
      tenant: 'admin',
      concurrency: CONCURRENCY,
    });
  const run = async (adapter: AviAdapter) => {
    const controller = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: bench\ndefaultLoadBalancer: true\nvip: {cidrs: [198.18.0.0/20]}\nhealthIntervalSeconds: 0',
      ),
      adapter,
      events: { record: async () => {} },
      sweepIntervalMs: 0,
    });
    await controller.start();
    return controller;
  };
  try {
    await sim.setLatency(latency);
    const adapter = make();
    const calls0 = (await sim.stats()).calls;
    const t0 = performance.now();
    const controller = await run(adapter);
    const children = () => sim.count('virtualservice', 'type', 'VS_TYPE_VH_CHILD');
    while ((await children()) < INGRESSES - 1 && performance.now() - t0 < 300_000)
      await new Promise((r) => setTimeout(r, 50));
    await controller.settled();
    const calls = (await sim.stats()).calls - calls0;
    const log = await sim.writeLog();
    const ms = log[log.length - 1]!.at - t0;
    const startMs = log[0]!.at - t0;
    const writes = log.length;
    await controller.stop();
    await adapter.close();
    // A restart against the same simulator: nothing to write.
    const again = make();
    const w0 = (await sim.stats()).writes;
    const second = await run(again);
    await second.settled();
    const restartWrites = (await sim.stats()).writes - w0;
    await second.stop();
    await again.close();
    return {
      latency,
      ms,
      startMs,
      calls,
      writes,
      ideal: (calls / CONCURRENCY) * latency,
      restartWrites,
      certificates: await sim.count('sslkeyandcertificate'),
      children: await children(),
    };
  } finally {
    await sim.close();
  }
}

export async function l7TlsColdSync(): Promise<ColdSync[]> {
  const { url, child } = await startSandboxProcess();
  try {
    await fill(url);
    const out: ColdSync[] = [];
    for (const latency of [20, 100]) out.push(await coldSync(url, latency));
    return out;
  } finally {
    child.kill('SIGTERM');
  }
}

export function l7TlsTable(runs: ColdSync[]): void {
  printTable(
    runs.map((r) => [
      `L7 with TLS cold sync (${INGRESSES} Ingresses, ${INGRESSES} certificates, ${INGRESSES * PATHS} paths), ${r.latency} ms per call`,
      `${(r.ms / 1000).toFixed(1)} s`,
      `${r.calls} calls (${r.writes} writes); ideal (calls / ${CONCURRENCY} x ${r.latency} ms) ${(r.ideal / 1000).toFixed(1)} s: ${(r.ms / r.ideal).toFixed(2)}x (first write answered at ${(r.startMs / 1000).toFixed(2)} s); ${r.certificates} certificates, ${r.children} SNI children; restart writes ${r.restartWrites} (goal 0)`,
    ]),
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const deadline = setTimeout(() => {
    console.error('benchmark exceeded 10 minutes; aborting');
    process.exit(1);
  }, 600_000);
  try {
    l7TlsTable(await l7TlsColdSync());
  } finally {
    clearTimeout(deadline);
    const { dispatcher } = await import('../http-load.ts');
    await dispatcher.close();
  }
}
