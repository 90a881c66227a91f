/**
 * What the simulated controller checks of an application persistence profile beyond its field
 * model, as the Avi SDK's field texts state it: the persistence type is one of its enum, an HTTP
 * cookie profile's `timeout` is 0 (none) or 1-14400 minutes, and `is_persistent_cookie` exists
 * from object model 21.1.3 on. Pure.
 */
import { versionBelow } from '../../src/model/versions.ts';

type Json = Record<string, unknown>;

const TYPES = [
  'PERSISTENCE_TYPE_CLIENT_IP_ADDRESS',
  'PERSISTENCE_TYPE_HTTP_COOKIE',
  'PERSISTENCE_TYPE_TLS',
  'PERSISTENCE_TYPE_CLIENT_IPV6_ADDRESS',
  'PERSISTENCE_TYPE_CUSTOM_HTTP_HEADER',
  'PERSISTENCE_TYPE_APP_COOKIE',
  'PERSISTENCE_TYPE_GSLB_SITE',
  'PERSISTENCE_TYPE_APP_DIAMETER',
];

/** Why the controller of this object model refuses the profile (undefined: it takes it). */
export function persistenceProblem(o: Json, version: string): string | undefined {
  if (!TYPES.includes(String(o.persistence_type)))
    return `persistence_type: ${JSON.stringify(o.persistence_type)} is not one of ${TYPES.join(', ')}`;
  const cookie = o.http_cookie_persistence_profile as Json | undefined;
  if (!cookie) return undefined;
  const t = cookie.timeout;
  if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 0 || t > 14_400))
    return `http_cookie_persistence_profile.timeout: ${JSON.stringify(t)} is not 0 or 1-14400 (minutes)`;
  if ('is_persistent_cookie' in cookie && versionBelow(version, '21.1.3'))
    return `http_cookie_persistence_profile.is_persistent_cookie: unknown field in the object model of ${version} (introduced in 21.1.3)`;
  return undefined;
}
