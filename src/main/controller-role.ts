/**
 * One controller replica, composed: the controller, its HTTP endpoint and, with leader election,
 * the elector that starts the controller only on the leader. Readiness is health, not leadership
 * (controller-runtime's rule): a standby whose election loop runs is Ready, so a rollout of several
 * replicas completes; the leader is Ready once its caches have synced.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { NplController } from '../controller/controller.ts';
import type { EventSink, EventTarget } from '../kube/events.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { LeaderElector, type LeaderElectionOptions } from '../runtime/leader-election.ts';
import type { Logger } from '../runtime/logger.ts';
import { serveController } from './controller-http.ts';

export interface ControllerRoleOptions {
  kubeConfig: KubeConfig;
  config: ControllerConfig;
  adapter: LoadBalancerAdapter;
  events: EventSink;
  logger: Logger;
  httpAddress: { host: string; port: number };
  /** Leader election on a Lease; undefined: this replica always writes. */
  election?: Pick<
    LeaderElectionOptions,
    'namespace' | 'name' | 'identity' | 'leaseDurationMs' | 'renewDeadlineMs' | 'retryPeriodMs'
  >;
  /** The controller's own Pod (device-wide Events go there). */
  self?: EventTarget | undefined;
  /** Passed to the controller (tests use short ones). */
  coalesceMs?: number;
  sweepIntervalMs?: number;
}

export interface ControllerRole {
  controller: NplController;
  /** The HTTP endpoint (/metrics, /healthz, /readyz, /api/v1/state, /). */
  url: string;
  ready(): boolean;
  /** Settles when this replica lost its Lease (it must exit so a standby leads). */
  lost: Promise<Error>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startControllerRole(o: ControllerRoleOptions): Promise<ControllerRole> {
  const controller = new NplController({
    kubeConfig: o.kubeConfig,
    config: o.config,
    adapter: o.adapter,
    events: o.events,
    logger: o.logger,
    self: o.self,
    ...(o.coalesceMs !== undefined ? { coalesceMs: o.coalesceMs } : {}),
    ...(o.sweepIntervalMs !== undefined ? { sweepIntervalMs: o.sweepIntervalMs } : {}),
  });
  let lost!: (err: Error) => void;
  const lostLease = new Promise<Error>((resolve) => {
    lost = resolve;
  });
  const e = o.election;
  const elector = e
    ? new LeaderElector({
        ...e,
        kubeConfig: o.kubeConfig,
        logger: o.logger,
        // Only the leader runs the controller, so only the leader writes.
        onStartedLeading: () => controller.start(),
        onStoppedLeading: () =>
          lost(
            new NplError(
              ErrorCodes.LEADERSHIP_LOST,
              'lost the leader Lease; exiting so that a standby leads',
            ),
          ),
      })
    : undefined;
  if (elector) {
    controller.state.setLeadership(() => elector.status);
    controller.metrics.leadership(() => elector.isLeader);
  }
  const ready = (): boolean => {
    if (!elector) return controller.isReady;
    return elector.isLeader ? controller.isReady : elector.isRunning;
  };
  const status = await serveController(controller, o.httpAddress, ready);
  return {
    controller,
    url: status.url,
    ready,
    lost: lostLease,
    start: async () => {
      if (elector) elector.start();
      else await controller.start();
    },
    stop: async () => {
      // The controller drains first; then the Lease is released so a standby takes over at once.
      await controller.stop();
      await elector?.stop();
      await o.adapter.close();
      await status.close();
    },
  };
}
