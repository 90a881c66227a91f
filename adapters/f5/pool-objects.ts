/**
 * Pools in AS3: the pool (members with their node in `metadata` and `remark`, `adminState` disable
 * for draining ones, its BackendPolicy's `loadBalancingMode`, `slowRampTime` and members'
 * `connectionLimit`) and, when its Pods' probe (or a policy) gives one, its own HTTP Monitor; and
 * a pool read back. Pure.
 */
import { readStoredCheck, storeCheck, storedPolicy } from '../../src/adapter/stored-check.ts';
import type { HttpCheck, Member, Pool, StatusRange } from '../../src/model/types.ts';
import { meta, remark } from './as3-text.ts';
import { parsePoolTls, poolTlsName, poolTlsObjects } from './pool-tls.ts';
import { storedRetryStatuses } from './route-retry.ts';
import { storedSession, storeSession } from './persistence.ts';

type Json = Record<string, unknown>;

/** A value of an object's AS3 `metadata` ({key: {value}}). */
export const metaValue = (o: unknown, key: string): string | undefined => {
  const m = (o as { metadata?: Record<string, { value?: unknown }> }).metadata?.[key]?.value;
  return typeof m === 'string' ? m : undefined;
};

/** The name of a pool's own HTTP monitor (beside the pool, in its application). */
export const checkMonitorName = (pool: string): string => `${pool}_check`;
/** The remark that marks a monitor as ours (monitors carry no metadata in AS3). */
export const checkMonitorRemark = (owner: string): string => remark(`npl-lb ${owner} member check`);

/**
 * A pool's HTTP check as an AS3 Monitor (monitorType http): GET of the probe's path, up on a 2xx
 * or 3xx status line; BIG-IP marks a member down when no check succeeded for `timeout` seconds and
 * up after `timeUntilUp` seconds of successes, so the probe's failure and success thresholds become
 * those times at its interval. An HTTPS probe: monitorType https, the same request (BIG-IP's https
 * monitor does not verify the server's certificate unless told to, as the kubelet does not).
 */
export function renderCheckMonitor(c: HttpCheck, owner: string): Json {
  return {
    class: 'Monitor',
    remark: checkMonitorRemark(owner),
    monitorType: c.tls ? 'https' : 'http',
    send: `${c.method ?? 'GET'} ${c.path} HTTP/1.0\r\n${(c.headers ?? []).map((h) => `${h.name}: ${h.value}\r\n`).join('')}\r\n`,
    receive: c.expect ? `HTTP/1\\.[01] (${statusPattern(c.expect)})` : 'HTTP/1\\.[01] [23][0-9][0-9]',
    interval: c.intervalSeconds,
    timeout: c.intervalSeconds * c.fall + 1,
    timeUntilUp: c.intervalSeconds * (c.rise - 1),
  };
}

/** Status ranges as an alternation of three-digit patterns (`20[0-4]|30[0-9]`), digits only. */
export function statusPattern(ranges: StatusRange[]): string {
  const out: string[] = [];
  for (const r of ranges) {
    for (let c = r.from; c <= r.to;) {
      // A whole hundred, a whole ten, else one code: the fewest pieces that cover the range.
      if (c % 100 === 0 && c + 99 <= r.to) {
        out.push(`${c / 100}[0-9][0-9]`);
        c += 100;
      } else if (c % 10 === 0 && c + 9 <= r.to) {
        out.push(`${c / 10}[0-9]`);
        c += 10;
      } else {
        out.push(String(c));
        c += 1;
      }
    }
  }
  return out.join('|');
}

/**
 * A pool, when the application's probe gives one its HTTP monitor, and for a pool spoken to over
 * TLS its server-ssl profile and CA bundle (pool-tls.ts), the monitor then checking over that
 * same TLS: the objects by name. `certRef`: how the pool's application points at a certificate.
 */
export function renderPoolObjects(
  name: string,
  p: Pool,
  owner: string,
  certRef: (cert: string) => string = (n) => n,
): Json {
  const monitor = p.check && renderCheckMonitor(p.check, owner);
  return {
    [name]: renderPool(p, owner),
    ...(monitor
      ? {
          [checkMonitorName(name)]: p.backendTls
            ? { ...monitor, monitorType: 'https', clientTLS: { use: poolTlsName(name) } }
            : monitor,
        }
      : {}),
    ...poolTlsObjects(p, certRef),
  };
}

