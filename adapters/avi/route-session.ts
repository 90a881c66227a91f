/**
 * A route's session cookie on Avi (Pool.sessionCookie: an HTTPRoute rule's `sessionPersistence`,
 * the rule's own pool variant): an application persistence profile of the pool's own
 * (`<pool>-session`, PERSISTENCE_TYPE_HTTP_COOKIE) naming the cookie (`cookie_name`: the rule's,
 * or the pool's own), its lifetime in minutes (`timeout`, 0: none) and whether the cookie carries
 * it (`is_persistent_cookie`: Permanent; from object model 21.1.3). Avi bounds a session only
 * through a persistent cookie: a browser-session cookie is honoured past its timeout while the
 * browser keeps it, so a Session cookie with an absoluteTimeout is refused at the source
 * (Capabilities.http.sessionCookie). Read back from the profile's own fields, so a name or a
 * lifetime changed by hand is seen and written again. Pure.
 */
import { persistenceCookie } from '../../src/model/persistence.ts';
import type { Pool, SessionCookie } from '../../src/model/types.ts';
import { versionBelow } from '../../src/model/versions.ts';
import { type AviObject, markers, withSum } from './object-marks.ts';

type Raw = Record<string, unknown>;

/** The persistence profile of a pool keeping a route's sessions. */
export const sessionProfileName = (pool: string): string => `${pool}-session`;

/** Avi's cookie lifetime: whole minutes, at most 14,400 (10 days); 0 is none. */
export const SESSION_MINUTES_MAX = 14_400;

/** The object model that brought `is_persistent_cookie` (a cookie carrying its expiry). */
export const PERSISTENT_COOKIE_SINCE = '21.1.3';

/**
 * The pool's own persistence profile (none without a route's session cookie), or why this
 * controller cannot keep it: a Permanent cookie before 21.1.3, a lifetime not in whole minutes or
 * past 10 days (the source refuses both first; checked again here for what did not pass it).
 */
export function renderSessionProfile(
  p: Pool,
  owner: string,
  version: string,
): AviObject | { problem: string } | undefined {
  const c = p.sessionCookie;
  if (!c) return undefined;
  const seconds = c.absoluteSeconds ?? 0;
  if (seconds % 60 !== 0 || seconds / 60 > SESSION_MINUTES_MAX)
    return {
      problem: `pool ${p.name}: a session of ${seconds} s is not a whole number of minutes up to ${SESSION_MINUTES_MAX}`,
    };
  if (c.permanent && versionBelow(version, PERSISTENT_COOKIE_SINCE))
    return {
      problem: `pool ${p.name}: a Permanent session cookie needs Avi ${PERSISTENT_COOKIE_SINCE} or later (the API version is ${version})`,
    };
  return withSum('applicationpersistenceprofile', {
    name: sessionProfileName(p.name),
    markers: markers(owner, p.service),
    persistence_type: 'PERSISTENCE_TYPE_HTTP_COOKIE',
    http_cookie_persistence_profile: {
      cookie_name: c.name ?? persistenceCookie(p.name),
      timeout: seconds / 60,
      always_send_cookie: false,
      ...(c.permanent ? { is_persistent_cookie: true } : {}),
    },
  });
}

/**
 * The session cookie a pool's own persistence profile keeps, in the model: undefined where the
 * profile is not one npl-lb writes (another type, no cookie name), so the pool is written again.
 */
export function parseSessionProfile(pool: string, profile: Raw | undefined): SessionCookie | undefined {
  if (!profile || profile.name !== sessionProfileName(pool)) return undefined;
  if (profile.persistence_type !== 'PERSISTENCE_TYPE_HTTP_COOKIE') return undefined;
  const cookie = (profile.http_cookie_persistence_profile ?? {}) as Raw;
  if (typeof cookie.cookie_name !== 'string' || cookie.cookie_name === '') return undefined;
  const minutes = typeof cookie.timeout === 'number' && cookie.timeout > 0 ? cookie.timeout : 0;
  return {
    ...(cookie.cookie_name !== persistenceCookie(pool) ? { name: cookie.cookie_name } : {}),
    ...(minutes > 0 ? { absoluteSeconds: minutes * 60 } : {}),
    ...(cookie.is_persistent_cookie === true ? { permanent: true } : {}),
  };
}
