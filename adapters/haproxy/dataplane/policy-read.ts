/**
 * A pool's BackendPolicy read back from the Data Plane API's own fields (the backend's `balance`,
 * `hash_type`, `cookie`, `stick_table`, `connect_timeout`, `server_timeout` and `retries`, the
 * servers' `maxconn`, `slowstart` and `proto`), never from our description, so a field changed by
 * hand is seen and the next pass writes it again. The inverse of layout.ts `backendFor`; a field
 * it never writes (`balance static-rr`, a timeout of 1500 ms, servers that disagree) makes the
 * reading `exact: false`: the adapter reports the pool drifted. Pure.
 */
import { persistenceCookie } from '../../../src/model/persistence.ts';
import {
  type BackendTls,
  type LbAlgorithm,
  type PoolPolicy,
  type SessionCookie,
  SYSTEM_CA,
} from '../../../src/model/types.ts';
import { SYSTEM_CA_FILE } from '../tls-words.ts';
import type { DpBackend, DpServer } from './models.ts';
import { COOKIE_KEY, retryOn, retryStatusesOf } from '../policy-lines.ts';
import { CRT_PREFIX, FILE_PREFIX, unservedPolicy } from '../policy-read.ts';

function algorithmOf(b: DpBackend['balance']): { algorithm?: LbAlgorithm; hashKey?: string } | undefined {
  const key = (v: string | undefined) => (v && /^[A-Za-z0-9_-]{1,64}$/.test(v) ? v : undefined);
  switch (b?.algorithm) {
    case undefined:
    case 'roundrobin':
      return {};
    case 'leastconn':
      return { algorithm: 'LeastConnections' };
    case 'source':
      return { algorithm: 'SourceHash' };
    case 'hdr': {
      const hashKey = key(b.hdr_name);
      return hashKey ? { algorithm: 'HeaderHash', hashKey } : undefined;
    }
    case 'hash': {
      const hashKey = key(/^req\.cook\((.*)\)$/.exec(b.hash_expression ?? '')?.[1]);
      return hashKey ? { algorithm: 'CookieHash', hashKey } : undefined;
    }
    default:
      return undefined;
  }
}

/** Milliseconds as whole seconds (what we write), else undefined. */
const wholeSeconds = (ms: number | undefined): number | undefined =>
  ms !== undefined && ms > 0 && ms % 1000 === 0 ? ms / 1000 : undefined;

/**
 * A server's TLS fields as layout.ts writes them, the CA as `file:<path>` (or SYSTEM_CA) for the
 * adapter to read; anything else (no `verify required`, another SNI expression) reads as no TLS.
 */
function tlsOf(s: DpServer): BackendTls | undefined {
  const sni = /^str\(([a-z0-9.-]+)\)$/.exec(s.sni ?? '')?.[1];
  if (s.ssl !== 'enabled' || s.verify !== 'required' || !s.ssl_cafile || !sni || !s.verifyhost)
    return undefined;
  if (!/^[a-z0-9.-]+$/.test(s.verifyhost)) return undefined;
  return {
    serverName: sni,
    verifyNames: [s.verifyhost],
    ca: s.ssl_cafile === SYSTEM_CA_FILE ? SYSTEM_CA : `${FILE_PREFIX}${s.ssl_cafile}`,
    // The certificate presented, as `crt:<path>` for the adapter to name (ca-files.ts).
    ...(s.ssl_certificate ? { clientCertificate: `${CRT_PREFIX}${s.ssl_certificate}` } : {}),
  };
}

function serverPolicy(servers: DpServer[]): { policy: PoolPolicy; agree: boolean } {
  const one = (s: DpServer): PoolPolicy => ({
    ...(s.maxconn ? { maxConnections: s.maxconn } : {}),
    ...(wholeSeconds(s.slowstart) ? { slowStartSeconds: wholeSeconds(s.slowstart)! } : {}),
    ...(s.proto === 'h2' ? { backendProtocol: 'h2c' as const } : {}),
    ...(tlsOf(s) ? { backendTls: tlsOf(s)! } : {}),
  });
  const all = servers.map(one);
  const first = all[0] ?? {};
  const key = JSON.stringify(first);
  const odd = servers.some(
    (s) =>
      (s.slowstart !== undefined && s.slowstart > 0 && !wholeSeconds(s.slowstart)) ||
      (s.proto !== undefined && s.proto !== 'h2'),
  );
  return { policy: first, agree: !odd && all.every((p) => JSON.stringify(p) === key) };
}

