/**
 * The Avi objects npl-lb writes, AKO style: the pools and their checks (what every object carries,
 * its owner mark, markers and checksum: object-marks.ts; a pool's TLS: pool-tls.ts); names come from the model
 * (`<cluster>--...`). A pool server is one Pod at its node's NodePortLocal port with `hostname` =
 * the node. Virtual services and what they are made of are vs-objects.ts, HTTP policy sets
 * http-policy.ts, certificates certificates.ts, TLS passthrough passthrough.ts. Objects are checked
 * with zod (a subset of the Avi field model, with the ranges Avi enforces deeper down) and against
 * the field model itself before they are sent; a checksum kept on each object (its
 * `cloud_config_cksum`, or a marker where the type has none) says whether it needs writing.
 * Pure: no I/O.
 */
import { isIP } from 'node:net';
import { statusRanges } from '../../src/model/status-ranges.ts';
import type { HttpCheck, LbAlgorithm, PersistenceType, Pool, StatusRange } from '../../src/model/types.ts';
import { type AviObject, byName, createdBy, markers, markerValue, uuidOf, withSum } from './object-marks.ts';
import { parsePoolTls, poolTlsFields } from './pool-tls.ts';
import { parseSessionProfile, sessionProfileName } from './route-session.ts';

// What every object carries (owner, markers, checksum), for the files that read them from here.
export {
  type AviObject,
  type AviType,
  byName,
  checksum,
  createdBy,
  markers,
  markerValue,
  ownedBy,
  ownerOf,
  storedSum,
  SUM_MARKER,
  uuidOf,
  withSum,
} from './object-marks.ts';

export interface AviPlacement {
  cloud: string;
  seGroup: string;
  vrf: string;
  /**
   * How long a disabled (draining) server keeps its connections, in seconds (-1: until they end,
   * 0: none). Sent as `graceful_disable_timeout_sec` from Avi 31.2.1, which no longer defaults it,
   * and as `graceful_disable_timeout` in minutes (rounded up) before.
   */
  gracefulDisableSeconds?: number;
  /** The controller's API version (X-Avi-Version), for the fields that depend on it. */
  version?: string;
  /**
   * Avi's IPAM allocates the VIPs (AKO's vipNetworkList): VsVips ask for an address in this
   * network and subnet (`auto_allocate_ip`; IPv6 ones `V6_ONLY` in `cidr6`). Without it, VIPs come
   * from the controller's vip.cidrs.
   */
  vipNetwork?: { name: string; cidr: string; cidr6?: string };
}

/** The pool's graceful disable timeout, in the field of the controller's version. */
export function gracefulDisable(at: AviPlacement): Record<string, number> {
  const sec = at.gracefulDisableSeconds ?? 60;
  const [major = 0, minor = 0] = (at.version ?? '22.1.3').split('.').map(Number);
  if (major > 31 || (major === 31 && minor >= 2)) return { graceful_disable_timeout_sec: sec };
  return { graceful_disable_timeout: sec <= 0 ? sec : Math.min(7200, Math.ceil(sec / 60)) };
}

export const ipAddr = (addr: string) => ({ addr, type: isIP(addr) === 6 ? 'V6' : 'V4' });

/**
 * The member check: the pool's own HTTP monitor when its Pods' readiness probe gives one, else a
 * TCP connect (UDP pools: System-UDP). An HTTP pool is not checked with System-HTTP's GET / (an
 * API that answers 404 there is healthy). The pool's traffic kind is its `health` marker.
 */
const HEALTH = { tcp: 'System-TCP', udp: 'System-UDP', http: 'System-TCP' } as const;

/** The name of a pool's own HTTP monitor. */
export const checkMonitorName = (pool: string): string => `${pool}-check`;

/**
 * A pool's HTTP check as an Avi HealthMonitor: GET of the probe's path, HTTP_2XX and HTTP_3XX
 * meaning up (the kubelet's rule), at the probe's period and timeout, up after successful_checks
 * and down after failed_checks results in a row. An HTTPS probe: HEALTH_MONITOR_HTTPS with the same
 * request in `https_monitor` (no server certificate check configured, as the kubelet checks none).
 */
