/**
 * The Avi objects npl-lb writes, AKO style: what they share, the pools, and their checks. Every
 * object carries `created_by: npl-lb-<cluster>` (VsVip, which has no such field, carries the
 * markers) and `markers` (clustername, namespace, service); names come from the model
 * (`<cluster>--...`). A pool server is one Pod at its node's NodePortLocal port with `hostname` =
 * the node. Virtual services and what they are made of are vs-objects.ts, HTTP policy sets
 * http-policy.ts, certificates certificates.ts, TLS passthrough passthrough.ts. Objects are checked
 * with zod (a subset of the Avi field model, with the ranges Avi enforces deeper down) and against
 * the field model itself before they are sent; a checksum kept on each object (its
 * `cloud_config_cksum`, or a marker where the type has none) says whether it needs writing.
 * Pure: no I/O.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import type { Pool } from '../../src/model/types.ts';
import { certificateSum } from './certificates.ts';
import { validateAviObject } from './object-models.ts';

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
   * network and subnet (`auto_allocate_ip`). Without it, VIPs come from the controller's vip.cidrs.
   */
  vipNetwork?: { name: string; cidr: string };
}

/** The pool's graceful disable timeout, in the field of the controller's version. */
export function gracefulDisable(at: AviPlacement): Record<string, number> {
  const sec = at.gracefulDisableSeconds ?? 60;
  const [major = 0, minor = 0] = (at.version ?? '22.1.3').split('.').map(Number);
  if (major > 31 || (major === 31 && minor >= 2)) return { graceful_disable_timeout_sec: sec };
  return { graceful_disable_timeout: sec <= 0 ? sec : Math.min(7200, Math.ceil(sec / 60)) };
}

export type AviObject = Record<string, unknown> & { name: string };
export type AviType =
  | 'pool'
  | 'poolgroup'
  | 'vsvip'
  | 'httppolicyset'
  | 'virtualservice'
  | 'sslkeyandcertificate'
  | 'vsdatascriptset';

export const createdBy = (owner: string): string => `npl-lb-${owner}`;
export const ownerOf = (createdByValue: unknown): string | undefined =>
  typeof createdByValue === 'string' ? createdByValue.replace(/^npl-lb-/, '') : undefined;

export const byName = (type: string, name: string): string => `/api/${type}?name=${encodeURIComponent(name)}`;
export const ipAddr = (addr: string) => ({ addr, type: isIP(addr) === 6 ? 'V6' : 'V4' });
export const markers = (owner: string, source: string, extra: Record<string, string> = {}) => {
  const [namespace = '', name = ''] = source.split('/');
  return [
    { key: 'clustername', values: [owner] },
    ...(namespace ? [{ key: 'namespace', values: [namespace] }] : []),
    ...(name ? [{ key: 'service', values: [name] }] : []),
    ...Object.entries(extra).map(([key, v]) => ({ key, values: [v] })),
  ];
};
export const markerValue = (o: Record<string, unknown>, key: string): string | undefined =>
  (o.markers as { key: string; values?: string[] }[] | undefined)?.find((m) => m.key === key)?.values?.[0];

// zod schemas of what we write: the field names are a subset of the Avi field model.
const rule = z
  .object({ name: z.string().min(1), index: z.number().int().min(1), enable: z.boolean() })
  .loose();
