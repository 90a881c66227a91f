/**
 * The model <-> Avi objects mapping, AKO style. Every object carries `created_by: npl-lb-<cluster>`
 * (VsVip, which has no such field, carries the markers) and `markers` (clustername, namespace,
 * service); names come from the model (`<cluster>--...`). A pool server is one Pod at its node's
 * NodePortLocal port with `hostname` = the node. An L4 virtual service is a vsvip and a
 * virtualservice with the System L4 application profile; the shared L7 one per IngressClass is a
 * vsvip, one poolgroup per backend pool, an httppolicyset switching host and path to poolgroups,
 * and a virtualservice with System-HTTP. Objects are checked with zod (a subset of the Avi field
 * model, with the ranges Avi enforces deeper down) before they are sent; a checksum kept on each
 * object (`cloud_config_cksum`) says whether it needs writing. Pure: no I/O.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { limitName } from '../../src/model/names.ts';
import type { HttpRoute, L7VirtualService, PathType, Pool, VirtualService } from '../../src/model/types.ts';

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
}

/** The pool's graceful disable timeout, in the field of the controller's version. */
export function gracefulDisable(at: AviPlacement): Record<string, number> {
  const sec = at.gracefulDisableSeconds ?? 60;
  const [major = 0, minor = 0] = (at.version ?? '22.1.3').split('.').map(Number);
  if (major > 31 || (major === 31 && minor >= 2)) return { graceful_disable_timeout_sec: sec };
  return { graceful_disable_timeout: sec <= 0 ? sec : Math.min(7200, Math.ceil(sec / 60)) };
}

export type AviObject = Record<string, unknown> & { name: string };
export type AviType = 'pool' | 'poolgroup' | 'vsvip' | 'httppolicyset' | 'virtualservice';

export const createdBy = (owner: string): string => `npl-lb-${owner}`;
export const ownerOf = (createdByValue: unknown): string | undefined =>
  typeof createdByValue === 'string' ? createdByValue.replace(/^npl-lb-/, '') : undefined;

const byName = (type: string, name: string): string => `/api/${type}?name=${encodeURIComponent(name)}`;
const ipAddr = (addr: string) => ({ addr, type: isIP(addr) === 6 ? 'V6' : 'V4' });
const markers = (owner: string, source: string, extra: Record<string, string> = {}) => {
  const [namespace = '', name = ''] = source.split('/');
  return [
    { key: 'clustername', values: [owner] },
    ...(namespace ? [{ key: 'namespace', values: [namespace] }] : []),
    ...(name ? [{ key: 'service', values: [name] }] : []),
    ...Object.entries(extra).map(([key, v]) => ({ key, values: [v] })),
  ];
};
const markerValue = (o: Record<string, unknown>, key: string): string | undefined =>
  (o.markers as { key: string; values?: string[] }[] | undefined)?.find((m) => m.key === key)?.values?.[0];

// zod schemas of what we write: the field names are a subset of the Avi field model.
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
      members: z.array(z.object({ pool_ref: ref, ratio: z.number().int() }).strict()),
    })
    .strict(),
  vsvip: z
    .object({
      name: base.name,
      markers: base.markers,
      vsvip_cloud_config_cksum: z.string().optional(),
      cloud_ref: ref,
      vrf_context_ref: ref,
      vip: z.array(z.object({ vip_id: z.string(), ip_address: ip }).strict()).length(1),
    })
    .strict(),
  httppolicyset: z
    .object({
      ...base,
      description: z.string(),
      http_request_policy: z
        .object({
          rules: z.array(
            z
              .object({
                name: z.string().min(1),
                index: z.number().int().min(1),
                enable: z.boolean(),
                match: z
                  .object({
                    host_hdr: z
                      .object({ match_criteria: z.literal('HDR_EQUALS'), value: z.array(z.string().min(1)) })
                      .strict()
                      .optional(),
                    path: z
                      .object({
                        match_criteria: z.enum(['BEGINS_WITH', 'EQUALS']),
                        match_str: z.array(z.string().startsWith('/')),
                      })
                      .strict(),
                  })
                  .strict(),
                switching_action: z
                  .object({ action: z.literal('HTTP_SWITCHING_SELECT_POOLGROUP'), pool_group_ref: ref })
                  .strict(),
              })
              .strict(),
          ),
        })
        .strict(),
    })
    .strict(),
  virtualservice: z
    .object({
      ...base,
      description: z.string(),
      cloud_ref: ref,
      se_group_ref: ref,
      vrf_context_ref: ref,
      vsvip_ref: ref,
      services: z.array(z.object({ port: z.number().int().min(1).max(65535) }).strict()).min(1),
      application_profile_ref: ref,
      network_profile_ref: ref,
      pool_ref: ref.optional(),
      pool_group_ref: ref.optional(),
      http_policies: z
        .array(z.object({ index: z.number().int(), http_policy_set_ref: ref }).strict())
        .optional(),
    })
    .strict(),
} as const satisfies Record<AviType, z.ZodType>;

