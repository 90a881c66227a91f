/**
 * A model virtual service as Avi objects, and back. L4: a VsVip and a virtualservice with the
 * System L4 application profile. L7: a VsVip, a pool group per pool it switches to and per weighted
 * rule, an HTTP policy set (http-policy.ts; the model's routes kept as JSON in its description, so
 * observe() reads back exactly what was applied), the DataScript of unresolved shares where a rule
 * has one, and the virtualservice. HTTPS terminates TLS on an SNI parent virtual service holding
 * the default certificate, with one SNI child per other certificate (its server names, its
 * certificate, the parent's policy set), the way AKO shards secure hosts: the routes are the same
 * whatever the name, only the certificate follows SNI. Children first on create, last on delete.
 * Pure: no I/O.
 */
import { applicationProfileRef, clientValidationObjects, clientValidationOf } from './client-validation.ts';
import { seGroupOf } from './parameters.ts';
import type {
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  PathType,
  SniRoute,
  VirtualService,
} from '../../src/model/types.ts';
import { passthroughScript, sniGroupName } from './passthrough.ts';
import { parseCertificate } from './certificates.ts';
import { limitName } from '../../src/model/names.ts';
import { autoVip } from '../../src/model/vips.ts';
import { renderVsVip, type VipEntry, vsVipName } from './vsvip.ts';
import {
  type AviObject,
  type AviPlacement,
  type AviType,
  byName,
  createdBy,
  type Lookup,
  markers,
  markerValue,
  uuidOf,
  withSum,
} from './objects.ts';
import { poolGroupName, renderHttpPolicy, SHARE_SCRIPT } from './http-policy.ts';

/** An SNI child of an HTTPS virtual service, for its certificate at `index` (1: the first after the default). */
export const sniChildName = (vs: string, cert: string): string => limitName(`${vs}--sni-${cert}`, 255);

export interface RenderedVs {
  /** Objects written before the virtual service (VsVip, pool groups, DataScript set, policy set). */
  children: { type: AviType; object: AviObject }[];
  /** The virtual service, then its SNI children. */
  services: AviObject[];
}

/** What the renderer needs of certificates: the server names of one (for its SNI child). */
export type SniNames = (certificate: string) => string[];

const DESCRIPTION = 'npl-lb routes of IngressClass';

/** The SE group a virtual service was placed in by its class (its marker), as the model has it. */
function placementRead(o: Record<string, unknown>): { placement?: { serviceEngineGroup: string } } {
  const seGroup = markerValue(o, 'segroup');
  return seGroup ? { placement: { serviceEngineGroup: seGroup } } : {};
}

/** What every object of one virtual service carries, and where its virtual services are placed. */
interface VsCommon {
  common: { created_by: string; markers: ReturnType<typeof markers> };
  placement: { cloud_ref: string; se_group_ref: string; vrf_context_ref: string };
}

/** A pool group of ours (weighted pools), in the virtual service's cloud. */
const poolGroup = (name: string, members: { pool: string; ratio: number }[], c: VsCommon): AviObject =>
  withSum('poolgroup', {
    name,
    ...c.common,
    cloud_ref: c.placement.cloud_ref,
    members: members.map((m) => ({ pool_ref: byName('pool', m.pool), ratio: m.ratio })),
  });

export function renderVirtualService(
  vs: VirtualService,
  owner: string,
  at: AviPlacement,
  sniNames: SniNames = () => [],
): RenderedVs {
  const source = vs.kind === 'l4' ? vs.source : '';
  // Its class's SE group, kept in a marker too so it reads back as the model says it.
  const seGroup = seGroupOf(vs.placement);
  const extra: Record<string, string> = {
    ...(vs.kind === 'l7' ? { ingressclass: vs.ingressClass } : {}),
    ...(seGroup ? { segroup: seGroup } : {}),
  };
  const c: VsCommon = {
    common: { created_by: createdBy(owner), markers: markers(owner, source, extra) },
    placement: {
      cloud_ref: byName('cloud', at.cloud),
      se_group_ref: byName('serviceenginegroup', seGroup ?? at.seGroup),
      vrf_context_ref: byName('vrfcontext', at.vrf),
    },
  };
  return vs.kind === 'l4' ? renderL4(vs, owner, at, c) : renderL7(vs, owner, at, c, sniNames);
}

