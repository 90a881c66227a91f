/**
 * `deleteConfig` (the name the vendors' controllers give it): remove every object we own on the load balancer, children
 * after their parents as the plan orders them, and nothing anyone else owns. Repeats until the
 * device shows nothing of ours (a retryable failure is tried again), within a bounded number of
 * rounds.
 */
import {
  ApiException,
  AppsV1Api,
  type KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import { guardOwnership } from '../adapter/ownership.ts';
import { plan } from '../plan/diff.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';

export interface DeleteConfigResult {
  deleted: number;
  rounds: number;
}

export async function deleteOwnedConfig(
  adapter: LoadBalancerAdapter,
  log: Logger,
  opts: { rounds?: number; pauseMs?: number } = {},
): Promise<DeleteConfigResult> {
  const rounds = opts.rounds ?? 10;
  let deleted = 0;
  let lastError = '';
  const guarded = guardOwnership(adapter);
  for (let round = 1; round <= rounds; round++) {
    const observed = await guarded.observe();
    const p = plan({ pools: [], virtualServices: [] }, observed);
    if (p.changes.length === 0) {
      log.info({ deleted, rounds: round }, 'deleteConfig: nothing of ours is left on the load balancer');
      return { deleted, rounds: round };
    }
    log.info(
      {
        pools: observed.owned.pools.length,
        virtualServices: observed.owned.virtualServices.length,
        certificates: observed.owned.certificates?.length ?? 0,
        round,
      },
      'deleteConfig: removing what we own',
    );
    const results = await guarded.apply(p.changes);
    deleted += results.filter((r) => r.ok).length;
    const failed = results.filter((r) => !r.ok);
    lastError = failed.map((r) => `${r.change.kind} ${r.change.name}: ${r.error?.message ?? ''}`).join('; ');
    if (failed.length > 0) await new Promise((r) => setTimeout(r, opts.pauseMs ?? 1000));
  }
  throw new NplError(
    ErrorCodes.DELETE_CONFIG_FAILED,
    `objects of ours are still on the load balancer after ${rounds} rounds: ${lastError.slice(0, 500)}`,
  );
}

/**
 * Scales a Deployment (the controller's own) to 0 and waits until none of its Pods runs, so that
 * no replica writes to the load balancer while deleteConfig removes what we own.
 */
export async function scaleDownAndWait(
  kc: KubeConfig,
  ref: string,
  log: Logger,
  opts: { timeoutMs?: number; pollMs?: number } = {},
): Promise<void> {
  const [namespace, name] = ref.split('/') as [string, string];
  const apps = kc.makeApiClient(AppsV1Api);
  try {
    await apps.patchNamespacedDeployment(
      { name, namespace, body: { spec: { replicas: 0 } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return;
    throw err;
  }
  log.info({ deployment: ref }, 'deleteConfig: scaled the controller to 0; waiting for its replicas to stop');
  const until = Date.now() + (opts.timeoutMs ?? 120_000);
  for (;;) {
    const d = await apps.readNamespacedDeployment({ name, namespace }).catch(() => undefined);
    if (!d || (d.status?.replicas ?? 0) === 0) return;
    if (Date.now() > until) {
      throw new NplError(
        ErrorCodes.DELETE_CONFIG_FAILED,
        `${ref} still has ${d.status?.replicas} replica(s) running; not removing objects under a running controller`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
}
