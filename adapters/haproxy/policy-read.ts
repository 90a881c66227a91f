/**
 * A pool's BackendPolicy read back from haproxy.cfg's own lines (the runtime transport), the
 * inverse of policy-lines.ts: `balance` and `hash-type` (the algorithm and its key), `cookie` and
 * `stick on` (persistence), `timeout connect`, `timeout server`, `retries` and `retry-on`, and the servers'
 * `maxconn`, `slowstart` and `proto h2`. Never from our own comment, so a line changed by hand is
 * seen and the next pass writes it again. A backend whose policy lines are not exactly the ones
 * its read policy renders (a `balance static-rr`, a `timeout server 5000` without its unit,
 * servers that disagree) is `exact: false`: the adapter reports it drifted. Pure.
 */
import {
  type BackendTls,
  type LbAlgorithm,
  type Pool,
  type PoolPolicy,
  type SessionCookie,
  SYSTEM_CA,
} from '../../src/model/types.ts';
import { persistenceCookie } from '../../src/model/persistence.ts';
import { SYSTEM_CA_FILE } from './tls-words.ts';
import { balanceLines, retryStatusesOf, timeoutLines } from './policy-lines.ts';

/** The lines of a backend that policy-lines.ts writes (compared in order, trimmed). */
const POLICY_LINE =
  /^\s*(balance|hash-type|cookie|dynamic-cookie-key|stick-table|stick|timeout\s+(connect|server)|retries|retry-on)\b/;

/** A `balance` argument as the algorithm and key it stands for (undefined: not one we write). */
function algorithmOf(arg: string): { algorithm?: LbAlgorithm; hashKey?: string } | undefined {
  if (arg === 'roundrobin') return {};
  if (arg === 'leastconn') return { algorithm: 'LeastConnections' };
  if (arg === 'source') return { algorithm: 'SourceHash' };
  const hdr = /^hdr\(([A-Za-z0-9_-]{1,64})\)$/.exec(arg);
  if (hdr) return { algorithm: 'HeaderHash', hashKey: hdr[1]! };
  const cook = /^hash\s+req\.cook\(([A-Za-z0-9_-]{1,64})\)$/.exec(arg);
  if (cook) return { algorithm: 'CookieHash', hashKey: cook[1]! };
  return undefined;
}

/**
 * A route's session cookie from the `cookie` line (cookieWords' inverse): its name when not the
 * pool's own, `maxlife`, and a Max-Age attribute of the same time (Permanent). Undefined: the
 * pool's own cookie with no lifetime (a Service's persistence).
 */
function sessionCookieOf(pool: string, line: string): SessionCookie | undefined {
  const words = line.split(' ');
  const name = words[1] ?? '';
  const life = /^(\d+)s$/.exec(words[words.indexOf('maxlife') + 1] ?? '')?.[1];
  const age = /^"Max-Age=(\d+)"$/.exec(words[words.indexOf('attr') + 1] ?? '')?.[1];
  const out: SessionCookie = {
    ...(name !== persistenceCookie(pool) ? { name } : {}),
    ...(words.includes('maxlife') && life ? { absoluteSeconds: Number(life) } : {}),
    ...(words.includes('attr') && age !== undefined && age === life ? { permanent: true } : {}),
  };
  return Object.keys(out).length ? out : undefined;
}

/**
 * What a backend without servers says of its servers' fields: our note of what it asked (no
 * device field holds them there). Both transports read it so.
 */
export const unservedPolicy = (u: PoolPolicy): PoolPolicy => ({
  ...(u.maxConnections ? { maxConnections: u.maxConnections } : {}),
  ...(u.slowStartSeconds ? { slowStartSeconds: u.slowStartSeconds } : {}),
  ...(u.backendProtocol ? { backendProtocol: u.backendProtocol } : {}),
  ...(u.backendTls ? { backendTls: u.backendTls } : {}),
});

/**
 * The servers' TLS words as config.ts writes them (`ssl verify required ca-file F sni str(N)
 * verifyhost V`), the CA as `file:<path>` (or SYSTEM_CA) for the adapter to read; anything else
 * (no `verify required`, another SNI expression) reads as no TLS, and the next pass writes it.
 */
export const FILE_PREFIX = 'file:';
/** A `crt` file as read, for the adapter to name (ca-files.ts: a PEM of its directory, or none). */
export const CRT_PREFIX = 'crt:';
const TLS_WORDS =
  /(?:^|\s)ssl verify required ca-file (\S+) sni str\(([a-z0-9.-]+)\) verifyhost ([a-z0-9.-]+)(?: crt (\S+))?(?=\s|$)/;