/** An L4 virtual service: its VsVip, and for TLS passthrough a pool group per server name and the DataScript. */
function renderL4(vs: L4VirtualService, owner: string, at: AviPlacement, c: VsCommon): RenderedVs {
  const children: RenderedVs['children'] = [{ type: 'vsvip', object: renderVsVip(vs, owner, at) }];
  // TLS passthrough: a pool group per server name, chosen by the L4 DataScript (passthrough.ts).
  const sni = vs.sni ?? [];
  const hosts = [...new Set(sni.map((r) => r.host))].sort();
  for (const host of hosts) {
    const route = sni.find((r) => r.host === host)!;
    children.push({
      type: 'poolgroup',
      object: poolGroup(sniGroupName(vs.name, host), [{ pool: route.pool, ratio: 1 }], c),
    });
  }
  // SNI routing, even with no route left (every connection closed by the script: fail closed).
  const routed = vs.sni !== undefined;
  if (routed) {
    children.push({
      type: 'vsdatascriptset',
      object: withSum('vsdatascriptset', {
        name: vs.name,
        ...c.common,
        description: `npl-lb TLS passthrough of ${vs.source}\n${JSON.stringify(sni)}`,
        datascript: [{ evt: 'VS_DATASCRIPT_EVT_L4_REQUEST', script: passthroughScript(vs) }],
        protocol_parser_refs: [byName('protocolparser', 'Default-TLS')],
        pool_group_refs: hosts.map((h) => byName('poolgroup', sniGroupName(vs.name, h))),
      }),
    });
  }
  const service = withSum('virtualservice', {
    name: vs.name,
    ...c.common,
    description: `npl-lb ${vs.source}`,
    ...c.placement,
    vsvip_ref: byName('vsvip', vsVipName(vs, owner)),
    services: [{ port: vs.port }],
    application_profile_ref: byName('applicationprofile', 'System-L4-Application'),
    network_profile_ref: byName(
      'networkprofile',
      vs.protocol === 'UDP' ? 'System-UDP-Fast-Path' : 'System-TCP-Proxy',
    ),
    ...(routed
      ? { vs_datascripts: [{ index: 1, vs_datascript_set_ref: byName('vsdatascriptset', vs.name) }] }
      : { pool_ref: byName('pool', vs.pool) }),
  });
  return { children, services: [service] };
}

/**
 * An L7 virtual service: pool groups (one per pool, one per weighted split), its VsVip, the share
 * DataScript where a split names a backend that does not resolve, its policy set; then the parent
 * (with its first certificate) and an SNI child per further certificate.
 */
