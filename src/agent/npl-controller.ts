/**
 * The NodePortLocal agent's controller: watches Services (all namespaces), the Pods of its node and
 * its Node; for each Pod keeps the node ports, forwarding rules and the `nodeportlocal.antrea.io`
 * annotation in step with the Services that select it. Level-triggered: handlers only enqueue Pod
 * keys; a reconcile re-reads the caches.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { type IpFamily, NPL_POD_ANNOTATION, type NplEntry, parseNplAnnotation } from '../kube/annotations.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink } from '../kube/events.ts';
import { apiServerSource, Informer, type ListWatchSource, objectKey } from '../kube/informer.ts';
import {
  type Node,
  nodeSchema,
  type Pod,
  parseOr,
  podSchema,
  type Service,
  serviceSchema,
} from '../kube/objects.ts';
import { RESOURCES } from '../kube/paths.ts';
import type { RawObject } from '../kube/raw-client.ts';
import { ErrorCodes, errorMessage, NplError } from '../runtime/errors.ts';
import { type Logger, silentLogger } from '../runtime/logger.ts';
import { WorkQueue } from '../runtime/work-queue.ts';
import { AnnotationPublisher } from './annotation-publisher.ts';
import type { AgentMetrics } from './metrics.ts';
import { type PortReserver, socketReserver, wildcardFor } from './port-reservation.ts';
import { type Mapping, type PortRange, PortTable } from './port-table.ts';
import type { ForwardingBackend } from './rules/types.ts';
import { desiredTargets, type NodeIpPreference, nodeIPs, type Target, targetKey } from './selection.ts';

export interface AgentOptions {
  kubeConfig: KubeConfig;
  nodeName: string;
  portRange: PortRange;
  backend: ForwardingBackend;
  metrics: AgentMetrics;
  events: EventSink;
  nodeIpPreference?: NodeIpPreference;
  reserver?: PortReserver;
  logger?: Logger;
  /** Full rule resync (repairs hand-deleted and stray rules); 0 turns it off. */
  resyncIntervalMs?: number;
  /** List/watch sources; the API server by default. */
  sources?: { pods: ListWatchSource; services: ListWatchSource; node: ListWatchSource };
  workers?: number;
}

export interface RestoreReport {
  restored: number;
  discarded: { podKey: string; nodePort: number; reason: string }[];
}

export class NplAgent {
  readonly table: PortTable;
  private readonly pods: Informer;
  private readonly services: Informer;
  private readonly node: Informer;
  private readonly queue: WorkQueue;
  private readonly publisher: AnnotationPublisher;
  private readonly log: Logger;
  private resyncTimer: NodeJS.Timeout | undefined;
  private ready = false;
  private lastNodeIps = '';
  restoreReport: RestoreReport = { restored: 0, discarded: [] };

  constructor(private readonly opts: AgentOptions) {
    this.log = (opts.logger ?? silentLogger()).child({ component: 'npl-agent', node: opts.nodeName });
    const backend = opts.backend;
    this.table = new PortTable(opts.portRange, opts.reserver ?? socketReserver, (family) =>
      backend.bindsWildcard ? wildcardFor(family) : this.nodeIps()[family],
    );
    opts.metrics.watch(this.table);
    const kc = opts.kubeConfig;
    const src = opts.sources ?? {
      pods: apiServerSource({
        kubeConfig: kc,
        resource: RESOURCES.pods,
        fieldSelector: `spec.nodeName=${opts.nodeName}`,
      }),
      services: apiServerSource({ kubeConfig: kc, resource: RESOURCES.services }),
      node: apiServerSource({
        kubeConfig: kc,
        resource: RESOURCES.nodes,
        fieldSelector: `metadata.name=${opts.nodeName}`,
      }),
    };
    this.pods = new Informer({ name: 'pods', source: src.pods, logger: this.log });
    this.services = new Informer({ name: 'services', source: src.services, logger: this.log });
    this.node = new Informer({ name: 'node', source: src.node, logger: this.log });
    this.publisher = new AnnotationPublisher({
      kubeConfig: kc,
      metrics: opts.metrics,
      log: this.log,
      retry: (key) => this.queue.add(key),
    });
    this.queue = new WorkQueue({
      name: 'npl-pods',
      reconcile: (key) => this.reconcile(key),
      concurrency: opts.workers ?? 16,
      logger: this.log,
      onError: () => opts.metrics.reconcileErrors.inc(),
    });
  }