const ref = z.string().regex(/^\/api\/[a-z]+\?name=.+/);
const ip = z.object({
  addr: z.string().refine((a) => isIP(a) !== 0, 'must be an IP address'),
  type: z.enum(['V4', 'V6']),
});
const marker = z.object({ key: z.string().min(1), values: z.array(z.string()) });
const base = {
  name: z.string().min(1).max(255),
  created_by: z.string().min(1),
  markers: z.array(marker),
  cloud_config_cksum: z.string().optional(),
};
export const SCHEMAS = {
  pool: z
    .object({
      ...base,
      description: z.string(),
      cloud_ref: ref,
      vrf_ref: ref,
      health_monitor_refs: z.array(ref),
      // Minutes before 31.2.1 (-1 infinite, 0 immediate), seconds from 31.2.1.
      graceful_disable_timeout: z.number().int().min(-1).max(7200).optional(),
      graceful_disable_timeout_sec: z.number().int().min(-1).max(432000).optional(),
      servers: z.array(
        z
          .object({
            ip,
            port: z.number().int().min(1).max(65535),
            hostname: z.string(),
            enabled: z.boolean(),
            external_uuid: z.string().optional(),
          })
          .strict(),
      ),
    })
    .strict(),
  poolgroup: z
    .object({
      ...base,
      cloud_ref: ref,
      members: z.array(z.object({ pool_ref: ref, ratio: z.number().int().min(1).max(1000) }).strict()),
    })
    .strict(),
  vsvip: z
    .object({
      name: base.name,
      markers: base.markers,
      vsvip_cloud_config_cksum: z.string().optional(),
      cloud_ref: ref,
      vrf_context_ref: ref,
      vip: z
        .array(
          z.union([
            z.object({ vip_id: z.string(), ip_address: ip }).strict(),
            z
              .object({
                vip_id: z.string(),
                auto_allocate_ip: z.literal(true),
                ipam_network_subnet: z
                  .object({
                    network_ref: ref,
                    subnet: z.object({ ip_addr: ip, mask: z.number().int().min(0).max(32) }).strict(),
                  })
                  .strict(),
              })
              .strict(),
          ]),
        )
        .length(1),
    })
    .strict(),
  // Rules are checked against the Avi field model (fieldProblems) beside this outline.
  httppolicyset: z
    .object({
      ...base,
      description: z.string(),
      http_request_policy: z.object({ rules: z.array(rule) }).strict(),
      http_response_policy: z
        .object({ rules: z.array(rule) })
        .strict()
        .optional(),
    })
    .strict(),
  virtualservice: z
    .object({
      ...base,
      description: z.string(),
      cloud_ref: ref,
      se_group_ref: ref,
      vrf_context_ref: ref,
      vsvip_ref: ref.optional(),
      services: z
        .array(
          z.object({ port: z.number().int().min(1).max(65535), enable_ssl: z.boolean().optional() }).strict(),
        )
        .min(1)
        .optional(),
      type: z.enum(['VS_TYPE_NORMAL', 'VS_TYPE_VH_PARENT', 'VS_TYPE_VH_CHILD']).optional(),
      vh_parent_vs_ref: ref.optional(),
      vh_domain_name: z.array(z.string().min(1)).min(1).optional(),
      ssl_key_and_certificate_refs: z.array(ref).min(1).max(1).optional(),
      ssl_profile_ref: ref.optional(),
      vs_datascripts: z
        .array(z.object({ index: z.number().int(), vs_datascript_set_ref: ref }).strict())
        .optional(),
      application_profile_ref: ref,
      network_profile_ref: ref,
      pool_ref: ref.optional(),
      pool_group_ref: ref.optional(),
      http_policies: z
        .array(z.object({ index: z.number().int(), http_policy_set_ref: ref }).strict())
        .optional(),
    })
    .strict(),
  sslkeyandcertificate: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      type: z.literal('SSL_CERTIFICATE_TYPE_VIRTUALSERVICE'),
      format: z.literal('SSL_PEM'),
      certificate: z.object({ certificate: z.string().startsWith('-----BEGIN CERTIFICATE-----') }).strict(),
      key: z.string().min(1),
    })
    .strict(),
  vsdatascriptset: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      description: z.string(),
      datascript: z
        .array(
          z
            .object({
              evt: z.enum(['VS_DATASCRIPT_EVT_HTTP_REQ', 'VS_DATASCRIPT_EVT_L4_REQUEST']),
              script: z.string(),
            })
            .strict(),
        )
        .length(1),
      protocol_parser_refs: z.array(ref).optional(),
      pool_group_refs: z.array(ref).optional(),
    })
    .strict(),
} as const satisfies Record<AviType, z.ZodType>;

/** The checksum of an object as we render it (without the checksum fields themselves). */
export function checksum(o: Record<string, unknown>): string {
  const { cloud_config_cksum: _a, vsvip_cloud_config_cksum: _b, ...rest } = o;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16);
}

/** Types without a checksum field carry ours in a marker. */
export const SUM_MARKER = 'npl-lb-cksum';

