/**
 * An HTTPRoute rule's `sessionPersistence` (GEP-1619, the experimental channel's HTTPRoute) through
 * the validation boundary, as the load balancer can keep it (Capabilities.http.sessionCookie).
 * Pure.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { SessionCookie } from '../../model/types.ts';
import { durationMs } from './durations.ts';
import { Refused } from './route-filters.ts';

/** A cookie name npl-lb writes into a device's configuration: one word of plain characters. */
const COOKIE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const FIELDS = ['sessionName', 'absoluteTimeout', 'type', 'cookieConfig'];

/**
 * A rule's `sessionPersistence` as the load balancer can keep it, or refused naming the field: a
 * device that keeps no sessions by route, the Header type (no device of npl-lb hands out a session
 * header), a name that is not one plain word, a lifetime the device cannot bound, a Permanent
 * cookie without its absoluteTimeout (the CRD's own rule, checked again for objects it did not
 * check). Absent: undefined.
 */
export function ruleSession(
  asked: unknown,
  field: string,
  lb: { sessionCookie: HttpCapabilities['sessionCookie']; adapter: string },
): SessionCookie | undefined {
  if (asked === undefined) return undefined;
  const { sessionCookie: device, adapter } = lb;
  if (!device) throw new Refused(`${field}: the ${adapter} load balancer does not keep sessions by route`);
  const s = (asked ?? {}) as Record<string, unknown>;
  const extra = Object.keys(s).find((k) => !FIELDS.includes(k));
  if (extra) throw new Refused(`${field}.${extra.slice(0, 64)}: not supported by npl-lb yet`);
  if ((s.type ?? 'Cookie') !== 'Cookie')
    throw new Refused(
      `${field}.type: ${JSON.stringify(s.type).slice(0, 16)}: the ${adapter} load balancer keeps sessions by cookie only`,
    );
  const name = s.sessionName;
  if (name !== undefined && (typeof name !== 'string' || !COOKIE_NAME.test(name)))
    throw new Refused(
      `${field}.sessionName: ${JSON.stringify(name).slice(0, 32)} is not a cookie name npl-lb writes (letters, digits, '.', '_' and '-', at most 128)`,
    );
  // The pools' own cookies (persistenceCookie) are named `npllb_<hash>`: a rule's is never one.
  if (typeof name === 'string' && name.toLowerCase().startsWith('npllb_'))
    throw new Refused(`${field}.sessionName: names beginning npllb_ are the load balancer's own`);
  const config = (s.cookieConfig ?? {}) as Record<string, unknown>;
  const configExtra = Object.keys(config).find((k) => k !== 'lifetimeType');
  if (configExtra)
    throw new Refused(`${field}.cookieConfig.${configExtra.slice(0, 64)}: not supported by npl-lb yet`);
  const lifetime = config.lifetimeType ?? 'Session';
  if (lifetime !== 'Session' && lifetime !== 'Permanent')
    throw new Refused(
      `${field}.cookieConfig.lifetimeType: ${JSON.stringify(lifetime).slice(0, 16)} is not Session or Permanent`,
    );
  const absolute = s.absoluteTimeout;
  const ms = typeof absolute === 'string' ? durationMs(absolute) : undefined;
  if (absolute !== undefined && (ms === undefined || ms === 0))
    throw new Refused(
      `${field}.absoluteTimeout: ${JSON.stringify(absolute).slice(0, 32)} is not a duration of more than 0s`,
    );
  if (ms !== undefined && !device.absoluteTimeout)
    throw new Refused(
      `${field}.absoluteTimeout: the ${adapter} load balancer cannot end a session after a time`,
    );
  if (lifetime === 'Permanent' && ms === undefined)
    throw new Refused(`${field}.cookieConfig.lifetimeType: a Permanent cookie needs absoluteTimeout`);
  if (lifetime === 'Permanent' && !device.permanent)
    throw new Refused(
      `${field}.cookieConfig.lifetimeType: the ${adapter} load balancer inserts session cookies only`,
    );
  if (lifetime === 'Session' && !device.browserSession)
    throw new Refused(
      `${field}.cookieConfig.lifetimeType: Session: the ${adapter} load balancer's cookie always carries an expiry; ask Permanent with an absoluteTimeout`,
    );
  if (lifetime === 'Session' && ms !== undefined && !device.browserSessionTimeout)
    throw new Refused(
      `${field}.absoluteTimeout: the ${adapter} load balancer ends a session after a time only with a Permanent cookie (cookieConfig.lifetimeType: Permanent)`,
    );
  // Whole seconds, rounded up: a session never ends before the time asked.
  const seconds = ms !== undefined ? Math.ceil(ms / 1000) : undefined;
  const { timeoutStepSeconds: step, maxTimeoutSeconds: max } = device;
  if (seconds !== undefined && step !== undefined && seconds % step !== 0)
    throw new Refused(
      `${field}.absoluteTimeout: ${JSON.stringify(absolute).slice(0, 32)}: the ${adapter} load balancer counts a session's lifetime in steps of ${step}s`,
    );
  if (seconds !== undefined && max !== undefined && seconds > max)
    throw new Refused(
      `${field}.absoluteTimeout: ${JSON.stringify(absolute).slice(0, 32)}: the ${adapter} load balancer keeps a session at most ${max}s`,
    );
  return {
    ...(typeof name === 'string' ? { name } : {}),
    ...(seconds !== undefined ? { absoluteSeconds: seconds } : {}),
    ...(lifetime === 'Permanent' ? { permanent: true } : {}),
  };
}
