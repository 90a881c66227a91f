/**
 * `npl-lb demo` (what `npm start` runs): the whole product on loopback. The sandbox API server;
 * three simulated nodes (127.N.10.1-3, demo-range.ts: the first range no other demo holds), each
 * with an agent forwarding in userspace and a Pod CIDR (127.N.4i.0/24); a sample app whose Pods the
 * sandbox's kubelet runs as processes there, answering with their Pod and node name; a
 * LoadBalancer Service and an Ingress; a Deployment `shop` whose Pods the sandbox's kubelet runs
 * as processes, gated on the load balancer, for `kubectl rollout restart/scale/delete pod` with
 * traffic flowing (demo-shop.ts); and the controller feeding the registry's demo device when it is
 * installed (demo-load-balancer.ts; else the memory adapter, saying so). It prints the
 * kubeconfig, kubectl commands, the URLs to curl (HTTPS too, with a certificate made at start) and the dashboard; Ctrl-C removes every process
 * and file it made.
 */
import { DEFAULT_NODE_PORT_RANGE } from '../sandbox/allocator.ts';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import { z } from 'zod';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { takeDemoLock } from './demo-lock.ts';
import { type DemoRange, freeDemoRange } from './demo-range.ts';
import { DEMO_VENDOR, demoLoadBalancer } from './demo-load-balancer.ts';
import { parseFlags } from '../config/flags.ts';
import { DEMO_FLAGS, DEMO_HELP, deviceFlags, demoSchema } from './demo-flags.ts';
import { parseControllerConfig } from '../config/controller-config.ts';
import { NplController } from '../controller/controller.ts';
import { EventRecorder } from '../kube/events.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { serveController } from './controller-http.ts';
import { startSandboxFromFlags, waitForSignal } from './sandbox.ts';
import { answers, gatewayVipOf, post, vipOf } from './demo-app.ts';
import { type GatewayApiChannel, installGatewayApiCrds } from '../sandbox/gateway-api.ts';
import { installNplLbCrds } from '../sandbox/npl-lb-crds.ts';
import { APP_PORT, demoBanner, GATEWAY_PORT, GW_HOST, HOST, HTTPS_PORT } from './demo-banner.ts';
import { hostPort } from '../model/names.ts';
import { createGatewaySample, createSampleApp, GW_API, type SampleContext } from './demo-sample.ts';
import { createShop } from './demo-shop.ts';
import { startNodeAgent } from './demo-nodes.ts';
import { DUAL_STACK, demoCidrs, dualStackBanner, dualStackVips } from './demo-dual-stack.ts';

const NODE_NAMES = ['node-1', 'node-2', 'node-3'];

export async function runDemo(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, DEMO_FLAGS, demoSchema);
  if (flags.help) {
    process.stdout.write(DEMO_HELP);
    return 0;
  }
  const log = createLogger({ name: 'demo', format: flags['log-format'], level: flags['log-level'] });
  const dual = flags['dual-stack'];
  const workDir = resolve(flags['work-dir']);
  const deviceDir = join(workDir, DEMO_VENDOR.type);
  const kubeconfig = join(workDir, 'kubeconfig');
  const { unlock, range } = await claimDemo(workDir);
  const NODES = NODE_NAMES.map((name, i) => ({ name, ip: range.node(i + 1) }));
  const cleanups: (() => Promise<void> | void)[] = [unlock, () => range.release()];
  const cleanup = async () => {
    for (const f of cleanups.reverse())
      await Promise.resolve(f()).catch((err: unknown) =>
        log.warn({ err: String(err) }, 'cleanup step failed'),
      );
  };
  try {
    const running = await startDemoSandbox(
      flags.port,
      kubeconfig,
      flags['log-format'],
      flags['log-level'],
      log,
    );
    cleanups.push(() => running.sandbox.close());
    cleanups.push(() => rmSync(kubeconfig, { force: true }));
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const quiet: Logger = log.child(
      {},
      { level: flags['log-level'] === 'info' ? 'warn' : flags['log-level'] },
    );

    await startDemoNodes(kc, NODES, dual, range, quiet, cleanups);

    /** The controller, once made: the device's supervisor tells it when the device dies. */
    let supervised: NplController | undefined = undefined;
    const {
      adapter,
      note: lbNote,
      traffic,
    } = await demoLoadBalancer({
      flags: deviceFlags(flags),
      dir: deviceDir,
      log,
      cleanups,
      controller: () => supervised,
    });
    cleanups.push(() => adapter.close());

    const { controller, http } = await startDemoController({
      kc,
      api: running.sandbox.url,
      adapter,
      config: `clusterName: demo\nvip: {cidrs: ${demoCidrs(dual, range)}}\ningressHttpPort: 8080\ningressHttpsPort: ${HTTPS_PORT}\n`,
      node: NODES[0]!.name,
      channel: flags['gateway-api-channel'],
      logger: quiet,
      cleanups,
      made: (c) => void (supervised = c),
    });

    await showSample(
      { kc, nodes: NODES, range, dual, workDir, cleanups },
      { controller, traffic, api: running.sandbox.url, lbNote, kubeconfig, dashboard: http.url },
    );
    await waitForSignal();
  } catch (err) {
    throw demoAddressError(err);
  } finally {
    await cleanup();
  }
  return 0;
}