/** The object with its checksum: in its checksum field, or (types without one) in a marker. */
export const withSum = (type: AviType, o: AviObject): AviObject =>
  type === 'vsdatascriptset'
    ? { ...o, markers: [...((o.markers as unknown[]) ?? []), { key: SUM_MARKER, values: [checksum(o)] }] }
    : { ...o, [type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum']: checksum(o) };

/** The checksum an object carries, as withSum put it there ('' when none). */
export function storedSum(type: AviType, o: Record<string, unknown>): string {
  if (type === 'sslkeyandcertificate') return certificateSum(o);
  if (type === 'vsdatascriptset') return markerValue(o, SUM_MARKER) ?? '';
  return String(o[type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum'] ?? '');
}

/**
 * The member check: a TCP connect (UDP pools: System-UDP). An HTTP pool is not checked with
 * System-HTTP's GET / (an API that answers 404 there is healthy; readiness-probe checks are not
 * carried on Avi yet: the capabilities say so). The pool's traffic kind is its `health` marker.
 */
const HEALTH = { tcp: 'System-TCP', udp: 'System-UDP', http: 'System-TCP' } as const;

export function renderPool(p: Pool, owner: string, at: AviPlacement): AviObject {
  return withSum('pool', {
    name: p.name,
    created_by: createdBy(owner),
    markers: markers(owner, p.service, { serviceport: p.servicePort, health: p.health }),
    description: `npl-lb ${p.service}:${p.servicePort}`,
    cloud_ref: byName('cloud', at.cloud),
    vrf_ref: byName('vrfcontext', at.vrf),
    health_monitor_refs: [byName('healthmonitor', HEALTH[p.health])],
    ...gracefulDisable(at),
    servers: p.members.map((m) => ({
      ip: ipAddr(m.address),
      port: m.port,
      hostname: m.node,
      enabled: m.enabled,
      ...(m.pod ? { external_uuid: m.pod } : {}),
    })),
  });
}

/** Problems with an object before it is sent (field and reason), none when it is valid. */
export function invalid(type: AviType, o: AviObject): string[] {
  const r = SCHEMAS[type].safeParse(o);
  const outline = r.success
    ? []
    : r.error.issues.map((i) => `${type} ${o.name}: ${i.path.join('.')}: ${i.message}`);
  // Policy rules and the rest held to the Avi field model (names and JSON types) as the controller does.
  const model = MODEL_FOR[type];
  const fields = model ? validateAviObject(model, o).map((p) => `${type} ${o.name}: ${p}`) : [];
  return [...outline, ...fields];
}

const MODEL_FOR: Partial<Record<AviType, string>> = {
  httppolicyset: 'HTTPPolicySet',
  virtualservice: 'VirtualService',
  sslkeyandcertificate: 'SSLKeyAndCertificate',
};

/** Everything observe() needs to turn device objects back into the model. */
export interface Lookup {
  /** uuid -> object, for every type read. */
  byUuid: Map<string, Record<string, unknown>>;
  /** uuid -> name of the referenced system objects (health monitors, network profiles). */
  names: Map<string, string>;
}

export const uuidOf = (refValue: unknown): string =>
  String(refValue ?? '')
    .replace(/[?#].*$/, '')
    .split('/')
    .pop() ?? '';

export function parsePool(o: Record<string, unknown>, l: Lookup): Pool {
  const hm = l.names.get(uuidOf((o.health_monitor_refs as unknown[] | undefined)?.[0])) ?? 'System-TCP';
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
    members: ((o.servers ?? []) as Record<string, unknown>[]).map((s) => ({
      address: String((s.ip as { addr?: string } | undefined)?.addr ?? ''),
      port: Number(s.port),
      node: String(s.hostname ?? ''),
      pod: String(s.external_uuid ?? ''),
      enabled: s.enabled !== false,
    })),
    service: ns && svc ? `${ns}/${svc}` : '',
    servicePort: markerValue(o, 'serviceport') ?? '',
  };
}

/** Whether an object carries our owner mark (created_by, or for a VsVip its clustername marker). */
export function ownedBy(type: AviType, o: Record<string, unknown>, owner: string): boolean {
  return type === 'vsvip' ? markerValue(o, 'clustername') === owner : o.created_by === createdBy(owner);
}