/**
 * A route's session cookie from the backend's cookie model (the layout's inverse): its name when
 * not the pool's own, `maxlife`, and a Max-Age attribute of the same time (Permanent). Undefined:
 * the pool's own cookie with no lifetime (a Service's persistence).
 */
function sessionCookieOf(pool: string, c: NonNullable<DpBackend['cookie']>): SessionCookie | undefined {
  const age = c.attr?.length === 1 ? /^Max-Age=(\d+)$/.exec(c.attr[0]!.value)?.[1] : undefined;
  const out: SessionCookie = {
    ...(c.name !== persistenceCookie(pool) ? { name: c.name } : {}),
    ...(c.maxlife ? { absoluteSeconds: c.maxlife } : {}),
    ...(c.maxlife && age !== undefined && Number(age) === c.maxlife ? { permanent: true } : {}),
  };
  return Object.keys(out).length ? out : undefined;
}

/**
 * One backend's policy from its fields and its servers' (`servers`: the members' slots; a backend
 * without any has no server fields, and those come from `unserved`, our description's words).
 */
export function readDataplanePolicy(
  b: DpBackend,
  servers: DpServer[],
  unserved: PoolPolicy,
): { policy: PoolPolicy; exact: boolean } {
  const algorithm = algorithmOf(b.balance);
  const hashed = ['SourceHash', 'HeaderHash', 'CookieHash'].includes(algorithm?.algorithm ?? '');
  const sessionCookie = b.cookie ? sessionCookieOf(b.name, b.cookie) : undefined;
  const cookieOk =
    !b.cookie ||
    (JSON.stringify(b.cookie.attr ?? []) ===
      JSON.stringify(
        sessionCookie?.permanent ? [{ value: `Max-Age=${sessionCookie.absoluteSeconds ?? 0}` }] : [],
      ) &&
      b.cookie.type === 'insert' &&
      b.cookie.indirect === true &&
      b.cookie.nocache === true &&
      b.cookie.dynamic === true &&
      b.dynamic_cookie_key === COOKIE_KEY);
  const t = b.stick_table;
  const stickOk = !t || (t.type === 'ip' && t.size === 102_400 && t.expire === 1_800_000);
  const persistence = b.cookie ? ('Cookie' as const) : t ? ('SourceIP' as const) : undefined;
  const connect = wholeSeconds(b.connect_timeout);
  const server = wholeSeconds(b.server_timeout);
  const timeoutsOk =
    (b.connect_timeout === undefined || connect !== undefined) &&
    (b.server_timeout === undefined || server !== undefined);
  // A `retry_on` of other words (set by hand) reads as what it names of ours; `exact` sees it.
  const retryStatuses = b.retry_on === undefined ? undefined : (retryStatusesOf(b.retry_on) ?? []);
  const fromServers =
    servers.length > 0 ? serverPolicy(servers) : { policy: unservedPolicy(unserved), agree: true };
  const policy: PoolPolicy = {
    ...(algorithm ?? {}),
    ...(persistence ? { persistence } : {}),
    ...(sessionCookie ? { sessionCookie } : {}),
    ...fromServers.policy,
    ...(connect ? { connectTimeoutSeconds: connect } : {}),
    ...(server ? { serverTimeoutSeconds: server } : {}),
    ...(b.retries !== undefined ? { retries: b.retries } : {}),
    ...(retryStatuses ? { retryStatuses } : {}),
  };
  const exact =
    algorithm !== undefined &&
    hashed === (b.hash_type?.method === 'consistent') &&
    cookieOk &&
    stickOk &&
    timeoutsOk &&
    (b.retry_on === undefined || retryOn(retryStatuses!) === b.retry_on) &&
    fromServers.agree;
  return { policy, exact };
}