function renderL7(
  vs: L7VirtualService,
  owner: string,
  at: AviPlacement,
  c: VsCommon,
  sniNames: SniNames,
): RenderedVs {
  const p = renderHttpPolicy(vs);
  const children: RenderedVs['children'] = [
    ...p.pools.map((pool) => ({
      type: 'poolgroup' as const,
      object: poolGroup(poolGroupName(vs.name, pool), [{ pool, ratio: 1 }], c),
    })),
    ...p.splitGroups.map((g) => ({ type: 'poolgroup' as const, object: poolGroup(g.name, g.members, c) })),
    { type: 'vsvip', object: renderVsVip(vs, owner, at) },
  ];
  if (p.needsScript) {
    children.push({
      type: 'vsdatascriptset',
      object: withSum('vsdatascriptset', {
        name: vs.name,
        ...c.common,
        description: 'npl-lb: 500 for the share of a backend that does not resolve',
        datascript: [{ evt: 'VS_DATASCRIPT_EVT_HTTP_REQ', script: SHARE_SCRIPT }],
      }),
    });
  }
  children.push({
    type: 'httppolicyset',
    object: withSum('httppolicyset', {
      name: vs.name,
      ...c.common,
      description: `${DESCRIPTION} ${vs.ingressClass}\n${JSON.stringify(vs.routes)}`,
      http_request_policy: { rules: p.request },
      ...(p.response.length ? { http_response_policy: { rules: p.response } } : {}),
    }),
  });
  const https = vs.protocol === 'HTTPS';
  const certs = vs.certificates ?? [];
  // Client certificates: a PKI and an application profile of the service's own (client-validation.ts).
  children.push(...clientValidationObjects(vs, owner));
  const l7 = {
    ...c.common,
    description: `npl-lb IngressClass ${vs.ingressClass}`,
    ...c.placement,
    application_profile_ref: applicationProfileRef(vs),
    network_profile_ref: byName('networkprofile', 'System-TCP-Proxy'),
    ...(vs.defaultPool
      ? { pool_group_ref: byName('poolgroup', poolGroupName(vs.name, vs.defaultPool)) }
      : {}),
    http_policies: [{ index: 11, http_policy_set_ref: byName('httppolicyset', vs.name) }],
    ...(p.needsScript
      ? { vs_datascripts: [{ index: 1, vs_datascript_set_ref: byName('vsdatascriptset', vs.name) }] }
      : {}),
  };
  const parent = withSum('virtualservice', {
    name: vs.name,
    ...l7,
    vsvip_ref: byName('vsvip', vsVipName(vs, owner)),
    // HTTP/2 from clients on the port (a gRPC route is attached): ALPN with SSL, prior knowledge without.
    services: [
      { port: vs.port, ...(https ? { enable_ssl: true } : {}), ...(vs.http2 ? { enable_http2: true } : {}) },
    ],
    ...(https
      ? {
          type: 'VS_TYPE_VH_PARENT',
          ssl_profile_ref: byName('sslprofile', 'System-Standard'),
          ...(certs[0] ? { ssl_key_and_certificate_refs: [byName('sslkeyandcertificate', certs[0])] } : {}),
        }
      : {}),
  });
  const sni = https ? sniChildren(vs.name, certs.slice(1), l7, c, sniNames) : [];
  return { children, services: [parent, ...sni] };
}

/** An HTTPS service's SNI children, one per certificate past its first, sharing its L7 fields. */
function sniChildren(
  parent: string,
  certs: string[],
  l7: Record<string, unknown>,
  c: VsCommon,
  sniNames: SniNames,
): AviObject[] {
  return certs.map((cert, i) =>
    withSum('virtualservice', {
      name: sniChildName(parent, cert),
      ...l7,
      markers: [...c.common.markers, { key: 'sniorder', values: [String(i + 1)] }],
      type: 'VS_TYPE_VH_CHILD',
      vh_parent_vs_ref: byName('virtualservice', parent),
      vh_domain_name: sniNames(cert).length ? sniNames(cert) : [cert],
      ssl_key_and_certificate_refs: [byName('sslkeyandcertificate', cert)],
    }),
  );
}

/** Whether a virtual service object is an SNI child (its parent carries it in the model). */
export const isSniChild = (o: Record<string, unknown>): boolean => o.type === 'VS_TYPE_VH_CHILD';

const poolOfGroup = (pgRef: unknown, l: Lookup): string | undefined => {
  const pg = l.byUuid.get(uuidOf(pgRef));
  const poolRef = (pg?.members as { pool_ref?: string }[] | undefined)?.[0]?.pool_ref;
  const pool = poolRef ? l.byUuid.get(uuidOf(poolRef)) : undefined;
  return pool ? String(pool.name) : undefined;
};

/** The SNI routes of a passthrough DataScript set, as applied (its description). */
function sniOf(set: Record<string, unknown>): SniRoute[] | undefined {
  const description = String(set.description ?? '');
  const nl = description.indexOf('\n');
  if (!description.startsWith('npl-lb TLS passthrough') || nl < 0) return undefined;
  try {
    const routes = JSON.parse(description.slice(nl + 1)) as unknown;
    return Array.isArray(routes) ? (routes as SniRoute[]) : undefined;
  } catch {
    return undefined;
  }
}

/** The routes of a policy set: as applied (its description), else read from its rules (older npl-lb). */
function routesOf(set: Record<string, unknown> | undefined, l: Lookup): HttpRoute[] {
  const description = String(set?.description ?? '');
  const nl = description.indexOf('\n');
  if (nl >= 0) {
    try {
      const routes = JSON.parse(description.slice(nl + 1)) as unknown;
      return Array.isArray(routes) ? (routes as HttpRoute[]) : [];
    } catch {
      return [];
    }
  }
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
  return routes;
}

