/**
 * What the simulated Avi Controller adds to what it is sent, as a real one does: defaults filled
 * in on create and returned on every read (a subset of the object model's defaults: enough that
 * a client comparing what it wrote with what it reads back sees a difference), and fields that
 * only exist from a given version, refused in an older object model. A request without
 * X-Avi-Version is served in the oldest object model.
 */
import { versionBelow } from '../../src/model/versions.ts';

type Json = Record<string, unknown>;

/** The object model a request without X-Avi-Version is served in. */
export const OLDEST_VERSION = '18.2.1';

const DEFAULTS: Record<string, Json> = {
  pool: {
    enabled: true,
    lb_algorithm: 'LB_ALGORITHM_LEAST_CONNECTIONS',
    default_server_port: 80,
    inline_health_monitor: true,
    capacity_estimation: false,
    connection_ramp_duration: 10,
  },
  virtualservice: { enabled: true, traffic_enabled: true, weight: 1, delay_fairness: false },
  vsvip: { east_west_placement: false },
  poolgroup: { min_servers: 0, implicit_priority_labels: false },
};
const SERVER_DEFAULTS: Json = { ratio: 1, enabled: true, resolve_server_by_dns: false };

/** Fields introduced after the oldest object model, by type, with the version that brought them. */
const INTRODUCED: Record<string, Record<string, string>> = {
  pool: { graceful_disable_timeout_sec: '31.2.1' },
};

/** Fields of this type from object models later than the bundled one (checked by version). */
export const laterFields = (type: string): string[] => Object.keys(INTRODUCED[type] ?? {});

/** Whether version a is older than b (dotted numbers). */
export const olderThan = versionBelow;

/** The allowed range of each later integer field (special values -1 and 0 included). */
const RANGES: Record<string, [number, number]> = { graceful_disable_timeout_sec: [-1, 432000] };

/** What is wrong with a field of a later object model: absent from this version's, or out of range. */
export function versionProblem(type: string, o: Json, version: string): string | undefined {
  for (const [field, since] of Object.entries(INTRODUCED[type] ?? {})) {
    if (!(field in o)) continue;
    if (olderThan(version, since))
      return `${field}: unknown field in the object model of ${version} (introduced in ${since})`;
    const [lo, hi] = RANGES[field] ?? [-Infinity, Infinity];
    const v = o[field];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
      return `${field}: must be an integer from ${lo} to ${hi}`;
  }
  return undefined;
}

/**
 * The object with the defaults a controller of this version fills in. Before 31.2.1 a pool's
 * graceful disable timeout defaults to 1 minute; from 31.2.1 it has no default (AKO sets it).
 */
export function withDefaults(type: string, o: Json, version: string): Json {
  const out: Json = { ...DEFAULTS[type], ...o };
  if (type === 'pool') {
    if (olderThan(version, '31.2.1') && out.graceful_disable_timeout === undefined)
      out.graceful_disable_timeout = 1;
    if (Array.isArray(out.servers))
      out.servers = (out.servers as Json[]).map((s) => ({ ...SERVER_DEFAULTS, ...s }));
  }
  return out;
}

/** The objects a controller ships with (System-*, Default-*), by type, seeded in every tenant's view. */
export const SYSTEM_OBJECTS: [string, Json][] = [
  ['cloud', { name: 'Default-Cloud' }],
  ['serviceenginegroup', { name: 'Default-Group' }],
  ['vrfcontext', { name: 'global' }],
  ['healthmonitor', { name: 'System-TCP', type: 'HEALTH_MONITOR_TCP' }],
  ['healthmonitor', { name: 'System-UDP', type: 'HEALTH_MONITOR_UDP' }],
  ['healthmonitor', { name: 'System-HTTP', type: 'HEALTH_MONITOR_HTTP' }],
  ['healthmonitor', { name: 'System-Ping', type: 'HEALTH_MONITOR_PING' }],
  ['applicationprofile', { name: 'System-L4-Application', type: 'APPLICATION_PROFILE_TYPE_L4' }],
  ['applicationprofile', { name: 'System-HTTP', type: 'APPLICATION_PROFILE_TYPE_HTTP' }],
  ['applicationprofile', { name: 'System-Secure-HTTP', type: 'APPLICATION_PROFILE_TYPE_HTTP' }],
  ['sslprofile', { name: 'System-Standard' }],
  ['protocolparser', { name: 'Default-TLS' }],
  ['networkprofile', { name: 'System-TCP-Proxy' }],
  ['networkprofile', { name: 'System-UDP-Fast-Path' }],
  [
    'applicationpersistenceprofile',
    { name: 'System-Persistence-Http-Cookie', persistence_type: 'PERSISTENCE_TYPE_HTTP_COOKIE' },
  ],
  [
    'applicationpersistenceprofile',
    { name: 'System-Persistence-Client-IP', persistence_type: 'PERSISTENCE_TYPE_CLIENT_IP_ADDRESS' },
  ],
];
