/**
 * A pass as the cluster sees it, once its changes are applied: the state document, the status of
 * Services and Ingresses (source-status.ts), of the Gateway API objects (gateway-status.ts,
 * policy-status.ts), the configured GatewayClass (gateway-class.ts) and the pass's Events
 * (lb-events.ts). The reconciler hands each pass's outcome here and keeps no writer of its own.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ApplyResult, LoadBalancerAdapter } from '../adapter/contract.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import type { EventSink } from '../kube/events.ts';
import { RESOURCES } from '../kube/paths.ts';
import { once, resolveVip } from '../model/vips.ts';
import type { Pool } from '../model/types.ts';
import type { Change, ObservedByName, Plan } from '../plan/diff.ts';
import { silentLogger } from '../runtime/logger.ts';
import type { ClusterView, DesiredResult } from '../source/desired.ts';
import { GatewayClassKeeper, kubeGatewayClassCreate } from './gateway-class.ts';
import { GatewayStatusWriter, kubeStatusSink, type StatusSink } from './gateway-status.ts';
import { LbEvents } from './lb-events.ts';
import { PolicyStatusWriter } from './policy-status.ts';
import { SourceStatusWriter } from './source-status.ts';
import type { StateTracker } from './state.ts';
import { kubeStatusWriter, type StatusWriter } from './status-writer.ts';

/** What the reporter writes with (the reconciler's dependencies, LbReconcilerDeps, are these). */
export interface PassReportDeps {
  kubeConfig: KubeConfig;
  config: ControllerConfig;
  adapter: Pick<LoadBalancerAdapter, 'name' | 'allocatedVips'>;
  events: EventSink;
  state: StateTracker;
  /**
   * How long a Service may wait for NodePortLocal mappings, or a pool for a ready member, before
   * it is a Warning (default 30 s): a new Service's first seconds are normal.
   */
  waitGraceMs?: number;
  /** Where statuses go (the API server unless a test says otherwise). */
  statusWriter?: StatusWriter;
  /** Where Gateway API statuses go (the API server unless a test says otherwise). */
  gatewayStatusSink?: StatusSink;
  /** Keeps the configured GatewayClass; absent: made from kubeConfig and config. */
  gatewayClass?: GatewayClassKeeper;
}

/** One pass's outcome: what it applied, what it could not plan, what waits, and its device read. */
export interface PassOutcome {
  applied: ApplyResult[];
  conflicts: Plan['conflicts'];
  /** Objects whose changes are still to come (held by the gates, or failed). */
  pending: Set<string>;
  /** Pools without a ready member (lb-events.ts). */
  unready: Pool[];
  observed: ObservedByName;
}

export class PassReporter {
  private readonly status: SourceStatusWriter;
  private readonly gatewayStatus: GatewayStatusWriter;
  private readonly policyStatus: PolicyStatusWriter;
  private readonly tlsPolicyStatus: PolicyStatusWriter;
  private readonly gatewayClass: GatewayClassKeeper;
  private readonly events: LbEvents;

  constructor(private readonly d: PassReportDeps) {
    this.status = new SourceStatusWriter({
      writer: d.statusWriter ?? kubeStatusWriter(d.kubeConfig),
      state: d.state,
      clusterName: d.config.clusterName,
      ipMode: d.config.loadBalancerIPMode,
      ingressPorts: { http: d.config.ingressHttpPort, https: d.config.ingressHttpsPort },
      ...(d.adapter.allocatedVips ? { allocatedVips: () => d.adapter.allocatedVips!() } : {}),
    });
    const sink = d.gatewayStatusSink ?? kubeStatusSink(d.kubeConfig);
    this.gatewayStatus = new GatewayStatusWriter(sink, d.config.clusterName, d.config.gatewayController);
    this.policyStatus = new PolicyStatusWriter(sink, d.config.gatewayController);
    this.tlsPolicyStatus = new PolicyStatusWriter(
      sink,
      d.config.gatewayController,
      undefined,
      RESOURCES.backendTlsPolicies,
    );
    this.gatewayClass =
      d.gatewayClass ??
      new GatewayClassKeeper({
        name: d.config.gatewayClass,
        controllerName: d.config.gatewayController,
        create: kubeGatewayClassCreate(d.kubeConfig),
        log: silentLogger(),
      });
    this.events = new LbEvents({
      events: d.events,
      adapter: d.adapter.name,
      ingressHttpPort: d.config.ingressHttpPort,
      ingressHttpsPort: d.config.ingressHttpsPort,
      ...(d.waitGraceMs !== undefined ? { waitGraceMs: d.waitGraceMs } : {}),
      address: (vip) => resolveVip(vip, () => d.adapter.allocatedVips?.()),
    });
  }

  /**
   * Before the outcome is reported: the objects whose create failed are announced as being
   * ensured (lb-events.ts), so a create that went through gets EnsuredLoadBalancer alone.
   */
  ensuring(view: ClusterView, failed: Change[]): Promise<void> {
    return this.events.ensuring(view, failed);
  }

  /** The pass as the cluster sees it: the state document, statuses, Events. */
  async report(view: ClusterView, desired: DesiredResult, o: PassOutcome): Promise<void> {
    const cleared = this.d.state.record(desired.state, o.applied, o.conflicts, o.pending);
    const unprogrammed = notOnDevice(o.pending, o.observed, o.applied);
    await this.status.write(view, desired, unprogrammed);
    const allocated = once(() => this.d.adapter.allocatedVips?.());
    await this.gatewayStatus.write(
      view,
      desired.gateways,
      (vs) => this.d.state.failed('virtualService', vs) || unprogrammed.has(vs),
      (vip) => resolveVip(vip, allocated),
    );
    await this.policyStatus.write(view.backendPolicies, desired.policies);
    await this.tlsPolicyStatus.write(view.backendTlsPolicies, desired.gateways?.tlsPolicies);
    await this.gatewayClass.keep(view.gatewayApiInstalled === true, view.gatewayClasses ?? []);
    await this.events.pass(view, desired, o.applied, cleared, (st) => this.status.live(st), o.unready);
  }
}

/**
 * Desired virtual services the device does not hold yet: still pending (a desired object that is
 * not pending matches the device) and neither in the pass's read of the device (kept up to date by
 * the passes' results) nor created by this pass. A create held by the pass's gates is one: no
 * status may give out its address yet. As small as what is pending, never a walk of every object.
 */
export function notOnDevice(
  pending: ReadonlySet<string>,
  observed: ObservedByName,
  applied: readonly ApplyResult[],
): Set<string> {
  const created = new Set(
    applied
      .filter((r) => r.ok && r.change.kind === 'virtualService' && r.change.op !== 'delete')
      .map((r) => r.change.name),
  );
  const out = new Set<string>();
  for (const key of pending) {
    if (!key.startsWith('virtualService/')) continue;
    const name = key.slice('virtualService/'.length);
    if (!observed.virtualServices.has(name) && !created.has(name)) out.add(name);
  }
  return out;
}
