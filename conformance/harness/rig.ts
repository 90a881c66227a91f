/**
 * What the conformance suite runs against: the sandbox API server with the Gateway API CRDs and its
 * workloads (its kubelet runs the upstream echo-basic Pods as processes on the nodes' Pod CIDRs,
 * pod-images.ts), three nodes each with a real NodePortLocal agent forwarding in userspace, the
 * upstream base manifests, and the controller feeding one adapter. On HAProxy (the
 * runtime transport on a stock HAProxy, or the Data Plane API on the simulator over a real
 * HAProxy) the suite sends real traffic to the Gateways' addresses; on the Avi and F5 simulators
 * there is no data path, so only the tests that read status apply.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { createLogger, type Logger } from '../../src/runtime/logger.ts';
import { type GatewayApiChannel, installGatewayApiCrds } from '../../src/sandbox/gateway-api.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { runningStatus } from '../../src/main/demo-app.ts';
import { startNodeAgent } from '../../src/main/demo-nodes.ts';
import { startDataplaneSim } from '../../test/support/dataplane.ts';
import { startHaproxy } from '../../test/support/haproxy.ts';
import { aviAdapter } from '../../test/support/lb-fixtures.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { Api, type KubeObject, type ManifestNames, readManifests } from './objects.ts';
import { createSuiteCertificates } from './certs.ts';

export const ADAPTERS = [
  'haproxy-runtime',
  'haproxy-dataplane-v3',
  'haproxy-dataplane-v2',
  'avi',
  'f5',
] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export const CONTROLLER_NAME = 'npl-lb.io/gateway-controller';
export const GATEWAY_CLASS = 'npl-lb-conformance';
export const BASE_MANIFESTS = new URL('../manifests/base.yaml', import.meta.url);

/** Loopback /24s of a rig: its nodes, its Pods and its Gateways' VIPs. */
export interface RigNet {
  nodes: string;
  pods: string;
  vips: string;
}

/**
 * A rig's addresses: block `n` is 127.0.(80+3n).0/24 for the nodes and the two /24s after it for
 * the Pods and the VIPs. Each adapter has a block of its own (its place in ADAPTERS), so that rigs
 * of different adapters run side by side (the test suite runs the two HAProxy transports at once);
 * the blocks end at 127.0.103 (block 7).
 */
export function rigNet(block: number): RigNet {
  if (!Number.isInteger(block) || block < 0 || block > 7) throw new Error(`no address block ${block} (0-7)`);
  const at = (i: number) => `127.0.${80 + 3 * block + i}`;
  return { nodes: at(0), pods: at(1), vips: at(2) };
}

/**
 * How manifests are prepared: our class and controller, and the static addresses the suite gives
 * (one inside the rig's vip.cidrs that no Gateway is allocated, one outside).
 */
export function manifestNames(net: RigNet): ManifestNames {
  return {
    gatewayClassName: GATEWAY_CLASS,
    controllerName: CONTROLLER_NAME,
    usableAddresses: [`${net.vips}.250`],
    unusableAddresses: ['192.0.2.250'],
  };
}

/** Runs cleanups last-in first-out, every one even when some fail. */
export class Cleanups {
  private readonly fns: (() => Promise<void> | void)[] = [];
  after = (fn: () => Promise<void> | void): void => {
    this.fns.push(fn);
  };
  async run(): Promise<void> {
    let first: unknown;
    while (this.fns.length) {
      try {
        await this.fns.pop()!();
      } catch (err) {
        first ??= err;
      }
    }
    if (first !== undefined) throw first;
  }
}