  get isReady(): boolean {
    return this.ready;
  }

  private nodeObject(): Node | undefined {
    const raw = this.node.list()[0];
    return raw ? parseOr(nodeSchema, raw) : undefined;
  }

  nodeIps(): Partial<Record<IpFamily, string>> {
    return nodeIPs(this.nodeObject(), this.opts.nodeIpPreference ?? 'ExternalIP');
  }

  private serviceList(): Service[] {
    const out: Service[] = [];
    for (const raw of this.services.list()) {
      const s = parseOr(serviceSchema, raw);
      if (s) out.push(s);
    }
    return out;
  }

  private podsInNamespace(namespace: string): string[] {
    return this.pods
      .list()
      .filter((p) => ((p.metadata as { namespace?: string }).namespace ?? '') === namespace)
      .map(objectKey);
  }

  private enqueueAll(): void {
    for (const p of this.pods.list()) this.queue.add(objectKey(p));
    for (const k of this.table.pods()) this.queue.add(k);
  }

  async start(): Promise<void> {
    await this.opts.backend.start();
    const onPod = (o: RawObject) => this.queue.add(objectKey(o));
    this.pods.on({ add: onPod, update: (_, n) => onPod(n), delete: onPod });
    const onService = (o: RawObject) => {
      for (const k of this.podsInNamespace(String((o.metadata as { namespace?: string }).namespace ?? '')))
        this.queue.add(k);
    };
    this.services.on({ add: onService, update: (o, n) => (onService(o), onService(n)), delete: onService });
    const onNode = () => {
      const ips = JSON.stringify(this.nodeIps());
      if (ips !== this.lastNodeIps) {
        this.lastNodeIps = ips;
        this.enqueueAll();
      }
    };
    this.node.on({ add: onNode, update: onNode, delete: onNode });
    for (const inf of [this.pods, this.services, this.node]) inf.start();
    await Promise.all([this.pods.waitForSync(), this.services.waitForSync(), this.node.waitForSync()]);
    this.lastNodeIps = JSON.stringify(this.nodeIps());
    this.restoreReport = await this.restore();
    await this.opts.metrics.timeRules('sync', () => this.opts.backend.sync(this.table.all()));
    this.log.info(
      { restored: this.restoreReport.restored, discarded: this.restoreReport.discarded.length },
      'port table restored from Pod annotations; rules programmed',
    );
    this.enqueueAll();
    this.queue.start();
    const every = this.opts.resyncIntervalMs ?? 60_000;
    if (every > 0) {
      this.resyncTimer = setInterval(() => void this.resync(), every);
      this.resyncTimer.unref();
    }
    this.ready = true;
  }

  /** Rewrites every rule in one batch: hand-deleted rules come back, stray ones go. */
  async resync(): Promise<void> {
    try {
      await this.opts.metrics.timeRules('sync', () => this.opts.backend.sync(this.table.all()));
    } catch (err) {
      this.log.error({ code: ErrorCodes.RULES_FAILED, err: errorMessage(err) }, 'rule resync failed');
    }
  }

  /** Waits until every queued Pod has been reconciled (tests, benchmarks). */
  async settled(): Promise<void> {
    do {
      await this.queue.idle();
      await this.publisher.idle();
    } while (this.queue.length > 0);
  }

