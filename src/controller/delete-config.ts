/**
 * `deleteConfig` (AKO's name for it): remove every object we own on the load balancer, children
 * after their parents as the plan orders them, and nothing anyone else owns. Repeats until the
 * device shows nothing of ours (a retryable failure is tried again), within a bounded number of
 * rounds.
 */
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
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
  for (let round = 1; round <= rounds; round++) {
    const observed = await adapter.observe();
    const p = plan({ pools: [], virtualServices: [] }, observed);
    if (p.changes.length === 0) {
      log.info({ deleted, rounds: round }, 'deleteConfig: nothing of ours is left on the load balancer');
      return { deleted, rounds: round };
    }
    log.info(
      { pools: observed.owned.pools.length, virtualServices: observed.owned.virtualServices.length, round },
      'deleteConfig: removing what we own',
    );
    const results = await adapter.apply(p.changes);
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
