/**
 * What a BackendPolicy and a Service's client filter become in haproxy.cfg (the runtime transport;
 * the Data Plane transport writes the same through its models, dataplane/layout.ts): backend lines
 * for the algorithm and persistence, a frontend line for the source ranges, and what of a pool
 * HAProxy reads from its backend section (a change there reloads). Pure.
 */
import { persistenceCookie } from '../../src/model/persistence.ts';
import { POLICY_FIELDS, type Pool, type VirtualService } from '../../src/model/types.ts';
import { type FrontendSettings, frontendOf } from './parameters.ts';

export { persistenceCookie };

/**
 * A pool's BackendPolicy as backend lines. Every algorithm is one HAProxy balances dynamically, as
 * servers added at runtime need (`source` with consistent hashing). Cookie persistence inserts a
 * cookie of the pool's own name whose value HAProxy derives from each server's address
 * (`dynamic`: a server added at runtime may not carry a `cookie` of its own); SourceIP keeps each
 * client's address in a stick table for 30 minutes.
 */
export function balanceLines(p: Pool): string[] {
  return [
    `    balance ${balanceOf(p)}`,
    ...(hashed(p) ? ['    hash-type consistent'] : []),
    ...(p.persistence === 'Cookie'
      ? [`    cookie ${cookieWords(p)}`, `    dynamic-cookie-key ${COOKIE_KEY}`]
      : []),
    ...(p.persistence === 'SourceIP'
      ? ['    stick-table type ip size 100k expire 30m', '    stick on src']
      : []),
  ];
}

/**
 * The `cookie` line's words: the name (a route's session cookie's, from the validation boundary:
 * one word of letters, digits, `.`, `_` and `-`; else the pool's own), inserted, and a route's
 * lifetime: `maxlife` (HAProxy dates the cookie and ignores it once the session is that old) and,
 * for a Permanent cookie, its Max-Age as an attribute.
 */
export function cookieWords(p: Pool): string {
  const c = p.sessionCookie;
  const life = c?.absoluteSeconds ? ` maxlife ${c.absoluteSeconds}s` : '';
  const age = c?.permanent && c.absoluteSeconds ? ` attr "Max-Age=${c.absoluteSeconds}"` : '';
  return `${c?.name ?? persistenceCookie(p.name)} insert indirect nocache dynamic${life}${age}`;
}

/** Whether a pool's algorithm hashes (consistently: servers come and go at runtime). */
export const hashed = (p: Pool): boolean =>
  p.algorithm === 'SourceHash' || p.algorithm === 'HeaderHash' || p.algorithm === 'CookieHash';

/**
 * A pool's `balance` argument: a keyed hash reads its header (`hdr(<name>)`) or cookie (`hash
 * req.cook(<name>)`); the name is letters, digits, `-` and `_` (the validation boundary, and
 * validate.ts again), so it is one word inside the fetch's parentheses.
 */
export function balanceOf(p: Pool): string {
  switch (p.algorithm) {
    case 'LeastConnections':
      return 'leastconn';
    case 'SourceHash':
      return 'source';
    case 'HeaderHash':
      return `hdr(${p.hashKey ?? ''})`;
    case 'CookieHash':
      return `hash req.cook(${p.hashKey ?? ''})`;
    default:
      return 'roundrobin';
  }
}

/**
 * A BackendPolicy's member timeouts and retries as backend lines (absent: the defaults section's,
 * `retries 3` with `option redispatch`, so a retry goes to another server). HAProxy retries on a
 * failed connection only unless told otherwise: a route's retries (Pool.retryStatuses) write
 * `retry-on` (retryOn).
 */
export function timeoutLines(p: Pool): string[] {
  return [
    ...(p.connectTimeoutSeconds ? [`    timeout connect ${p.connectTimeoutSeconds}s`] : []),
    ...(p.serverTimeoutSeconds ? [`    timeout server ${p.serverTimeoutSeconds}s`] : []),
    ...(p.retries !== undefined ? [`    retries ${p.retries}`] : []),
    ...(p.retryStatuses ? [`    retry-on ${retryOn(p.retryStatuses)}`] : []),
  ];
}

/**
 * What `retry-on` names for a route's retries: a failed connection, one closed before an answer
 * (a reset member), then the statuses (integers of HAProxy's list, from the validation boundary),
 * in order. The Data Plane's `retry_on` is the same words.
 */