/** Before anything in the work directory is touched: one demo per directory, and a range of its own. */
async function claimDemo(workDir: string): Promise<{ unlock: () => void; range: DemoRange }> {
  const unlock = takeDemoLock(workDir);
  const range = await freeDemoRange(APP_PORT).catch(() => undefined);
  if (range) return { unlock, range };
  unlock();
  throw new NplError(
    ErrorCodes.DEMO_ADDRESS_IN_USE,
    'every demo range (127.1-9.x) is held by another demo: stop one and start again',
  );
}

/**
 * The sample app, the Gateway API side and the Deployment to roll made; once their addresses are
 * published and (with a real device) traffic flows, the banner printed.
 */
async function showSample(
  sample: SampleContext,
  o: {
    controller: NplController;
    traffic: boolean;
    api: string;
    lbNote: string;
    kubeconfig: string;
    dashboard: string;
  },
): Promise<void> {
  const { caFile } = await createSampleApp(sample);
  await createGatewaySample(sample);
  await createShop(sample);

  const { l4, l7, gw, shop, duals } = await waitForAddresses(sample.kc, sample.dual);
  await o.controller.settled();
  // New servers go live after their first health check: wait (bounded) until traffic flows.
  const silent = o.traffic && l4 ? await waitForTraffic(l4, l7, gw, shop, duals) : [];
  process.stdout.write(
    demoBanner({
      api: o.api,
      lbNote: o.lbNote,
      kubeconfig: o.kubeconfig,
      l4,
      l7,
      gw,
      shop,
      caFile,
      dashboard: o.dashboard,
      extra: [
        ...(sample.dual ? dualStackBanner(duals) : []),
        ...silent.map(
          (url) =>
            `  (not answering yet after ${TRAFFIC_WAIT_MS / 1000} s: ${url}; its Pods may still be starting)`,
        ),
      ],
    }),
  );
}

/** The sandbox, as the demo runs it: loopback, EndpointSlices and workloads kept as on a cluster. */
function startDemoSandbox(
  port: number,
  kubeconfig: string,
  logFormat: z.infer<typeof demoSchema>['log-format'],
  logLevel: z.infer<typeof demoSchema>['log-level'],
  log: Logger,
): ReturnType<typeof startSandboxFromFlags> {
  return startSandboxFromFlags(
    {
      host: '127.0.0.1',
      port,
      'kubeconfig-out': kubeconfig,
      tls: false,
      help: false,
      'service-node-port-range': DEFAULT_NODE_PORT_RANGE,
      // A cluster that looks alive: Services' EndpointSlices kept as kube-controller-manager does.
      'endpoint-slices': true,
      // Deployments and DaemonSets (a Helm install's) rolled out as on a real cluster.
      workloads: true,
      'log-format': logFormat,
      'log-level': logLevel,
    },
    log,
  );
}

/**
 * The three nodes, each with its agent and a Pod CIDR of the range (node-1 with ::1/128 too in
 * dual-stack mode: its first Pod is the IPv6 member).
 */
async function startDemoNodes(
  kc: KubeConfig,
  nodes: { name: string; ip: string }[],
  dual: boolean,
  range: DemoRange,
  logger: Logger,
  cleanups: (() => Promise<void> | void)[],
): Promise<void> {
  for (const [i, n] of nodes.entries()) {
    const agent = await startNodeAgent(
      kc,
      n.name,
      dual && i === 0 ? [n.ip, DUAL_STACK.ipv6] : [n.ip],
      logger,
      dual && i === 0 ? [range.podCidr(i + 1), `${DUAL_STACK.ipv6}/128`] : [range.podCidr(i + 1)],
    );
    cleanups.push(() => agent.stop());
  }
}

/** An address of the range taken after it was found free (another demo started meanwhile), said so. */
function demoAddressError(err: unknown): unknown {
  if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') return err;
  const at = (err as { address?: string; port?: number }).address;
  const port = (err as { port?: number }).port;
  return new NplError(
    ErrorCodes.DEMO_ADDRESS_IN_USE,
    `${at ?? 'an address'}:${port ?? '?'} is in use: is another demo running (another clone's npm start)? Stop it and start again`,
    { cause: err },
  );
}

/**
 * The CRDs a Helm install puts in, the controller's own Pod (Events about the load balancer as a
 * whole go there: `kubectl describe pod -n npl-lb-system`), the controller, and its dashboard.
 */
