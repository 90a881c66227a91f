/**
 * Certificate rotation under load through the whole product, on a real HAProxy, for each transport
 * (runtime; Data Plane API v2 and v3 on the simulator): the sandbox, the controller (ClusterIP members: one Pod serving HTTP on loopback), an Ingress
 * with `tls:` and its Secret. A bounded HTTPS request loop (4 at a time) runs while the Secret is
 * replaced ROTATIONS times; each time, the time from the Secret write to HAProxy serving the new
 * certificate (its fingerprint seen in a TLS handshake) is measured. Reloads and failed requests
 * are counted (both must be 0), from when HAProxy has no reload queued. Loopback only; bounded in
 * count and time. Transports run one after the other, each on a fresh sandbox, controller and
 * HAProxy.
 *
 *   node --import tsx bench/haproxy/rotation.ts   (also run at the end of npm run bench:haproxy)
 */
import { X509Certificate } from 'node:crypto';
import { createServer } from 'node:http';
import { connect as tlsConnect } from 'node:tls';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { testCertificate, tlsSecret } from '../../test/support/certs.ts';
import { Cluster } from '../../test/support/cluster.ts';
import { startDataplaneSim } from '../../test/support/dataplane.ts';
import { assertNoListeners, startHaproxy } from '../../test/support/haproxy.ts';
import { useSandbox } from '../../test/support/sandbox.ts';
import { quantile } from '../http-load.ts';

const VIP = '127.0.44.1';
const PORT = 18443;
const POD_IP = '127.0.44.11';
const ROTATIONS = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const ROTATION_TRANSPORTS = ['runtime', 'Data Plane v2', 'Data Plane v3'] as const;
export type RotationTransport = (typeof ROTATION_TRANSPORTS)[number];

export interface RotationFigures {
  transport: RotationTransport;
  rotations: number;
  toServedMs: number[];
  reloads: number;
  requests: number;
  failed: number;
}

type After = { after: (fn: () => Promise<void> | void) => void };

const fingerprint = () =>
  new Promise<string>((resolve) => {
    const s = tlsConnect({
      host: VIP,
      port: PORT,
      servername: 'shop.example.com',
      rejectUnauthorized: false,
    });
    s.on('secureConnect', () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.destroy();
    });
    s.on('error', () => resolve(''));
  });

