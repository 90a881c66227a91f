/**
 * An HTTPRoute rule's `retry` (GEP-1731, the experimental channel's HTTPRoute) through the
 * validation boundary, as the load balancer can make it (Capabilities.http.retry). Pure.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { RouteRetry } from '../../model/types.ts';
import { Refused } from './route-filters.ts';

/**
 * A rule's `retry` (the experimental channel's HTTPRoute; GEP-1731) as the load balancer can do
 * it, or refused naming the field: a device that does not retry by route, a status it cannot
 * retry on, more attempts than it takes, a backoff it cannot wait, a whole request's timeout it
 * cannot hold the attempts to. Absent: undefined. `lb.retry` is absent where the load balancer
 * does not retry by route.
 */
export function ruleRetry(
  retry: unknown,
  timeouts: unknown,
  field: string,
  lb: { retry: HttpCapabilities['retry']; adapter: string },
): RouteRetry | undefined {
  if (retry === undefined) return undefined;
  const { retry: device, adapter } = lb;
  if (!device) throw new Refused(`${field}: the ${adapter} load balancer does not retry requests by route`);
  const r = (retry ?? {}) as Record<string, unknown>;
  const extra = Object.keys(r).find((k) => !['codes', 'attempts', 'backoff'].includes(k));
  if (extra) throw new Refused(`${field}.${extra.slice(0, 64)}: not supported by npl-lb yet`);
  const codes = r.codes ?? [];
  if (!Array.isArray(codes) || codes.length > 16)
    throw new Refused(`${field}.codes: a list of at most 16 statuses`);
  for (const [i, c] of codes.entries()) {
    if (!Number.isInteger(c) || (c as number) < 400 || (c as number) > 599)
      throw new Refused(`${field}.codes[${i}]: ${JSON.stringify(c).slice(0, 16)} is not a status of 400-599`);
    if (!device.statuses.includes(c as number))
      throw new Refused(
        `${field}.codes[${i}]: the ${adapter} load balancer retries on ${device.statuses.join(', ')} only, not ${String(c)}`,
      );
  }
  if (device.needsStatuses && codes.length === 0)
    throw new Refused(
      `${field}.codes: the ${adapter} load balancer retries a request on the statuses a rule names; name at least one`,
    );
  const attempts = r.attempts;
  if (attempts !== undefined && (!Number.isInteger(attempts) || (attempts as number) < 1))
    throw new Refused(
      `${field}.attempts: ${JSON.stringify(attempts).slice(0, 16)} is not a count of 1 or more`,
    );
  if (typeof attempts === 'number' && attempts > device.maxAttempts)
    throw new Refused(
      `${field}.attempts: the ${adapter} load balancer takes at most ${device.maxAttempts}, not ${attempts}`,
    );
  if (r.backoff !== undefined && !device.backoff)
    throw new Refused(
      `${field}.backoff: the ${adapter} load balancer sends a request again at once and cannot wait between attempts`,
    );
  const request = (timeouts as { request?: unknown } | undefined)?.request;
  if (request !== undefined && request !== '0s' && !device.requestTimeout)
    throw new Refused(
      `${field}: with timeouts.request, the ${adapter} load balancer cannot hold the attempts together to the request's timeout (it bounds each attempt: timeouts.backendRequest)`,
    );
  const statuses = [...new Set(codes as number[])].sort((a, b) => a - b);
  return { statuses, ...(attempts !== undefined ? { attempts: attempts as number } : {}) };
}