async function startDemoController(o: {
  kc: KubeConfig;
  api: string;
  adapter: LoadBalancerAdapter;
  config: string;
  node: string;
  /** The Gateway API CRDs' channel (experimental: HTTPRoute's experimental CRD). */
  channel: GatewayApiChannel;
  logger: Logger;
  cleanups: (() => Promise<void> | void)[];
  /** Told the controller before it starts (the device's supervisor tells it when the device dies). */
  made: (controller: NplController) => void;
}): Promise<{ controller: NplController; http: { url: string } }> {
  const { kc } = o;
  // The Gateway API's CRDs, before the controller starts (it follows CRDs installed later too, but
  // looks for them only every 30 s); npl-lb's own, as `helm install` puts them in from crds/.
  await installGatewayApiCrds(o.api, {}, o.channel);
  await installNplLbCrds(o.api);
  await post(kc, '/api/v1/namespaces', { metadata: { name: 'npl-lb-system' } });
  const selfPod = z.object({ metadata: z.object({ uid: z.string() }) }).safeParse(
    await post(kc, '/api/v1/namespaces/npl-lb-system/pods', {
      metadata: { name: 'npl-lb-controller', labels: { 'app.kubernetes.io/name': 'npl-lb' } },
      spec: { nodeName: o.node, containers: [{ name: 'controller', image: 'npl-lb:demo' }] },
    }),
  );
  const controller = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(o.config),
    adapter: o.adapter,
    events: new EventRecorder(kc, 'npl-lb-controller', 'demo', { logger: o.logger }),
    logger: o.logger,
    coalesceMs: 20,
    self: {
      kind: 'Pod',
      apiVersion: 'v1',
      namespace: 'npl-lb-system',
      name: 'npl-lb-controller',
      uid: selfPod.success ? selfPod.data.metadata.uid : '',
    },
  });
  o.made(controller);
  await controller.start();
  o.cleanups.push(() => controller.stop());
  const http = await serveController(controller, { host: '127.0.0.1', port: 0 });
  o.cleanups.push(() => http.close());
  return { controller, http };
}

/** The sample app's addresses as their statuses publish them (30 s at most). */
async function waitForAddresses(
  kc: KubeConfig,
  dual: boolean,
): Promise<{ l4?: string; l7?: string; gw?: string; shop?: string; duals: string[] }> {
  let l4: string | undefined;
  let l7: string | undefined;
  let gw: string | undefined;
  let shop: string | undefined;
  let duals: string[] = [];
  const until = Date.now() + 30_000;
  while ((!l4 || !l7 || !gw || !shop || (dual && duals.length < 2)) && Date.now() < until) {
    if (dual) duals = await dualStackVips(kc);
    l4 = await vipOf(kc, '/api/v1/namespaces/default/services/web');
    shop = await vipOf(kc, '/api/v1/namespaces/default/services/shop');
    l7 = await vipOf(kc, '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web');
    gw = await gatewayVipOf(kc, `${GW_API}/namespaces/default/gateways/web`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    ...(l4 ? { l4 } : {}),
    ...(l7 ? { l7 } : {}),
    ...(gw ? { gw } : {}),
    ...(shop ? { shop } : {}),
    duals,
  };
}

/**
 * How long the banner waits for every URL it prints to answer. A few seconds on an idle machine;
 * a loaded CI machine (the test suite beside it) took over 45 s for the dual-stack sample's last
 * URL, and a banner naming a URL as not answering is worse than one printed later.
 */
const TRAFFIC_WAIT_MS = 90_000;

/**
 * Until every printed URL answers: the Service's, the Ingress's, the Gateway's (its 80/20 split
 * over two pools: a run of answers, not the first, so both pools serve), the shop's and the
 * dual-stack VIPs'. TRAFFIC_WAIT_MS in all; the URLs still not answering by then are
 * returned, for the banner to say so rather than print a command that fails.
 */
async function waitForTraffic(
  l4: string,
  l7: string | undefined,
  gw: string | undefined,
  shop: string | undefined,
  duals: string[],
): Promise<string[]> {
  const deadline = Date.now() + TRAFFIC_WAIT_MS;
  const silent: string[] = [];
  const until = async (url: string, host?: string, run = 5) => {
    let streak = 0;
    while (streak < run && Date.now() < deadline) {
      if (await answers(url, host)) streak++;
      else {
        streak = 0;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    if (streak < run) silent.push(host ? `${url} (Host: ${host})` : url);
  };
  await until(`http://${l4}:${APP_PORT}/`);
  if (l7) await until(`http://${l7}:${APP_PORT}/`, HOST);
  if (gw) await until(`http://${gw}:${GATEWAY_PORT}/`, GW_HOST, 20);
  if (shop) await until(`http://${shop}:${APP_PORT}/`);
  for (const v of duals) await until(`http://${hostPort(v, DUAL_STACK.port)}/`);
  return silent;
}