/**
 * A virtual service back in the model; `children` are our SNI children of it (any order), whose
 * certificates follow the parent's default in their `sniorder`.
 */
export function parseVirtualService(
  o: Record<string, unknown>,
  l: Lookup,
  children: Record<string, unknown>[] = [],
): VirtualService {
  const vsvip = l.byUuid.get(uuidOf(o.vsvip_ref));
  const entry = (vsvip?.vip as VipEntry[] | undefined)?.[0];
  const group = vsvip ? markerValue(vsvip, 'vipgroup') : undefined;
  // An allocated VIP reads back as the model asked for it: the group, whatever address Avi gave.
  const vip =
    entry?.auto_allocate_ip && group
      ? autoVip(group)
      : String(entry?.ip_address?.addr ?? entry?.ip6_address?.addr ?? '');
  const service = (
    o.services as { port?: number; enable_ssl?: boolean; enable_http2?: boolean }[] | undefined
  )?.[0];
  const port = Number(service?.port ?? 0);
  const policies = o.http_policies as { http_policy_set_ref?: string }[] | undefined;
  if (!policies) {
    const ns = markerValue(o, 'namespace');
    const svc = markerValue(o, 'service');
    const script = l.byUuid.get(
      uuidOf(
        (o.vs_datascripts as { vs_datascript_set_ref?: string }[] | undefined)?.[0]?.vs_datascript_set_ref,
      ),
    );
    const sni = script ? sniOf(script) : undefined;
    return {
      kind: 'l4',
      name: String(o.name),
      vip,
      port,
      protocol: l.names.get(uuidOf(o.network_profile_ref)) === 'System-UDP-Fast-Path' ? 'UDP' : 'TCP',
      pool: String(l.byUuid.get(uuidOf(o.pool_ref))?.name ?? ''),
      source: ns && svc ? `${ns}/${svc}` : '',
      ...(sni ? { sni } : {}),
      ...placementRead(o),
    };
  }
  const set = l.byUuid.get(uuidOf(policies[0]?.http_policy_set_ref));
  const l7: L7VirtualService = {
    kind: 'l7',
    name: String(o.name),
    vip,
    port,
    ingressClass: markerValue(o, 'ingressclass') ?? '',
    routes: routesOf(set, l),
    defaultPool: o.pool_group_ref ? poolOfGroup(o.pool_group_ref, l) : undefined,
    ...placementRead(o),
  };
  if (service?.enable_http2 === true) l7.http2 = true;
  if (service?.enable_ssl) {
    const profile = l.byUuid.get(uuidOf(o.application_profile_ref));
    const pki = l.byUuid.get(
      uuidOf((profile?.http_profile as { pki_profile_ref?: unknown } | undefined)?.pki_profile_ref),
    );
    const client = clientValidationOf(profile, pki);
    if (client) l7.clientValidation = client;
    const certName = (ref: unknown) => String(l.byUuid.get(uuidOf(ref))?.name ?? '');
    const first = (o.ssl_key_and_certificate_refs as unknown[] | undefined)?.[0];
    // A child whose names are not its certificate's (a rotation that renamed hosts and whose
    // re-render failed) reads back without its certificate: the plan writes the service again.
    const current = (c: Record<string, unknown>): boolean => {
      const cert = l.byUuid.get(uuidOf((c.ssl_key_and_certificate_refs as unknown[] | undefined)?.[0]));
      const names = cert ? parseCertificate(cert)?.sniNames : undefined;
      const want = names?.length ? names : [String(cert?.name ?? '')];
      return JSON.stringify(c.vh_domain_name) === JSON.stringify(want);
    };
    const rest = children
      .filter(current)
      .sort((a, b) => Number(markerValue(a, 'sniorder') ?? 0) - Number(markerValue(b, 'sniorder') ?? 0))
      .map((c) => certName((c.ssl_key_and_certificate_refs as unknown[] | undefined)?.[0]));
    l7.protocol = 'HTTPS';
    l7.certificates = [...(first ? [certName(first)] : []), ...rest].filter(Boolean);
  }
  return l7;
}