export function renderPool(p: Pool, owner: string): Json {
  return {
    class: 'Pool',
    remark: remark(`npl-lb ${p.service}:${p.servicePort}`),
    // The pool's BackendPolicy (round robin unless it asks least connections).
    loadBalancingMode: p.algorithm === 'LeastConnections' ? 'least-connections-member' : 'round-robin',
    // Seconds (AS3's default is 10): always written, so it reads back as it was asked.
    slowRampTime: p.slowStartSeconds ?? 0,
    // A failed connection tried again on another member, this many more times (0: never).
    ...(p.retries !== undefined ? { reselectTries: p.retries } : {}),
    // The application's HTTP check (its own Monitor), else a TCP (UDP) check: BIG-IP's http
    // monitor would probe GET /, and an API that answers 404 there is healthy. The traffic kind
    // is in the metadata.
    monitors: p.check ? [{ use: checkMonitorName(p.name) }] : [p.health === 'udp' ? 'udp' : 'tcp'],
    members: p.members.map((m) => ({
      servicePort: m.port,
      serverAddresses: [m.address],
      shareNodes: true,
      adminState: m.enabled ? 'enable' : 'disable',
      ...(p.maxConnections ? { connectionLimit: p.maxConnections } : {}),
      remark: remark(`node ${m.node}`),
      metadata: meta({ node: m.node, pod: m.pod }),
    })),
    metadata: meta({
      owner,
      service: p.service,
      servicePort: p.servicePort,
      protocol: p.protocol,
      health: p.health,
      ...(p.check ? { check: storeCheck(p.check) } : {}),
      // A pool without members still says its members' limit (read back from here).
      ...(p.maxConnections ? { maxconn: String(p.maxConnections) } : {}),
      // Persistence is the virtual server's in AS3 (declaration.ts, http-policy.ts): the pool says
      // what it asked, read back from here.
      ...(p.persistence ? { persistence: p.persistence } : {}),
      // So are a route's retries (route-retry.ts): the services' iRule; read from here only for a
      // pool no HTTP service sends to.
      ...(p.retryStatuses ? { retryStatuses: p.retryStatuses.join(',') } : {}),
      // And a route's session cookie (persistence.ts): the rules' persist actions.
      ...(p.sessionCookie ? { sessionCookie: storeSession(p.sessionCookie) } : {}),
    }),
  };
}

/**
 * The members' connection limit, from their own `connectionLimit` (0: none); a pool without
 * members has no field for it, and says in its metadata what it asked.
 */
function memberLimit(o: Json, members: Json[]): { maxConnections?: number } {
  const limit =
    members.length > 0
      ? typeof members[0]!.connectionLimit === 'number'
        ? members[0]!.connectionLimit
        : 0
      : Number(storedPolicy({ maxconn: metaValue(o, 'maxconn') }).maxConnections ?? 0);
  return limit > 0 ? { maxConnections: limit } : {};
}

/** The load-balancing modes renderPool writes. */
const OUR_MODES = new Set(['round-robin', 'least-connections-member']);

/**
 * Whether a pool of ours was changed by hand in a way the model cannot say: members of several
 * connection limits, or a mode we never write (ratio, fastest ...).
 */
export function poolDrifted(o: Json): boolean {
  const members = Array.isArray(o.members) ? (o.members as Json[]) : [];
  return (
    new Set(members.map((m) => m.connectionLimit ?? 0)).size > 1 ||
    !OUR_MODES.has(String(o.loadBalancingMode))
  );
}

/** A pool of ours read back as the model's (`app`: its application, where its TLS profile is). */
export function parsePool(name: string, o: Json, app: Json = {}): Pool {
  const tls = parsePoolTls(name, app);
  const members = Array.isArray(o.members) ? (o.members as Json[]) : [];
  const first: unknown = Array.isArray(o.monitors) ? o.monitors[0] : undefined;
  const monitor = typeof first === 'string' ? first : 'tcp';
  const health = metaValue(o, 'health') ?? monitor;

  return {
    name,
    protocol: metaValue(o, 'protocol') === 'UDP' ? 'UDP' : 'TCP',
    health: health === 'http' || health === 'udp' ? health : 'tcp',
    ...readStoredCheck(metaValue(o, 'check')),
    ...(o.loadBalancingMode === 'least-connections-member' ? { algorithm: 'LeastConnections' as const } : {}),
    ...(typeof o.slowRampTime === 'number' && o.slowRampTime > 0 ? { slowStartSeconds: o.slowRampTime } : {}),
    // Persistence: the metadata's, until parseDeclaration reads the virtual servers' (the device's).
    ...storedPolicy({ persistence: metaValue(o, 'persistence') }),
    ...memberLimit(o, members),
    ...(typeof o.reselectTries === 'number' ? { retries: o.reselectTries } : {}),
    // Route retries: the metadata's, until parseDeclaration reads the services' iRules (the device's).
    ...storedRetryStatuses(metaValue(o, 'retryStatuses')),
    ...storedSession(metaValue(o, 'sessionCookie')),
    ...(tls ? { backendTls: tls } : {}),
    members: members.map((m): Member => ({
      address: String((m.serverAddresses as unknown[] | undefined)?.[0] ?? ''),
      port: Number(m.servicePort),
      node: metaValue(m, 'node') ?? '',
      pod: metaValue(m, 'pod') ?? '',
      enabled: m.adminState !== 'disable' && m.adminState !== 'offline' && m.enable !== false,
    })),
    service: metaValue(o, 'service') ?? '',
    servicePort: metaValue(o, 'servicePort') ?? '',
  };
}