export const retryOn = (statuses: readonly number[]): string =>
  ['conn-failure', 'empty-response', ...statuses.map(String)].join(' ');

/** The statuses of a `retry-on` value written by retryOn (undefined: not one it writes). */
export function retryStatusesOf(value: string): number[] | undefined {
  const words = value.trim().split(/\s+/);
  if (words[0] !== 'conn-failure' || words[1] !== 'empty-response') return undefined;
  const statuses = words.slice(2).map(Number);
  return statuses.every((s) => Number.isInteger(s) && s >= 400 && s <= 599) ? statuses : undefined;
}

/** The key HAProxy derives server cookies from (not a secret: a cookie only names a server). */
export const COOKIE_KEY = 'npl-lb';

/**
 * How many ranges one `acl <name> src ...` line holds. HAProxy refuses a line of more than 64
 * words (`too many words`); the ACL's three words leave 61, and lines of one ACL name are ORed,
 * so a list of any length is as many lines as it needs.
 */
export const RANGES_PER_ACL_LINE = 50;

/** A client filter's ranges as the values of the lines of one `src` ACL (one list per line). */
export function srcAclValues(ranges: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < ranges.length; i += RANGES_PER_ACL_LINE)
    out.push(ranges.slice(i, i + RANGES_PER_ACL_LINE).join(' '));
  return out;
}

/** The ACL an L4 frontend's client filter is read in. */
export const L4_SRC_ACL = 'npl_src';

/**
 * The client filter of an L4 frontend: a connection from outside the ranges is refused before
 * anything else (an empty list refuses all). The ranges are networks from the validation boundary
 * (hex digits, dots, colons and a slash), on as many ACL lines as they need.
 */
export function sourceRangeLines(ranges: string[] | undefined): string[] {
  if (!ranges) return [];
  if (ranges.length === 0) return ['    tcp-request connection reject'];
  return [
    ...srcAclValues(ranges).map((v) => `    acl ${L4_SRC_ACL} src ${v}`),
    `    tcp-request connection reject unless ${L4_SRC_ACL}`,
  ];
}

/** The client filter read back from an L4 frontend's comment (`{}` without one). */
export function readSourceRanges(word: string | undefined): { sourceRanges?: string[] } {
  if (word === undefined) return {};
  try {
    const v: unknown = JSON.parse(word);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? { sourceRanges: v as string[] } : {};
  } catch {
    return {};
  }
}

/**
 * A class's frontend settings (LoadBalancerParameters `haproxy.frontend`) as frontend lines
 * (absent: the defaults section's): connections at once, and a client's idle time.
 */
export function frontendLines(v: VirtualService): string[] {
  const f = frontendOf(v.placement);
  return [
    ...(f?.maxConnections ? [`    maxconn ${f.maxConnections}`] : []),
    ...(f?.clientTimeoutSeconds ? [`    timeout client ${f.clientTimeoutSeconds}s`] : []),
  ];
}

/** The word a frontend's settings are kept in (its comment, its description), or ''. */
export const frontendWord = (v: VirtualService): string =>
  frontendOf(v.placement) ? ` frontend=${encodeURIComponent(JSON.stringify(frontendOf(v.placement)))}` : '';

/** The settings read back from that word (decoded): whole positive numbers only, else none. */
export function readFrontend(word: string | undefined): { placement?: { frontend: FrontendSettings } } {
  if (word === undefined) return {};
  try {
    const v = JSON.parse(word) as Record<string, unknown>;
    const n = (x: unknown) => (Number.isInteger(x) && (x as number) > 0 ? (x as number) : undefined);
    const maxConnections = n(v.maxConnections);
    const clientTimeoutSeconds = n(v.clientTimeoutSeconds);
    if (!maxConnections && !clientTimeoutSeconds) return {};
    return {
      placement: {
        frontend: {
          ...(maxConnections ? { maxConnections } : {}),
          ...(clientTimeoutSeconds ? { clientTimeoutSeconds } : {}),
        },
      },
    };
  } catch {
    return {};
  }
}

/** What of a pool lives in its backend section (a change reloads; members change at runtime). */
export const poolShape = (p: Pool): unknown[] => [
  p.name,
  p.health,
  p.protocol,
  p.service,
  p.servicePort,
  JSON.stringify(p.check ?? null),
  // Every policy field, from the model's one list (a field added there reloads when it changes).
  ...POLICY_FIELDS.map((f) => JSON.stringify(p[f] ?? null)),
];
