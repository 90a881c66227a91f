/**
 * Test helper: objects in the sandbox as a kubelet and a user would make them (Nodes with
 * addresses, Pods with IPs written through pods/status), and NPL agents running in-process.
 */
import type { TestContext } from 'node:test';
import {
  CoreV1Api,
  type KubeConfig,
  NetworkingV1Api,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { AgentMetrics } from '../../src/agent/metrics.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NplAgent } from '../../src/agent/npl-controller.ts';
import type { PortRange } from '../../src/agent/port-table.ts';
import { MemoryBackend } from '../../src/agent/rules/memory.ts';
import type { ForwardingBackend } from '../../src/agent/rules/types.ts';
import {
  NPL_ENABLED_ANNOTATION,
  NPL_POD_ANNOTATION,
  type NplEntry,
  parseNplAnnotation,
} from '../../src/kube/annotations.ts';
import { type EventSink, type EventTarget, EventRecorder } from '../../src/kube/events.ts';
import { ingressBody, type IngressOptions } from './kube-objects.ts';

export interface NodeAddresses {
  internal?: string[];
  external?: string[];
}

export class Cluster {
  readonly core: CoreV1Api;
  constructor(readonly kc: KubeConfig) {
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /** An IngressClass of ours (npl-lb.io/ingress-controller). */
  async ingressClass(name = 'npl'): Promise<void> {
    await this.kc.makeApiClient(NetworkingV1Api).createIngressClass({
      body: { metadata: { name }, spec: { controller: 'npl-lb.io/ingress-controller' } },
    });
  }

  /** An Ingress of one class (ours, `npl`, unless named) routing `host` / to a Service port. */
  async ingress(name: string, o: Omit<IngressOptions, 'className'> & { className?: string }): Promise<void> {
    const body = ingressBody(name, { ...o, className: o.className ?? 'npl' });
    await this.kc
      .makeApiClient(NetworkingV1Api)
      .createNamespacedIngress({ namespace: body.metadata.namespace, body });
  }

  async node(name: string, addrs: NodeAddresses): Promise<void> {
    const addresses = [
      ...(addrs.internal ?? []).map((address) => ({ type: 'InternalIP', address })),
      ...(addrs.external ?? []).map((address) => ({ type: 'ExternalIP', address })),
    ];
    await this.core.createNode({ body: { metadata: { name }, status: { addresses } } });
  }

  /**
   * Makes sure Node `name` exists and has `ip` among its InternalIPs: a NodePortLocal entry counts
   * only when its nodeIP is an address of the Pod's Node.
   */
  async ensureNode(name: string, ip: string): Promise<void> {
    const have = await this.core.readNode({ name }).catch(() => undefined);
    if (!have) return this.node(name, { internal: [ip] });
    const addrs = have.status?.addresses ?? [];
    if (addrs.some((a) => a.address === ip)) return;
    const internal = [...addrs.filter((a) => a.type === 'InternalIP').map((a) => a.address), ip];
    const external = addrs.filter((a) => a.type === 'ExternalIP').map((a) => a.address);
    await this.setNodeAddresses(name, { internal, external });
  }

  async setNodeAddresses(name: string, addrs: NodeAddresses): Promise<void> {
    const addresses = [
      ...(addrs.internal ?? []).map((address) => ({ type: 'InternalIP', address })),
      ...(addrs.external ?? []).map((address) => ({ type: 'ExternalIP', address })),
    ];
    await this.core.patchNodeStatus(
      { name, body: { status: { addresses } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async service(
    name: string,
    opts: {
      selector?: Record<string, string>;
      ports: { name?: string; port: number; targetPort?: number | string; protocol?: string }[];
      type?: string;
      enabled?: string | null;
      namespace?: string;
      /** More of the spec (loadBalancerSourceRanges, ipFamilies, ...). */
      spec?: Record<string, unknown>;
    },
  ): Promise<void> {
    const annotations: Record<string, string> = {};
    if (opts.enabled !== null) annotations[NPL_ENABLED_ANNOTATION] = opts.enabled ?? 'true';
    await this.core.createNamespacedService({
      namespace: opts.namespace ?? 'default',
      body: {
        metadata: { name, annotations },
        spec: {
          type: opts.type ?? 'ClusterIP',
          selector: opts.selector ?? { app: name },
          ports: opts.ports,
          ...opts.spec,
        },
      },
    });
  }

  async patchService(name: string, body: object, namespace = 'default'): Promise<void> {
    await this.core.patchNamespacedService(
      { name, namespace, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async pod(
    name: string,
    opts: {
      node: string;
      labels?: Record<string, string>;
      ips?: string[];
      ports?: { name?: string; containerPort: number; protocol?: string; hostPort?: number }[];
      annotations?: Record<string, string>;
      namespace?: string;
      phase?: string;
      /** The container's readinessProbe, as a Pod spec has it. */
      readinessProbe?: object;
    },
  ): Promise<void> {
    const namespace = opts.namespace ?? 'default';
    await this.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, labels: opts.labels ?? { app: 'web' }, annotations: opts.annotations ?? {} },
        spec: {
          nodeName: opts.node,
          containers: [
            {
              name: 'c',
              image: 'x',
              ports: opts.ports ?? [],
              ...(opts.readinessProbe ? { readinessProbe: opts.readinessProbe as never } : {}),
            },
          ],
        },
      },
    });
    if (opts.ips !== undefined) await this.setPodIPs(name, opts.ips, namespace, opts.phase ?? 'Running');
  }

  async setPodIPs(name: string, ips: string[], namespace = 'default', phase = 'Running'): Promise<void> {
    await this.patchPodStatus(
      name,
      { status: { phase, podIP: ips[0] ?? null, podIPs: ips.map((ip) => ({ ip })) } },
      namespace,
    );
  }

  /**
   * A Running Pod with container port `http` 8080 on `node`, Ready unless told, carrying the
   * NodePortLocal annotation an agent would write (`entries`, or a raw text).
   */
  async nplPod(
    name: string,
    opts: {
      node: string;
      entries:
        | { podPort?: number; nodeIP: string; nodePort: number; protocol?: string; ipFamily?: string }[]
        | string;
      labels?: Record<string, string>;
      ready?: boolean;
    },
  ): Promise<void> {
    await this.pod(name, {
      node: opts.node,
      labels: opts.labels ?? { app: 'web' },
      ports: [{ name: 'http', containerPort: 8080 }],
    });
    const text =
      typeof opts.entries === 'string'
        ? opts.entries
        : JSON.stringify(
            opts.entries.map((e) => ({ podPort: 8080, protocol: 'tcp', ipFamily: 'IPv4', ...e })),
          );
    await this.patchPodStatus(name, {
      metadata: { annotations: { [NPL_POD_ANNOTATION]: text } },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
      },
    });
  }

  async patchPodStatus(name: string, body: object, namespace = 'default'): Promise<void> {
    await this.core.patchNamespacedPodStatus(
      { name, namespace, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async patchPod(name: string, body: object, namespace = 'default'): Promise<void> {
    await this.core.patchNamespacedPod(
      { name, namespace, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async annotationText(name: string, namespace = 'default'): Promise<string | undefined> {
    const p = await this.core.readNamespacedPod({ name, namespace });
    return p.metadata?.annotations?.[NPL_POD_ANNOTATION];
  }

  async entries(name: string, namespace = 'default'): Promise<NplEntry[]> {
    const parsed = parseNplAnnotation(await this.annotationText(name, namespace));
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.entries;
  }

  async events(
    name: string,
    namespace = 'default',
  ): Promise<{ reason: string; type: string; message: string }[]> {
    const list = await this.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items.map((e) => ({ reason: e.reason ?? '', type: e.type ?? '', message: e.message ?? '' }));
  }
}

/** Records events in memory as well as in the cluster. */
export class RecordingEvents implements EventSink {
  readonly seen: { target: string; type: string; reason: string; message: string }[] = [];
  constructor(private readonly inner?: EventSink) {}
  async record(
    target: EventTarget,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    this.seen.push({ target: `${target.namespace}/${target.name}`, type, reason, message });
    await this.inner?.record(target, type, reason, message);
  }
}

export interface RunningAgent {
  agent: NplAgent;
  backend: ForwardingBackend;
  events: RecordingEvents;
  metrics: AgentMetrics;
  stop(): Promise<void>;
}

export async function startAgent(
  t: Pick<TestContext, 'after'>,
  kc: KubeConfig,
  opts: {
    nodeName: string;
    range?: PortRange;
    backend?: ForwardingBackend;
    resyncIntervalMs?: number;
    preference?: 'ExternalIP' | 'InternalIP';
  },
): Promise<RunningAgent> {
  const backend = opts.backend ?? new MemoryBackend();
  const events = new RecordingEvents(new EventRecorder(kc, 'npl-lb-agent', opts.nodeName, { dedupeMs: 0 }));
  const metrics = new AgentMetrics();
  const agent = new NplAgent({
    kubeConfig: kc,
    nodeName: opts.nodeName,
    portRange: opts.range ?? { start: 61000, end: 61999 },
    backend,
    metrics,
    events,
    resyncIntervalMs: opts.resyncIntervalMs ?? 0,
    ...(opts.preference ? { nodeIpPreference: opts.preference } : {}),
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await agent.stop();
  };
  t.after(stop);
  await agent.start();
  return { agent, backend, events, metrics, stop };
}

/**
 * A controller on the sandbox for an end-to-end test, as most of them run it: the given config
 * (YAML), adapter and Events, quick coalescing, no member sweep; started, and stopped when the test
 * ends.
 */
export async function runController(
  t: Pick<TestContext, 'after'>,
  kc: KubeConfig,
  adapter: LoadBalancerAdapter,
  configYaml: string,
  events: RecordingEvents = new RecordingEvents(),
): Promise<NplController> {
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(configYaml),
    adapter,
    events,
    coalesceMs: 20,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  return ctl;
}