/** The checksum of an object as we render it (without the checksum fields themselves). */
export function checksum(o: Record<string, unknown>): string {
  const { cloud_config_cksum: _a, vsvip_cloud_config_cksum: _b, ...rest } = o;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16);
}

const withSum = (type: AviType, o: AviObject): AviObject => ({
  ...o,
  [type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum']: checksum(o),
});

const HEALTH = { tcp: 'System-TCP', udp: 'System-UDP', http: 'System-HTTP' } as const;

export function renderPool(p: Pool, owner: string, at: AviPlacement): AviObject {
  return withSum('pool', {
    name: p.name,
    created_by: createdBy(owner),
    markers: markers(owner, p.service, { serviceport: p.servicePort }),
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

export const poolGroupName = (vs: string, pool: string): string => limitName(`${vs}--${pool}`, 200);

/** One rule name carries what Avi has no field for: the path type and the Ingress it came from. */
const ruleName = (i: number, r: HttpRoute): string => `${i}|${r.pathType}|${r.source}`;

/** The objects of one virtual service, children first. */
export function renderVirtualService(
  vs: VirtualService,
  owner: string,
  at: AviPlacement,
): { type: AviType; object: AviObject }[] {
  const out: { type: AviType; object: AviObject }[] = [];
  const source = vs.kind === 'l4' ? vs.source : '';
  const extra: Record<string, string> = vs.kind === 'l7' ? { ingressclass: vs.ingressClass } : {};
  const common = { created_by: createdBy(owner), markers: markers(owner, source, extra) };
  const pgs =
    vs.kind === 'l7'
      ? [...new Set([...vs.routes.map((r) => r.pool), ...(vs.defaultPool ? [vs.defaultPool] : [])])].sort()
      : [];
  for (const pool of pgs) {
    out.push({
      type: 'poolgroup',
      object: withSum('poolgroup', {
        name: poolGroupName(vs.name, pool),
        ...common,
        cloud_ref: byName('cloud', at.cloud),
        members: [{ pool_ref: byName('pool', pool), ratio: 1 }],
      }),
    });
  }
  out.push({
    type: 'vsvip',
    object: withSum('vsvip', {
      name: vs.name,
      markers: common.markers,
      cloud_ref: byName('cloud', at.cloud),
      vrf_context_ref: byName('vrfcontext', at.vrf),
      vip: [{ vip_id: '0', ip_address: ipAddr(vs.vip) }],
    }),
  });
  if (vs.kind === 'l7') {
    out.push({
      type: 'httppolicyset',
      object: withSum('httppolicyset', {
        name: vs.name,
        ...common,
        description: `npl-lb routes of IngressClass ${vs.ingressClass}`,
        http_request_policy: {
          rules: sortRoutes(vs.routes).map((r, i) => ({
            name: ruleName(i, r),
            index: i + 1,
            enable: true,
            match: {
              ...(r.host ? { host_hdr: { match_criteria: 'HDR_EQUALS', value: [r.host] } } : {}),
              path: {
                match_criteria: r.pathType === 'Exact' ? 'EQUALS' : 'BEGINS_WITH',
                match_str: [r.path],
              },
            },
            switching_action: {
              action: 'HTTP_SWITCHING_SELECT_POOLGROUP',
              pool_group_ref: byName('poolgroup', poolGroupName(vs.name, r.pool)),
            },
          })),
        },
      }),
    });
  }
  out.push({
    type: 'virtualservice',
    object: withSum('virtualservice', {
      name: vs.name,
      ...common,
      description: vs.kind === 'l4' ? `npl-lb ${vs.source}` : `npl-lb IngressClass ${vs.ingressClass}`,
      cloud_ref: byName('cloud', at.cloud),
      se_group_ref: byName('serviceenginegroup', at.seGroup),
      vrf_context_ref: byName('vrfcontext', at.vrf),
      vsvip_ref: byName('vsvip', vs.name),
      services: [{ port: vs.port }],
      application_profile_ref: byName(
        'applicationprofile',
        vs.kind === 'l4' ? 'System-L4-Application' : 'System-HTTP',
      ),
      network_profile_ref: byName(
        'networkprofile',
        vs.kind === 'l4' && vs.protocol === 'UDP' ? 'System-UDP-Fast-Path' : 'System-TCP-Proxy',
      ),
      ...(vs.kind === 'l4' ? { pool_ref: byName('pool', vs.pool) } : {}),
      ...(vs.kind === 'l7' && vs.defaultPool
        ? { pool_group_ref: byName('poolgroup', poolGroupName(vs.name, vs.defaultPool)) }
        : {}),
      ...(vs.kind === 'l7'
        ? { http_policies: [{ index: 11, http_policy_set_ref: byName('httppolicyset', vs.name) }] }
        : {}),
    }),
  });
  return out;
}

/** First match wins on Avi: exact paths, then longer prefixes; named hosts before the catch-all. */
function sortRoutes(routes: HttpRoute[]): HttpRoute[] {
  const rank = (r: HttpRoute) => [r.host === '' ? 1 : 0, r.pathType === 'Exact' ? 0 : 1, -r.path.length];
  return [...routes].sort((a, b) => {
    const [x, y] = [rank(a), rank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return `${a.host}${a.path}` < `${b.host}${b.path}` ? -1 : 1;
  });
}

/** Problems with an object before it is sent (field and reason), none when it is valid. */
export function invalid(type: AviType, o: AviObject): string[] {
  const r = SCHEMAS[type].safeParse(o);
  return r.success ? [] : r.error.issues.map((i) => `${type} ${o.name}: ${i.path.join('.')}: ${i.message}`);
}

/** Everything observe() needs to turn device objects back into the model. */
export interface Lookup {
  /** uuid -> object, for every type read. */
  byUuid: Map<string, Record<string, unknown>>;
  /** uuid -> name of the referenced system objects (health monitors, network profiles). */
  names: Map<string, string>;
}

const uuidOf = (refValue: unknown): string =>
  String(refValue ?? '')
    .replace(/[?#].*$/, '')
    .split('/')
    .pop() ?? '';

export function parsePool(o: Record<string, unknown>, l: Lookup): Pool {
  const hm = l.names.get(uuidOf((o.health_monitor_refs as unknown[] | undefined)?.[0])) ?? 'System-TCP';
  const health = hm === 'System-UDP' ? 'udp' : hm === 'System-HTTP' ? 'http' : 'tcp';
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

const poolOfGroup = (pgRef: unknown, l: Lookup): string | undefined => {
  const pg = l.byUuid.get(uuidOf(pgRef));
  const poolRef = (pg?.members as { pool_ref?: string }[] | undefined)?.[0]?.pool_ref;
  const pool = poolRef ? l.byUuid.get(uuidOf(poolRef)) : undefined;
  return pool ? String(pool.name) : undefined;
};

export function parseVirtualService(o: Record<string, unknown>, l: Lookup): VirtualService {
  const vip = String(
    (l.byUuid.get(uuidOf(o.vsvip_ref))?.vip as { ip_address?: { addr?: string } }[] | undefined)?.[0]
      ?.ip_address?.addr ?? '',
  );
  const port = Number((o.services as { port?: number }[] | undefined)?.[0]?.port ?? 0);
  const policies = o.http_policies as { http_policy_set_ref?: string }[] | undefined;
  if (!policies) {
    const ns = markerValue(o, 'namespace');
    const svc = markerValue(o, 'service');
    return {
      kind: 'l4',
      name: String(o.name),
      vip,
      port,
      protocol: l.names.get(uuidOf(o.network_profile_ref)) === 'System-UDP-Fast-Path' ? 'UDP' : 'TCP',
      pool: String(l.byUuid.get(uuidOf(o.pool_ref))?.name ?? ''),
      source: ns && svc ? `${ns}/${svc}` : '',
    };
  }
  const set = l.byUuid.get(uuidOf(policies[0]?.http_policy_set_ref));
  const rules = ((set?.http_request_policy as { rules?: Record<string, unknown>[] } | undefined)?.rules ??
    []) as {
    name?: string;
    match?: { host_hdr?: { value?: string[] }; path?: { match_criteria?: string; match_str?: string[] } };
    switching_action?: { pool_group_ref?: string };
  }[];
  const routes: HttpRoute[] = [];
  for (const r of rules) {
    const pool = poolOfGroup(r.switching_action?.pool_group_ref, l);
    if (!pool) continue;
    const [, pathType, ...source] = String(r.name ?? '').split('|');
    routes.push({
      host: r.match?.host_hdr?.value?.[0] ?? '',
      path: r.match?.path?.match_str?.[0] ?? '/',
      pathType: (['Prefix', 'Exact', 'ImplementationSpecific'].includes(pathType ?? '')
        ? pathType
        : r.match?.path?.match_criteria === 'EQUALS'
          ? 'Exact'
          : 'Prefix') as PathType,
      pool,
      source: source.join('|'),
    });
  }
  const l7: L7VirtualService = {
    kind: 'l7',
    name: String(o.name),
    vip,
    port,
    ingressClass: markerValue(o, 'ingressclass') ?? '',
    routes,
    defaultPool: o.pool_group_ref ? poolOfGroup(o.pool_group_ref, l) : undefined,
  };
  return l7;
}

/** Whether an object carries our owner mark (created_by, or for a VsVip its clustername marker). */
export function ownedBy(type: AviType, o: Record<string, unknown>, owner: string): boolean {
  return type === 'vsvip' ? markerValue(o, 'clustername') === owner : o.created_by === createdBy(owner);
}