export interface Rig {
  adapterName: AdapterName;
  /** Its loopback addresses, and the names its manifests are prepared with. */
  net: RigNet;
  manifestNames: ManifestNames;
  api: Api;
  /** Scales Deployments to 0 and waits for their Pods to go (a fault: every backend stopped). */
  stopBackends(namespace: string, deployments: string[]): Promise<void>;
  /** Whether traffic flows through the adapter (HAProxy), or only status can be checked. */
  traffic: boolean;
  /** The features our GatewayClass claims in status.supportedFeatures: the tests run are theirs. */
  features: string[];
  /** The Gateway API CRDs' channel the rig installed (experimental: HTTPRoute's, for retries). */
  channel: GatewayApiChannel;
  log: Logger;
  /**
   * The members the device does not serve (down, draining, in maintenance), one line: what a
   * failed test's reason adds, so that a 503 in a CI log says which pool had no live member.
   */
  deviceTrouble(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** The adapter on its device, and whether traffic flows through it here. */
async function startAdapter(
  name: AdapterName,
  c: Cleanups,
): Promise<{ adapter: LoadBalancerAdapter; traffic: boolean }> {
  switch (name) {
    case 'haproxy-runtime': {
      const rig = await startHaproxy(c);
      const adapter = rig.adapter('conformance', { healthChecks: true });
      c.after(() => adapter.close());
      return { adapter, traffic: true };
    }
    case 'haproxy-dataplane-v2':
    case 'haproxy-dataplane-v3': {
      const rig = await startDataplaneSim(c);
      const version = name === 'haproxy-dataplane-v2' ? 'v2' : 'v3';
      return { adapter: rig.adapter('conformance', version, { healthChecks: true }), traffic: true };
    }
    case 'avi': {
      // The Avi simulator holds objects to the bundled field model; it carries no traffic.
      const sim = new AviSimulator();
      const url = await sim.start();
      c.after(() => sim.close());
      const adapter = aviAdapter(url, { owner: 'conformance' });
      c.after(() => adapter.close());
      await adapter.verify();
      return { adapter, traffic: false };
    }
    case 'f5': {
      // The BIG-IP simulator holds declarations to the bundled AS3 schema; it carries no traffic.
      const sim = new BigIpSimulator();
      const url = await sim.start();
      c.after(() => sim.close());
      const adapter = new F5Adapter({ owner: 'conformance', url, username: 'admin', password: 'admin' });
      c.after(() => adapter.close());
      return { adapter, traffic: false };
    }
  }
}

/**
 * What the suite tests, read as upstream infers it: our GatewayClass's status.supportedFeatures,
 * once the class is accepted.
 */
async function claimedFeatures(api: Api): Promise<string[]> {
  const schema = z.object({
    status: z
      .object({
        conditions: z.array(z.object({ type: z.string(), status: z.string() }).loose()).default([]),
        supportedFeatures: z.array(z.object({ name: z.string() }).loose()).default([]),
      })
      .loose()
      .default({ conditions: [], supportedFeatures: [] }),
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const gc = schema.parse(
      (await api.get(`/apis/gateway.networking.k8s.io/v1/gatewayclasses/${GATEWAY_CLASS}`)) ?? {},
    );
    if (gc.status.conditions.some((c) => c.type === 'Accepted' && c.status === 'True'))
      return gc.status.supportedFeatures.map((f) => f.name);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`GatewayClass ${GATEWAY_CLASS} was not accepted within 30 s`);
}

/**
 * Creates every object of a manifest file; a Deployment's Pods (run by the sandbox's kubelet) are
 * waited for until they are available, as the upstream suite waits for its namespaces' Pods.
 */
export async function applyAll(api: Api, objects: KubeObject[]): Promise<void> {
  for (const o of objects) {
    await api.create(o);
    if (o.kind === 'Namespace') {
      // As the namespace controller reports it: the suite waits for Active namespaces.
      await api.patch(`/api/v1/namespaces/${o.metadata.name}/status`, { status: { phase: 'Active' } });
    }
  }
  for (const o of objects)
    if (o.kind === 'Deployment')
      await deploymentAvailable(api, o.metadata.namespace ?? 'default', o.metadata.name);
}

const deploymentStatus = z.object({
  spec: z.object({ replicas: z.number().optional() }).optional(),
  status: z.object({ availableReplicas: z.number().optional() }).optional(),
});

/** Until the Deployment's Pods are all available (30 s at most, then why). */
async function deploymentAvailable(api: Api, ns: string, name: string): Promise<void> {
  const until = Date.now() + 30_000;
  let seen = '';
  while (Date.now() < until) {
    const d = deploymentStatus.safeParse(await api.get(`/apis/apps/v1/namespaces/${ns}/deployments/${name}`));
    const want = d.success ? (d.data.spec?.replicas ?? 1) : 1;
    const have = d.success ? (d.data.status?.availableReplicas ?? 0) : 0;
    if (have >= want) return;
    seen = `${have}/${want} available`;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Deployment ${ns}/${name}: its Pods not available within 30 s (${seen})`);
}

/**
 * Three Ready nodes, each with a NodePortLocal agent forwarding in userspace and a Pod CIDR of
 * its own (a /26 of the rig's Pod /24) where the sandbox's kubelet gives its Pods addresses.
 */
async function startNodes(
  kc: KubeConfig,
  log: Logger,
  c: Cleanups,
  net: RigNet,
): Promise<{ name: string; ip: string }[]> {
  const nodes = [1, 2, 3].map((i) => ({ name: `node-${i}`, ip: `${net.nodes}.${i}` }));
  for (const [i, n] of nodes.entries()) {
    const agent = await startNodeAgent(kc, n.name, [n.ip], log, [`${net.pods}.${i * 64}/26`]);
    c.after(() => agent.stop());
  }
  return nodes;
}

/** `block`: the rig's addresses (rigNet); by default the adapter's own. */
export async function startRig(
  adapterName: AdapterName,
  opts: { logLevel?: string; block?: number } = {},
): Promise<Rig> {
  const net = rigNet(opts.block ?? ADAPTERS.indexOf(adapterName));
  const names = manifestNames(net);
  const c = new Cleanups();
  const log = createLogger({ name: 'conformance', level: opts.logLevel ?? 'warn' });
  try {
    const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, logger: log, workloads: true });
    c.after(() => sandbox.close());
    const kc = new KubeConfig();
    kc.loadFromString(renderKubeconfig({ server: sandbox.url }));
    const api = new Api(sandbox.url);
    const nodes = await startNodes(kc, log, c, net);

    const { adapter, traffic } = await startAdapter(adapterName, c);
    // The experimental channel's HTTPRoute where the load balancer retries by route (a rule's
    // `retry` is a field of that channel alone: the standard CRD prunes it).
    const channel: GatewayApiChannel = adapter.capabilities().http?.retry ? 'experimental' : 'standard';
    await installGatewayApiCrds(sandbox.url, {}, channel);
    // The controller's own Pod, where device-wide Events go.
    await api.request('POST', '/api/v1/namespaces', { metadata: { name: 'npl-lb-system' } });
    await api.request('POST', '/api/v1/namespaces/npl-lb-system/pods', {
      metadata: { name: 'npl-lb-controller' },
      spec: { nodeName: nodes[0]!.name, containers: [{ name: 'controller', image: 'npl-lb' }] },
    });
    await api.patch('/api/v1/namespaces/npl-lb-system/pods/npl-lb-controller/status', {
      status: runningStatus([nodes[0]!.ip], 'controller', nodes[0]!.ip),
    });
    const controller = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(`clusterName: conformance\nvip: {cidrs: [${net.vips}.0/24]}\n`),
      adapter,
      events: new EventRecorder(kc, 'npl-lb-controller', 'conformance', { logger: log }),
      logger: log,
      coalesceMs: 20,
    });
    await controller.start();
    c.after(() => controller.stop());

    await api.request('POST', '/apis/gateway.networking.k8s.io/v1/gatewayclasses', {
      metadata: { name: GATEWAY_CLASS },
      spec: { controllerName: CONTROLLER_NAME },
    });
    const features = await claimedFeatures(api);
    // As upstream's setup: the namespaces, then the suite's certificates (the TLS backends mount
    // them), then the rest of the base manifests.
    const base = readManifests(BASE_MANIFESTS, names);
    await applyAll(
      api,
      base.filter((o) => o.kind === 'Namespace'),
    );
    await createSuiteCertificates(api);
    await applyAll(
      api,
      base.filter((o) => o.kind !== 'Namespace'),
    );
    const stopBackends = async (namespace: string, deployments: string[]) => {
      for (const name of deployments)
        await api.patch(`/apis/apps/v1/namespaces/${namespace}/deployments/${name}/scale`, {
          spec: { replicas: 0 },
        });
      const until = Date.now() + 30_000;
      const left = async () => {
        const pods = z
          .object({ items: z.array(z.object({ metadata: z.object({ name: z.string() }) })) })
          .safeParse(await api.get(`/api/v1/namespaces/${namespace}/pods`));
        return (pods.success ? pods.data.items : []).filter((p) =>
          deployments.some((d) => p.metadata.name.startsWith(`${d}-`)),
        );
      };
      while ((await left()).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    };
    const deviceTrouble = async () => {
      const members = await adapter.health?.().catch((err: unknown) => (err as Error).message);
      if (typeof members === 'string') return `device health not read: ${members}`;
      const bad = (members ?? []).filter(
        (m) => m.admin !== 'enabled' || (m.health !== 'up' && m.health !== 'unchecked'),
      );
      return bad.length
        ? `members not served: ${bad.map((m) => `${m.pool} ${m.address}:${m.port} ${m.admin}/${m.health}${m.reason ? ` (${m.reason})` : ''}`).join('; ')}`
        : undefined;
    };
    return {
      adapterName,
      net,
      manifestNames: names,
      api,
      stopBackends,
      traffic,
      features,
      channel,
      log,
      deviceTrouble,
      close: () => c.run(),
    };
  } catch (err) {
    await c.run().catch(() => undefined);
    throw err;
  }
}