  /** Stops watching and releases the port sockets; rules stay, so traffic keeps flowing across a restart. */
  async stop(): Promise<void> {
    this.ready = false;
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    await this.queue.stop();
    await this.publisher.idle();
    await Promise.all([this.pods.stop(), this.services.stop(), this.node.stop()]);
    await this.opts.backend.stop();
    await this.table.releaseAll();
  }

  private parsePod(key: string): Pod | undefined {
    const raw = this.pods.get(key);
    return raw ? parseOr(podSchema, raw) : undefined;
  }

  /** Rebuilds the port table from the annotations Pods already carry, keeping their node ports. */
  private async restore(): Promise<RestoreReport> {
    const report: RestoreReport = { restored: 0, discarded: [] };
    const services = this.serviceList();
    const ips = this.nodeIps();
    // Two Pods claiming one port: the older one keeps it (then namespace/name order).
    const pods = this.pods
      .list()
      .map((raw) => parseOr(podSchema, raw))
      .filter((p): p is Pod => p !== undefined)
      .sort((a, b) => {
        const ta = String(a.metadata.creationTimestamp ?? '');
        const tb = String(b.metadata.creationTimestamp ?? '');
        if (ta !== tb) return ta < tb ? -1 : 1;
        const ka = `${a.metadata.namespace}/${a.metadata.name}`;
        const kb = `${b.metadata.namespace}/${b.metadata.name}`;
        return ka < kb ? -1 : ka > kb ? 1 : 0;
      });
    for (const pod of pods) {
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      const parsed = parseNplAnnotation(pod.metadata.annotations[NPL_POD_ANNOTATION]);
      if (!parsed.ok) {
        report.discarded.push({ podKey: key, nodePort: 0, reason: `invalid annotation: ${parsed.error}` });
        continue;
      }
      for (const inv of parsed.invalid) {
        report.discarded.push({ podKey: key, nodePort: 0, reason: `invalid annotation: ${inv}` });
      }
      const wanted = new Map(desiredTargets(pod, services, ips).map((t) => [targetKey(t), t]));
      for (const e of parsed.entries) {
        const t = wanted.get(targetKey({ podPort: e.podPort, protocol: e.protocol, family: e.ipFamily }));
        const discard = (reason: string) =>
          report.discarded.push({ podKey: key, nodePort: e.nodePort, reason });
        if (!t) discard('no longer selected');
        else if (t.hostPort) continue;
        else if (!this.table.inRange(e.nodePort)) discard('out of range');
        else if (await this.table.claim(key, t, e.nodePort)) {
          report.restored++;
          wanted.delete(targetKey(t));
        } else discard('taken or not bindable');
      }
    }
    for (const d of report.discarded) this.log.info(d, 'discarded a mapping from an existing annotation');
    return report;
  }