export function renderHealthMonitor(p: Pool, c: HttpCheck, owner: string): AviObject {
  // The probe's headers follow the request line, each on a line of its own (Avi sends the text).
  const headers = (c.headers ?? []).map((h) => `\r\n${h.name}: ${h.value}`).join('');
  const request = {
    http_request: `${c.method ?? 'GET'} ${c.path} HTTP/1.0${headers}`,
    // Whole classes (Capabilities.checkStatuses 'classes': the source sends no other range).
    http_response_code: (c.expect ?? [{ from: 200, to: 399 }]).flatMap((r) => {
      const out: string[] = [];
      for (let k = Math.floor(r.from / 100); k <= Math.floor(r.to / 100); k++) out.push(`HTTP_${k}XX`);
      return out;
    }),
  };
  return withSum('healthmonitor', {
    name: checkMonitorName(p.name),
    markers: markers(owner, p.service, { pool: p.name }),
    description: `npl-lb readiness probe of ${p.service}:${p.servicePort}`,
    type: c.tls ? 'HEALTH_MONITOR_HTTPS' : 'HEALTH_MONITOR_HTTP',
    send_interval: c.intervalSeconds,
    receive_timeout: c.timeoutSeconds,
    successful_checks: c.rise,
    failed_checks: c.fall,
    ...(c.tls ? { https_monitor: request } : { http_monitor: request }),
  });
}

/** A HealthMonitor of ours read back as the check it stands for (none if it is not one). */
export function parseHealthMonitor(o: Record<string, unknown>): HttpCheck | undefined {
  const tls = o.type === 'HEALTH_MONITOR_HTTPS';
  const http = (tls ? o.https_monitor : o.http_monitor) as
    { http_request?: unknown; http_response_code?: unknown } | undefined;
  const [line = '', ...rest] = String(http?.http_request ?? '').split('\r\n');
  const request = /^(GET|HEAD) (\/\S*) HTTP\/1\.0$/.exec(line);
  const path = request?.[2];
  if ((o.type !== 'HEALTH_MONITOR_HTTP' && !tls) || !path) return undefined;
  const headers = rest
    .map((h) => /^([^:]+): (.*)$/.exec(h))
    .map((m) => ({ name: m?.[1] ?? '', value: m?.[2] ?? '' }));
  const n = (v: unknown): number => (Number.isInteger(v) ? (v as number) : 0);
  return {
    type: 'http',
    path,
    intervalSeconds: n(o.send_interval),
    timeoutSeconds: n(o.receive_timeout),
    rise: n(o.successful_checks),
    fall: n(o.failed_checks),
    ...(tls ? { tls: true as const } : {}),
    ...(headers.length > 0 ? { headers } : {}),
    ...(request?.[1] === 'HEAD' ? { method: 'HEAD' as const } : {}),
    ...classesRead(http?.http_response_code),
  };
}

/** Response code classes read back as the model's ranges (none: the default, 2xx and 3xx). */
function classesRead(v: unknown): { expect?: StatusRange[] } {
  const classes = (Array.isArray(v) ? v : [])
    .map((c) => /^HTTP_([1-5])XX$/.exec(String(c))?.[1])
    .filter((k): k is string => k !== undefined)
    .map(Number);
  const expect = statusRanges(classes.map((k) => ({ from: k * 100, to: k * 100 + 99 })));
  return expect ? { expect } : {};
}

/**
 * A pool's BackendPolicy in Avi's words: the algorithm always written (the controller's default is
 * least connections; npl-lb's is round robin, on every vendor), source-address affinity as
 * consistent hashing on the client's address, persistence as the system profiles.
 */
const ALGORITHM: Record<Exclude<LbAlgorithm, 'CookieHash'>, string> = {
  RoundRobin: 'LB_ALGORITHM_ROUND_ROBIN',
  LeastConnections: 'LB_ALGORITHM_LEAST_CONNECTIONS',
  SourceHash: 'LB_ALGORITHM_CONSISTENT_HASH',
  HeaderHash: 'LB_ALGORITHM_CONSISTENT_HASH',
};
const SOURCE_HASH = 'LB_ALGORITHM_CONSISTENT_HASH_SOURCE_IP_ADDRESS';
const HEADER_HASH = 'LB_ALGORITHM_CONSISTENT_HASH_CUSTOM_HEADER';
export const PERSISTENCE_PROFILE: Record<PersistenceType, string> = {
  Cookie: 'System-Persistence-Http-Cookie',
  SourceIP: 'System-Persistence-Client-IP',
};

function balanceFields(p: Pool): Record<string, unknown> {
  return {
    // CookieHash is not in Avi's capabilities (refused before it comes here).
    lb_algorithm: ALGORITHM[p.algorithm === 'CookieHash' ? 'RoundRobin' : (p.algorithm ?? 'RoundRobin')],
    // Minutes (0: at once; the controller's default is 10): always written, so it reads back.
    connection_ramp_duration: Math.round((p.slowStartSeconds ?? 0) / 60),
    ...(p.maxConnections ? { max_concurrent_connections_per_server: p.maxConnections } : {}),
    // Milliseconds to connect and complete an exchange (absent: the application profile's).
    ...(p.serverTimeoutSeconds ? { server_timeout: p.serverTimeoutSeconds * 1000 } : {}),
    ...(p.algorithm === 'SourceHash' ? { lb_algorithm_hash: SOURCE_HASH } : {}),
    ...(p.algorithm === 'HeaderHash'
      ? { lb_algorithm_hash: HEADER_HASH, lb_algorithm_consistent_hash_hdr: p.hashKey ?? '' }
      : {}),
    // A request whose connection to a server fails goes to another, this many more times (HTTP
    // pools: Capabilities.retries 'http'; 0: never); a route's retries name the statuses too.
    ...serverReselect(p),
    // HTTP/2 to every server of the pool (h2c: gRPC, appProtocol kubernetes.io/h2c).
    ...(p.backendProtocol === 'h2c' ? { enable_http2: true } : {}),
    // A route's session cookie: the pool's own profile (route-session.ts); else the system one.
    ...(p.persistence
      ? {
          application_persistence_profile_ref: byName(
            'applicationpersistenceprofile',
            p.sessionCookie ? sessionProfileName(p.name) : PERSISTENCE_PROFILE[p.persistence],
          ),
        }
      : {}),
  };
}

