/**
 * `npl-lb demo` (what `npm start` runs): the whole product on loopback. The sandbox API server;
 * three simulated nodes (127.N.10.1-3, demo-range.ts: the first range no other demo holds), each
 * with an agent forwarding in userspace; a sample app whose Pods are real HTTP servers (127.N.20.x)
 * answering with their Pod and node name; a
 * LoadBalancer Service and an Ingress; and the controller feeding a real HAProxy through its
 * runtime socket when HAProxy is installed (else the memory adapter, saying so). It prints the
 * kubeconfig, kubectl commands, the URLs to curl (HTTPS too, with a certificate made at start) and the dashboard; Ctrl-C removes every process
 * and file it made.
 */
import { DEFAULT_NODE_PORT_RANGE } from '../sandbox/allocator.ts';
import { rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { takeDemoLock } from './demo-lock.ts';
import { freeDemoRange } from './demo-range.ts';
import { demoLoadBalancer } from './demo-load-balancer.ts';
import { AgentMetrics } from '../agent/metrics.ts';
import { NplAgent } from '../agent/npl-controller.ts';
import { UserspaceBackend } from '../agent/rules/userspace.ts';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { parseControllerConfig } from '../config/controller-config.ts';
import { NplController } from '../controller/controller.ts';
import { controllerRoutes } from '../controller/http-routes.ts';
import { EventRecorder } from '../kube/events.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { serveStatus } from '../runtime/status-server.ts';
import { selfSignedCertificate } from '../runtime/tls.ts';
import { startSandboxFromFlags, waitForSignal } from './sandbox.ts';
import { answers, appServer, gatewayVipOf, patchStatus, post, runningStatus, vipOf } from './demo-app.ts';
import { installGatewayApiCrds } from '../sandbox/gateway-api.ts';
import { installNplLbCrds } from '../sandbox/npl-lb-crds.ts';
import { APP_PORT, demoBanner, GATEWAY_PORT, GW_HOST, HOST, HTTPS_PORT } from './demo-banner.ts';
import { hostPort } from '../model/names.ts';
import {
  classAnnotations,
  createDualStackService,
  DUAL_STACK,
  demoCidrs,
  dualStackBanner,
  dualStackVips,
  gatewayAddresses,
} from './demo-dual-stack.ts';

const DEMO_FLAGS = {
  port: { type: 'string', description: 'sandbox port, 0 for any free port', default: '0' },
  'work-dir': {
    type: 'string',
    description: 'where the demo keeps its kubeconfig and HAProxy files',
    default: '.npl-lb',
  },
  'haproxy-bin': { type: 'string', description: 'the HAProxy binary', default: 'haproxy' },
  'dual-stack': {
    type: 'boolean',
    description:
      'IPv6 too: node-1 and web-1 on ::1, a RequireDualStack Service web-dual on an IPv4 VIP and ::1',
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema.extend({
  port: z.coerce.number().int().min(0).max(65535),
  'work-dir': z.string().min(1),
  'haproxy-bin': z.string().min(1),
  'dual-stack': z.boolean().default(false),
});

export const DEMO_HELP = helpText(
  'demo',
  'Runs npl-lb on its embedded sandbox, on loopback only.',
  DEMO_FLAGS,
);

const NODE_NAMES = ['node-1', 'node-2', 'node-3'];
const GW_API = '/apis/gateway.networking.k8s.io/v1';

export async function runDemo(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, DEMO_FLAGS, schema);
  if (flags.help) {
    process.stdout.write(DEMO_HELP);
    return 0;
  }
  const log = createLogger({ name: 'demo', format: flags['log-format'], level: flags['log-level'] });
  const dual = flags['dual-stack'];
  const workDir = resolve(flags['work-dir']);
  const haproxyDir = join(workDir, 'haproxy');
  const kubeconfig = join(workDir, 'kubeconfig');
  // Before anything in the work directory is touched: one demo per directory.
  const unlock = takeDemoLock(workDir);
  const range = await freeDemoRange(APP_PORT).catch(() => undefined);
  if (!range) {
    unlock();
    throw new NplError(
      ErrorCodes.DEMO_ADDRESS_IN_USE,
      'every demo range (127.1-9.x) is held by another demo: stop one and start again',
    );
  }
  const NODES = NODE_NAMES.map((name, i) => ({ name, ip: range.node(i + 1) }));
  const cleanups: (() => Promise<void> | void)[] = [unlock, () => range.release()];
  const cleanup = async () => {
    for (const f of cleanups.reverse())
      await Promise.resolve(f()).catch((err: unknown) =>
        log.warn({ err: String(err) }, 'cleanup step failed'),
      );
  };
  try {
    const running = await startSandboxFromFlags(
      {
        host: '127.0.0.1',
        port: flags.port,
        'kubeconfig-out': kubeconfig,
        tls: false,
        help: false,
        'service-node-port-range': DEFAULT_NODE_PORT_RANGE,
        // A cluster that looks alive: Services' EndpointSlices kept as kube-controller-manager does.
        'endpoint-slices': true,
        // Deployments and DaemonSets (a Helm install's) rolled out as on a real cluster.
        workloads: true,
        'log-format': flags['log-format'],
        'log-level': flags['log-level'],
      },
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

    for (const [i, n] of NODES.entries()) {
      await post(kc, '/api/v1/nodes', { metadata: { name: n.name } });
      const ips = dual && i === 0 ? [n.ip, DUAL_STACK.ipv6] : [n.ip];
      await patchStatus(kc, `/api/v1/nodes/${n.name}`, {
        status: {
          addresses: ips.map((address) => ({ type: 'InternalIP', address })),
          conditions: [{ type: 'Ready', status: 'True' }],
        },
      });
      const agent = new NplAgent({
        kubeConfig: kc,
        nodeName: n.name,
        portRange: { start: 61000, end: 61999 },
        backend: new UserspaceBackend(),
        metrics: new AgentMetrics(),
        events: new EventRecorder(kc, 'npl-lb-agent', n.name, { logger: quiet }),
        logger: quiet,
      });
      await agent.start();
      cleanups.push(() => agent.stop());
    }

    /** The controller, once made: HAProxy's supervisor tells it when HAProxy dies. */
    let supervised: NplController | undefined = undefined;
    const {
      adapter,
      note: lbNote,
      traffic,
    } = await demoLoadBalancer({
      bin: flags['haproxy-bin'],
      dir: haproxyDir,
      log,
      cleanups,
      controller: () => supervised,
    });
    cleanups.push(() => adapter.close());

    // The Gateway API's CRDs, before the controller starts (it follows CRDs installed later too, but
    // looks for them only every 30 s).
    await installGatewayApiCrds(running.sandbox.url);
    // npl-lb's own CRDs (BackendPolicy), as `helm install` puts them in from the chart's crds/.
    await installNplLbCrds(running.sandbox.url);
    // The controller's own Pod, as the chart would run it: Events about the load balancer as a
    // whole (HAProxy died, answers again) go there (`kubectl describe pod -n npl-lb-system`).
    await post(kc, '/api/v1/namespaces', { metadata: { name: 'npl-lb-system' } });
    const selfPod = z.object({ metadata: z.object({ uid: z.string() }) }).safeParse(
      await post(kc, '/api/v1/namespaces/npl-lb-system/pods', {
        metadata: { name: 'npl-lb-controller', labels: { 'app.kubernetes.io/name': 'npl-lb' } },
        spec: { nodeName: NODES[0]!.name, containers: [{ name: 'controller', image: 'npl-lb:demo' }] },
      }),
    );
    const controller = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        `clusterName: demo\nvip: {cidrs: ${demoCidrs(dual, range)}}\ningressHttpPort: 8080\ningressHttpsPort: ${HTTPS_PORT}\nnamespaces: {include: [default]}\n`,
      ),
      adapter,
      events: new EventRecorder(kc, 'npl-lb-controller', 'demo', { logger: quiet }),
      logger: quiet,
      coalesceMs: 20,
      self: {
        kind: 'Pod',
        apiVersion: 'v1',
        namespace: 'npl-lb-system',
        name: 'npl-lb-controller',
        uid: selfPod.success ? selfPod.data.metadata.uid : '',
      },
    });
    supervised = controller;
    await controller.start();
    cleanups.push(() => controller.stop());
    const routes = controllerRoutes(controller.state, controller.health);
    const http = await serveStatus(
      { host: '127.0.0.1', port: 0 },
      controller.metrics.registry,
      () => controller.isReady,
      routes.json,
      routes.html,
      routes.handlers,
    );
    cleanups.push(() => http.close());

    // The sample app: three Pods, a LoadBalancer Service and an Ingress.
    await post(kc, '/apis/networking.k8s.io/v1/ingressclasses', {
      metadata: { name: 'npl-lb', annotations: classAnnotations(dual, range) },
      spec: { controller: 'npl-lb.io/ingress-controller' },
    });
    await post(kc, '/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: {
        type: 'LoadBalancer',
        loadBalancerClass: 'npl-lb.io/lb',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: APP_PORT, targetPort: 'http' }],
      },
    });
    /** A Pod of the sample app (`app`), on a node, serving on its own loopback IP. */
    const appPod = async (app: string, pod: string, n: { name: string; ip: string }, ...ips: string[]) => {
      for (const at of ips) {
        const server = await appServer(pod, n.name, at, APP_PORT);
        cleanups.push(() => new Promise<void>((r) => server.close(() => r())));
      }
      await post(kc, '/api/v1/namespaces/default/pods', {
        metadata: { name: pod, labels: { app } },
        spec: {
          nodeName: n.name,
          containers: [
            { name: 'web', image: 'demo/web', ports: [{ name: 'http', containerPort: APP_PORT }] },
          ],
        },
      });
      // As the kubelet reports a started, ready Pod: kubectl shows it Running and 1/1.
      await patchStatus(kc, `/api/v1/namespaces/default/pods/${pod}`, {
        status: runningStatus(ips, 'web', n.ip),
      });
    };
    for (const [i, n] of NODES.entries())
      await appPod('web', `web-${i + 1}`, n, range.pod(i + 1), ...(dual && i === 0 ? [DUAL_STACK.ipv6] : []));
    if (dual) await createDualStackService(kc);
    // HTTPS: a certificate for the host, made now; curl trusts it through the file written here.
    const tls = await selfSignedCertificate(HOST);
    const caFile = join(workDir, 'web-ca.pem');
    writeFileSync(caFile, tls.cert);
    cleanups.push(() => rmSync(caFile, { force: true }));
    await post(kc, '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'web-tls' },
      type: 'kubernetes.io/tls',
      data: {
        'tls.crt': Buffer.from(tls.cert).toString('base64'),
        'tls.key': Buffer.from(tls.key).toString('base64'),
      },
    });
    await post(kc, '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
      metadata: { name: 'web' },
      spec: {
        ingressClassName: 'npl-lb',
        tls: [{ hosts: [HOST], secretName: 'web-tls' }],
        rules: [
          {
            host: HOST,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { name: 'http' } } },
                },
              ],
            },
          },
        ],
      },
    });

    // The Gateway API: our class, a second version of the app, and an HTTPRoute that splits 80/20
    // between the two versions and adds a header.
    await post(kc, `${GW_API}/gatewayclasses`, {
      metadata: { name: 'npl-lb' },
      spec: { controllerName: 'npl-lb.io/gateway-controller' },
    });
    await post(kc, '/api/v1/namespaces/default/services', {
      metadata: { name: 'web-v2' },
      spec: { selector: { app: 'web-v2' }, ports: [{ name: 'http', port: APP_PORT, targetPort: 'http' }] },
    });
    for (const [i, n] of NODES.slice(0, 2).entries()) {
      await appPod('web-v2', `web-v2-${i + 1}`, n, range.pod(i + 11));
    }
    await post(kc, `${GW_API}/namespaces/default/gateways`, {
      metadata: { name: 'web' },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [{ name: 'http', port: GATEWAY_PORT, protocol: 'HTTP' }],
        ...gatewayAddresses(dual, range),
      },
    });
    await post(kc, `${GW_API}/namespaces/default/httproutes`, {
      metadata: { name: 'web-split' },
      spec: {
        parentRefs: [{ name: 'web' }],
        hostnames: [GW_HOST],
        rules: [
          {
            filters: [
              {
                type: 'RequestHeaderModifier',
                requestHeaderModifier: { add: [{ name: 'X-Demo', value: 'gateway' }] },
              },
            ],
            backendRefs: [
              { name: 'web', port: APP_PORT, weight: 80 },
              { name: 'web-v2', port: APP_PORT, weight: 20 },
            ],
          },
        ],
      },
    });

    let l4: string | undefined;
    let l7: string | undefined;
    const until = Date.now() + 30_000;
    let gw: string | undefined;
    let duals: string[] = [];
    while ((!l4 || !l7 || !gw || (dual && duals.length < 2)) && Date.now() < until) {
      if (dual) duals = await dualStackVips(kc);
      l4 = await vipOf(kc, '/api/v1/namespaces/default/services/web');
      l7 = await vipOf(kc, '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web');
      gw = await gatewayVipOf(kc, `${GW_API}/namespaces/default/gateways/web`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await controller.settled();
    // New servers go live after their first health check: wait (bounded) until traffic flows.
    if (traffic && l4) {
      const ready = Date.now() + 15_000;
      while (Date.now() < ready && !(await answers(`http://${l4}:${APP_PORT}/`)))
        await new Promise((r) => setTimeout(r, 200));
      while (gw && Date.now() < ready && !(await answers(`http://${gw}:${GATEWAY_PORT}/`, GW_HOST)))
        await new Promise((r) => setTimeout(r, 200));
      for (const v of duals)
        while (Date.now() < ready && !(await answers(`http://${hostPort(v, DUAL_STACK.port)}/`)))
          await new Promise((r) => setTimeout(r, 200));
    }
    process.stdout.write(
      demoBanner({
        api: running.sandbox.url,
        lbNote,
        kubeconfig,
        l4,
        l7,
        gw,
        caFile,
        dashboard: http.url,
        extra: dual ? dualStackBanner(duals) : [],
      }),
    );
    await waitForSignal();
  } catch (err) {
    // An address of the range taken after it was found free: another demo started meanwhile.
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      const at = (err as { address?: string; port?: number }).address;
      const port = (err as { port?: number }).port;
      throw new NplError(
        ErrorCodes.DEMO_ADDRESS_IN_USE,
        `${at ?? 'an address'}:${port ?? '?'} is in use: is another demo running (another clone's npm start)? Stop it and start again`,
        { cause: err },
      );
    }
    throw err;
  } finally {
    await cleanup();
  }
  return 0;
}