  /**
   * Brings the Pod's port mappings in step with its targets. Rule changes are asked of the backend
   * in order but not awaited here: `rules` collects them, so the rules of many Pods go to the
   * backend together (iptables applies them as one restore) and the worker moves on.
   */
  private async applyTargets(key: string, desired: Target[], rules: Promise<void>[]): Promise<Target[]> {
    const backend = this.opts.backend;
    const metrics = this.opts.metrics;
    const ips = this.nodeIps();
    let chain = Promise.resolve();
    const rule = (kind: 'add' | 'remove', m: Mapping) => {
      const k = ruleKey(m);
      if (kind === 'remove') this.unprogrammed.delete(k);
      chain = chain
        .then(() => metrics.timeRules('change', () => backend[kind](m)))
        .then(
          () => void (kind === 'add' && this.unprogrammed.delete(k)),
          (err: unknown) => {
            // Not in the backend: the next reconcile adds it again before publishing.
            if (kind === 'add') this.unprogrammed.add(k);
            throw err;
          },
        );
      rules.push(chain);
    };
    const want = new Map(desired.map((t) => [targetKey(t), t]));
    for (const m of this.table.forPod(key)) {
      const t = want.get(targetKey(m));
      const kindChanged =
        !t || !!t.hostPort !== m.hostPort || (t.hostPort !== undefined && t.hostPort !== m.nodePort);
      const moved =
        !backend.bindsWildcard && m.reservation !== undefined && m.reservation.address !== ips[m.family];
      if (kindChanged || moved) {
        rule('remove', m);
        // The port is reused only behind this removal: the backend applies changes in order.
        await this.table.release(m);
        // A node IP change under a node-IP-bound backend: take the same port on the new address.
        if (!kindChanged && moved && t) {
          const again = await this.table.claim(key, t, m.nodePort);
          if (again) rule('add', again);
        }
      }
    }
    const current = new Map(this.table.forPod(key).map((m) => [targetKey(m), m]));
    const missing: Target[] = [];
    for (const t of desired) {
      const cur = current.get(targetKey(t));
      if (t.hostPort) {
        if (!cur) this.table.addHostPort(key, t);
        continue;
      }
      if (cur) {
        if (cur.podIP !== t.podIP) {
          rule('remove', cur);
          rule('add', this.table.repoint(cur, t.podIP));
        } else if (this.unprogrammed.has(ruleKey(cur))) rule('add', cur);
        continue;
      }
      const m = await this.table.allocate(key, t);
      if (!m) {
        missing.push(t);
        metrics.portExhaustion.inc({ protocol: t.protocol, family: t.family });
        continue;
      }
      rule('add', m);
    }
    return missing;
  }

  private entries(key: string): NplEntry[] {
    const ips = this.nodeIps();
    const out: NplEntry[] = [];
    for (const m of this.table.forPod(key)) {
      const nodeIP = ips[m.family];
      if (!nodeIP) continue;
      out.push({
        podPort: m.podPort,
        nodeIP,
        nodePort: m.nodePort,
        protocol: m.protocol,
        ipFamily: m.family,
      });
    }
    return out;
  }

  /** Mappings whose rule the backend failed to add (by ruleKey): added again at the next reconcile. */
  private readonly unprogrammed = new Set<string>();
  async reconcile(key: string): Promise<void> {
    await this.publisher.pending(key);
    const pod = this.parsePod(key);
    const desired = pod ? desiredTargets(pod, this.serviceList(), this.nodeIps()) : [];
    const rules: Promise<void>[] = [];
    const missing = await this.applyTargets(key, desired, rules);
    const publish = async () => {
      await Promise.all(rules);
      // Only once the rules are in: the annotation is what sends traffic to the node port.
      const current = this.parsePod(key);
      if (current) await this.publisher.write(current, this.entries(key));
    };
    if (pod) {
      const have = parseNplAnnotation(pod.metadata.annotations[NPL_POD_ANNOTATION]);
      const problem = !have.ok ? have.error : have.invalid[0];
      if (problem !== undefined) {
        await this.opts.events.record(
          podRef(pod),
          'Warning',
          EventReasons.InvalidNodePortLocalAnnotation,
          `the ${NPL_POD_ANNOTATION} annotation is not valid (${problem}); npl-lb rewrites it`,
        );
      }
    }
    await this.publisher.run(key, pod !== undefined || rules.length > 0, publish);
    if (pod && missing.length > 0) {
      const what = missing.map((t) => `${t.podPort}/${t.protocol}/${t.family}`).join(', ');
      await this.opts.events.record(
        podRef(pod),
        'Warning',
        EventReasons.NodePortLocalPortsExhausted,
        `no free node port in ${this.table.range.start}-${this.table.range.end} for ${what}; retrying`,
      );
      throw new NplError(ErrorCodes.PORTS_EXHAUSTED, `no free node port for ${key}: ${what}`);
    }
  }
}

const ruleKey = (m: Mapping): string => `${m.podKey}|${m.family}|${m.protocol}|${m.nodePort}|${m.podIP}`;

function podRef(pod: Pod) {
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid,
  };
}

export type { Mapping };