/** The algorithm and persistence a pool read back has (round robin: none, as the model has it). */
function parseBalance(
  o: Record<string, unknown>,
  l: Lookup,
): Pick<
  Pool,
  | 'algorithm'
  | 'hashKey'
  | 'persistence'
  | 'sessionCookie'
  | 'maxConnections'
  | 'slowStartSeconds'
  | 'serverTimeoutSeconds'
  | 'retries'
  | 'retryStatuses'
  | 'backendProtocol'
> {
  const algorithm =
    o.lb_algorithm === ALGORITHM.LeastConnections
      ? 'LeastConnections'
      : o.lb_algorithm === ALGORITHM.SourceHash && o.lb_algorithm_hash === SOURCE_HASH
        ? 'SourceHash'
        : o.lb_algorithm === ALGORITHM.HeaderHash &&
            o.lb_algorithm_hash === HEADER_HASH &&
            typeof o.lb_algorithm_consistent_hash_hdr === 'string'
          ? 'HeaderHash'
          : undefined;
  const profile = l.names.get(uuidOf(o.application_persistence_profile_ref));
  const session = parseSessionProfile(
    String(o.name),
    l.byUuid.get(uuidOf(o.application_persistence_profile_ref)),
  );
  const persistence = session
    ? 'Cookie'
    : (Object.keys(PERSISTENCE_PROFILE) as PersistenceType[]).find((k) => PERSISTENCE_PROFILE[k] === profile);
  const ramp = typeof o.connection_ramp_duration === 'number' ? o.connection_ramp_duration : 0;
  const limit =
    typeof o.max_concurrent_connections_per_server === 'number' ? o.max_concurrent_connections_per_server : 0;
  return {
    ...(algorithm ? { algorithm } : {}),
    ...(algorithm === 'HeaderHash' ? { hashKey: String(o.lb_algorithm_consistent_hash_hdr) } : {}),
    ...(persistence ? { persistence } : {}),
    ...(session ? { sessionCookie: session } : {}),
    ...(limit > 0 ? { maxConnections: limit } : {}),
    ...(ramp > 0 ? { slowStartSeconds: ramp * 60 } : {}),
    ...(typeof o.server_timeout === 'number' && o.server_timeout > 0
      ? { serverTimeoutSeconds: Math.round(o.server_timeout / 1000) }
      : {}),
    ...(o.enable_http2 === true ? { backendProtocol: 'h2c' as const } : {}),
    ...retriesRead(o),
    ...retryStatusesRead(o),
  };
}

/**
 * Whether a pool of ours balances or persists in a way we never write (an algorithm, hash or
 * persistence profile set by hand that the model has no word for): rewritten on the next pass.
 */
export function balanceDrifted(o: Record<string, unknown>, l: Lookup): boolean {
  if (!Object.values(ALGORITHM).includes(String(o.lb_algorithm))) return true;
  if (
    o.lb_algorithm === ALGORITHM.SourceHash &&
    ![SOURCE_HASH, HEADER_HASH].includes(String(o.lb_algorithm_hash))
  )
    return true;
  const ref = o.application_persistence_profile_ref;
  const name = l.names.get(uuidOf(ref)) ?? '';
  return (
    ref !== undefined &&
    ref !== null &&
    !Object.values(PERSISTENCE_PROFILE).includes(name) &&
    name !== sessionProfileName(String(o.name))
  );
}

/**
 * A pool's server_reselect: its retries (a BackendPolicy's count, or a route's attempts) and a
 * route's statuses (svr_resp_code.ranges, one status each). Absent with neither.
 */
function serverReselect(p: Pool): { server_reselect?: Record<string, unknown> } {
  if (p.retries === undefined && !p.retryStatuses) return {};
  const codes = p.retryStatuses?.length
    ? { svr_resp_code: { ranges: p.retryStatuses.map((s) => ({ begin: s, end: s })) } }
    : {};
  return {
    server_reselect:
      p.retries === 0
        ? { enabled: false, ...codes }
        : { enabled: true, ...(p.retries !== undefined ? { num_retries: p.retries } : {}), ...codes },
  };
}