async function until(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The transport's adapter on a real HAProxy, its count of HAProxy reloads, and a wait for none queued. */
async function haproxyFor(t: After, transport: RotationTransport) {
  if (transport === 'runtime') {
    const rig = await startHaproxy(t);
    const adapter = rig.adapter('bench', { healthChecks: false });
    // Its reloads finish inside apply().
    return { adapter, reloads: () => adapter.stats.reloads, idle: async () => {} };
  }
  const rig = await startDataplaneSim(t);
  const adapter = rig.adapter('bench', transport === 'Data Plane v2' ? 'v2' : 'v3');
  return { adapter, reloads: () => rig.sim.stats.reloads, idle: () => rig.sim.idle() };
}

export async function rotationUnderLoad(
  t: After,
  transport: RotationTransport = 'runtime',
): Promise<RotationFigures> {
  assertNoListeners('127.0.44.', [PORT, 8080]);
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  const pod = createServer((_q, r) => r.end('ok\n'));
  await new Promise<void>((r) => pod.listen(8080, POD_IP, () => r()));
  t.after(() => new Promise<void>((r) => pod.close(() => r())));
  const { adapter, reloads, idle } = await haproxyFor(t, transport);
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      `clusterName: bench\nserviceType: ClusterIP\nvip: {cidrs: [${VIP}/32]}\ningressHttpPort: 18080\ningressHttpsPort: ${PORT}\n`,
    ),
    adapter,
    events: { record: async () => {} },
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();

  const net = kc.makeApiClient(NetworkingV1Api);
  await net.createIngressClass({
    body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
  });
  await c.node('n1', { internal: ['127.0.44.2'] });
  await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 8080 }] });
  await c.pod('web-1', {
    node: 'n1',
    ips: [POD_IP],
    labels: { app: 'web' },
    ports: [{ containerPort: 8080 }],
  });
  await c.patchPodStatus('web-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
  const certs = await Promise.all(
    Array.from({ length: ROTATIONS + 1 }, () => testCertificate({ dns: ['shop.example.com'] })),
  );
  await c.core.createNamespacedSecret({
    namespace: 'default',
    body: tlsSecret('default', 'shop-tls', certs[0]!) as never,
  });
  await net.createNamespacedIngress({
    namespace: 'default',
    body: {
      metadata: { name: 'shop' },
      spec: {
        ingressClassName: 'npl',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 8080 } } },
                },
              ],
            },
          },
        ],
      },
    },
  });
  const fp = (i: number) => new X509Certificate(certs[i]!.cert).fingerprint256;
  await until(async () => (await fingerprint()) === fp(0), 15_000, 'HTTPS served');

  const agent = new Agent({ connect: { rejectUnauthorized: false, servername: 'shop.example.com' } });
  t.after(() => agent.close());
  const counts = { ok: 0, failed: 0 };
  let stop = false;
  const deadline = Date.now() + 120_000;
  const worker = async () => {
    while (!stop && Date.now() < deadline) {
      try {
        const res = await request(`https://${VIP}:${PORT}/`, {
          headers: { host: 'shop.example.com' },
          dispatcher: agent,
        });
        await res.body.text();
        if (res.statusCode === 200) counts.ok++;
        else counts.failed++;
      } catch {
        counts.failed++;
      }
    }
  };
  const loop = Promise.all([worker(), worker(), worker(), worker()]);
  await idle();
  const reloads0 = reloads();
  const toServedMs: number[] = [];
  for (let i = 1; i <= ROTATIONS; i++) {
    await sleep(100);
    const started = performance.now();
    await c.core.replaceNamespacedSecret({
      name: 'shop-tls',
      namespace: 'default',
      body: tlsSecret('default', 'shop-tls', certs[i]!) as never,
    });
    await until(async () => (await fingerprint()) === fp(i), 15_000, `rotation ${i}`);
    toServedMs.push(performance.now() - started);
  }
  await sleep(100);
  stop = true;
  await loop;
  return {
    transport,
    rotations: ROTATIONS,
    toServedMs,
    reloads: reloads() - reloads0,
    requests: counts.ok + counts.failed,
    failed: counts.failed,
  };
}

/** One column per transport, measured one after the other in the same run. */
export function rotationTable(runs: RotationFigures[]): string {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const row = (name: string, f: (r: RotationFigures) => string | number) =>
    `| ${name} | ${runs.map(f).join(' | ')} |`;
  return [
    `| certificate rotation under load | ${runs.map((r) => r.transport).join(' | ')} |`,
    `| --- |${runs.map(() => ' --- |').join('')}`,
    row(
      `Secret replaced -> new certificate served: median (p90, max) of ${runs[0]?.rotations ?? 0}`,
      (f) =>
        `${ms(quantile(f.toServedMs, 0.5))} (${ms(quantile(f.toServedMs, 0.9))}, ${ms(Math.max(...f.toServedMs))})`,
    ),
    row('reloads during the rotations (target 0)', (f) => f.reloads),
    row('HTTPS requests during the rotations (4 at a time)', (f) => f.requests),
    row('failed requests (target 0)', (f) => f.failed),
  ].join('\n');
}

/** Every transport in turn, each cleaned up before the next. */
export async function rotationOnEveryTransport(): Promise<RotationFigures[]> {
  const runs: RotationFigures[] = [];
  for (const transport of ROTATION_TRANSPORTS) {
    console.error(`certificate rotation under load: ${transport}`);
    const cleanups: (() => Promise<void> | void)[] = [];
    try {
      runs.push(await rotationUnderLoad({ after: (fn) => void cleanups.push(fn) }, transport));
    } finally {
      for (const f of cleanups.reverse()) await Promise.resolve(f()).catch(() => undefined);
    }
  }
  return runs;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const timer = setTimeout(() => {
    console.error('rotation benchmark exceeded 10 minutes; aborting');
    process.exit(1);
  }, 600_000);
  try {
    console.log(rotationTable(await rotationOnEveryTransport()));
  } finally {
    clearTimeout(timer);
  }
}