function tlsOf(words: string): BackendTls | undefined {
  const m = TLS_WORDS.exec(words);
  if (!m || /\bverify none\b/.test(words)) return undefined;
  return {
    serverName: m[2]!,
    verifyNames: [m[3]!],
    ca: m[1] === SYSTEM_CA_FILE ? SYSTEM_CA : `${FILE_PREFIX}${m[1]!}`,
    ...(m[4] ? { clientCertificate: `${CRT_PREFIX}${m[4]}` } : {}),
  };
}

/** A whole number of seconds (`5s`), else undefined (another unit is not what we write). */
const seconds = (v: string | undefined): number | undefined =>
  v !== undefined && /^[1-9]\d{0,6}s$/.test(v) ? Number(v.slice(0, -1)) : undefined;

/** The servers' own policy words: their limit, ramp and protocol, if every server agrees. */
function serverPolicy(serverWords: string[]): { policy: PoolPolicy; agree: boolean } {
  const one = (w: string): PoolPolicy => {
    const maxconn = /\bmaxconn (\d+)\b/.exec(w)?.[1];
    const slow = seconds(/\bslowstart (\S+)/.exec(w)?.[1]);
    return {
      ...(maxconn && Number(maxconn) > 0 ? { maxConnections: Number(maxconn) } : {}),
      ...(slow ? { slowStartSeconds: slow } : {}),
      ...(/\bproto h2\b/.test(w) ? { backendProtocol: 'h2c' as const } : {}),
      ...(tlsOf(w) ? { backendTls: tlsOf(w)! } : {}),
    };
  };
  const all = serverWords.map(one);
  const first = all[0] ?? {};
  const key = JSON.stringify(first);
  return { policy: first, agree: all.every((p) => JSON.stringify(p) === key) };
}

/**
 * The policy of one backend from its lines and its servers' words (`serverWords`: each server
 * line's words after the address). A backend without servers has no device field for the servers'
 * words: those come from `unserved` (what our comment says it asked), the rest from the lines.
 */
export function readBackendPolicy(
  name: string,
  lines: string[],
  serverWords: string[],
  unserved: PoolPolicy,
): { policy: PoolPolicy; exact: boolean } {
  const own = lines.filter((l) => POLICY_LINE.test(l)).map((l) => l.trim().replace(/\s+/g, ' '));
  const balanceArg = own.find((l) => l.startsWith('balance '))?.slice('balance '.length);
  const algorithm = balanceArg === undefined ? undefined : algorithmOf(balanceArg);
  const cookieLine = own.find((l) => l.startsWith('cookie '));
  const persistence = cookieLine
    ? ('Cookie' as const)
    : own.includes('stick on src')
      ? ('SourceIP' as const)
      : undefined;
  const sessionCookie = cookieLine ? sessionCookieOf(name, cookieLine) : undefined;
  const connect = seconds(/^timeout connect (\S+)$/m.exec(own.join('\n'))?.[1]);
  const server = seconds(/^timeout server (\S+)$/m.exec(own.join('\n'))?.[1]);
  const retries = /^retries (\d+)$/m.exec(own.join('\n'))?.[1];
  const retryLine = /^retry-on (.+)$/m.exec(own.join('\n'))?.[1];
  // A `retry-on` of other words (written by hand) reads as what it names of ours; `exact` sees it.
  const retryStatuses = retryLine === undefined ? undefined : (retryStatusesOf(retryLine) ?? []);
  const servers =
    serverWords.length > 0 ? serverPolicy(serverWords) : { policy: unservedPolicy(unserved), agree: true };
  const policy: PoolPolicy = {
    ...(algorithm ?? {}),
    ...(persistence ? { persistence } : {}),
    ...(sessionCookie ? { sessionCookie } : {}),
    ...servers.policy,
    ...(connect ? { connectTimeoutSeconds: connect } : {}),
    ...(server ? { serverTimeoutSeconds: server } : {}),
    ...(retries !== undefined ? { retries: Number(retries) } : {}),
    ...(retryStatuses ? { retryStatuses } : {}),
  };
  const pool = { name, ...policy } as Pool;
  const rendered = [...balanceLines(pool), ...timeoutLines(pool)].map((l) => l.trim());
  const exact =
    algorithm !== undefined &&
    servers.agree &&
    rendered.length === own.length &&
    rendered.every((l, i) => l === own[i]);
  return { policy, exact };
}