/**
 * A route's statuses, from the pool's own svr_resp_code (ranges of one status each, in order); a
 * range of several or a code block (set by hand) is not ours: none read, so the pool is written
 * again.
 */
function retryStatusesRead(o: Record<string, unknown>): { retryStatuses?: number[] } {
  const code = (o.server_reselect as { svr_resp_code?: { ranges?: unknown; resp_code_block?: unknown } })
    ?.svr_resp_code;
  if (!code || (Array.isArray(code.resp_code_block) && code.resp_code_block.length > 0)) return {};
  const ranges = Array.isArray(code.ranges) ? (code.ranges as { begin?: unknown; end?: unknown }[]) : [];
  const statuses = ranges.map((r) => (r.begin === r.end && typeof r.begin === 'number' ? r.begin : NaN));
  if (statuses.length === 0 || statuses.some((s) => Number.isNaN(s))) return {};
  return { retryStatuses: statuses };
}

/** A pool's retries, from its marker where its server_reselect says the same (else: none, rewritten). */
function retriesRead(o: Record<string, unknown>): { retries?: number } {
  const marked = markerValue(o, 'retries');
  if (marked === undefined || !/^[0-5]$/.test(marked)) return {};
  const n = Number(marked);
  const r = o.server_reselect as { enabled?: unknown; num_retries?: unknown } | undefined;
  const agrees = n === 0 ? r?.enabled !== true : r?.enabled === true && r.num_retries === n;
  return agrees ? { retries: n } : {};
}

export function renderPool(p: Pool, owner: string, at: AviPlacement): AviObject {
  return withSum('pool', {
    name: p.name,
    created_by: createdBy(owner),
    markers: markers(owner, p.service, {
      serviceport: p.servicePort,
      health: p.health,
      // Read back from here: Avi answers a default server_reselect on every pool.
      ...(p.retries !== undefined ? { retries: String(p.retries) } : {}),
    }),
    description: `npl-lb ${p.service}:${p.servicePort}`,
    cloud_ref: byName('cloud', at.cloud),
    vrf_ref: byName('vrfcontext', at.vrf),
    health_monitor_refs: [byName('healthmonitor', p.check ? checkMonitorName(p.name) : HEALTH[p.health])],
    ...balanceFields(p),
    ...gracefulDisable(at),
    ...poolTlsFields(p.name, p.backendTls, byName),
    servers: p.members.map((m) => ({
      ip: ipAddr(m.address),
      port: m.port,
      hostname: m.node,
      enabled: m.enabled,
      ...(m.pod ? { external_uuid: m.pod } : {}),
    })),
  });
}

/** Everything observe() needs to turn device objects back into the model. */
export interface Lookup {
  /** uuid -> object, for every type read. */
  byUuid: Map<string, Record<string, unknown>>;
  /** uuid -> name of the referenced system objects (health monitors, network profiles). */
  names: Map<string, string>;
}

export function parsePool(o: Record<string, unknown>, l: Lookup): Pool {
  const hmUuid = uuidOf((o.health_monitor_refs as unknown[] | undefined)?.[0]);
  const hm = l.names.get(hmUuid) ?? 'System-TCP';
  // The pool's own monitor (ours, of its name) is its check.
  const own = l.byUuid.get(hmUuid);
  const check = own && own.name === checkMonitorName(String(o.name)) ? parseHealthMonitor(own) : undefined;
  const marked = markerValue(o, 'health');
  const health =
    marked === 'tcp' || marked === 'udp' || marked === 'http'
      ? marked
      : hm === 'System-UDP'
        ? 'udp'
        : hm === 'System-HTTP'
          ? 'http'
          : 'tcp';
  const ns = markerValue(o, 'namespace');
  const svc = markerValue(o, 'service');
  return {
    name: String(o.name),
    protocol: health === 'udp' ? 'UDP' : 'TCP',
    health,
    ...(check ? { check } : {}),
    ...parseBalance(o, l),
    members: ((o.servers ?? []) as Record<string, unknown>[]).map((s) => ({
      address: String((s.ip as { addr?: string } | undefined)?.addr ?? ''),
      port: Number(s.port),
      node: String(s.hostname ?? ''),
      pod: String(s.external_uuid ?? ''),
      enabled: s.enabled !== false,
    })),
    service: ns && svc ? `${ns}/${svc}` : '',
    servicePort: markerValue(o, 'serviceport') ?? '',
    ...parsePoolTls(
      o,
      l.byUuid.get(uuidOf(o.pki_profile_ref)),
      o.ssl_key_and_certificate_ref ? l.byUuid.get(uuidOf(o.ssl_key_and_certificate_ref)) : undefined,
    ),
  };
}
