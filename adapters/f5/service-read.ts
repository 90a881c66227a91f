/**
 * An AS3 service of ours read back as the model's virtual service: the routes as applied (the
 * service's metadata, or the policy's rules for services written before routes were kept), the
 * TLS_Server's certificates and client validation (with the subject iRule), and an L4 service's
 * SNI routes and client filters. Pure.
 */
import type {
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  PathType,
  SniRoute,
} from '../../src/model/types.ts';
import { pointedName } from './as3-text.ts';
import { clientValidationOf, subjectHeaderOf } from './client-tls.ts';
import { placementRead } from './placement.ts';
import { metaValue } from './pool-objects.ts';
import type { TlsPaths } from './pool-tls.ts';
import { terminateWired } from './tls-terminate.ts';
import { misdirectedRead } from './misdirected.ts';

type Json = Record<string, unknown>;

/** The pool a pointer names: by name, or by `/tenant/application/name` (its last segment). */
export const usedPool = pointedName;

/** The routes as applied, from the service's metadata (undefined: not written by this version). */
function storedRoutes(o: Json, policy: Json | undefined): HttpRoute[] | undefined {
  const text = metaValue(o, 'routes');
  if (text === undefined) return undefined;
  // Without its policy the service serves none of them: observe() says so, and the next pass writes it.
  if (policy?.class !== 'Endpoint_Policy') return [];
  try {
    const routes = JSON.parse(text) as unknown;
    return Array.isArray(routes) ? (routes as HttpRoute[]) : [];
  } catch {
    return [];
  }
}

export function parseL7(name: string, o: Json, app: Json): L7VirtualService {
  const policy = app[String(o.policyEndpoint ?? '')] as Json | undefined;
  const stored = storedRoutes(o, policy);
  // Services written before routes were kept whole: host and path read from the policy's rules.
  const rules = stored === undefined && Array.isArray(policy?.rules) ? (policy.rules as Json[]) : [];
  const routes: HttpRoute[] = stored ?? [];
  for (const rule of rules) {
    const conds = (rule.conditions ?? []) as Json[];
    const host = conds.find((c) => c.type === 'httpHost') as { host?: { values?: string[] } } | undefined;
    const uri = conds.find((c) => c.type === 'httpUri') as
      { path?: { operand?: string; values?: string[] } } | undefined;
    const action = ((rule.actions ?? []) as Json[]).find((a) => a.type === 'forward') as
      { select?: { pool?: unknown } } | undefined;
    const pool = usedPool(action?.select?.pool);
    if (!pool) continue;
    const extra = JSON.parse(metaValue(o, String(rule.name)) ?? '{}') as {
      pathType?: PathType;
      source?: string;
    };
    routes.push({
      host: host?.host?.values?.[0] ?? '',
      path: uri?.path?.values?.[0] ?? '/',
      pathType: extra.pathType ?? (uri?.path?.operand === 'equals' ? 'Exact' : 'Prefix'),
      pool,
      source: extra.source ?? '',
    });
  }
  const vs: L7VirtualService = {
    kind: 'l7',
    name,
    vip: String((o.virtualAddresses as unknown[] | undefined)?.[0] ?? ''),
    port: Number(o.virtualPort ?? 80),
    ingressClass: metaValue(o, 'ingressClass') ?? '',
    routes,
    defaultPool: usedPool(o.pool),
    ...placementRead(o),
  };
  if (o.class === 'Service_HTTPS') {
    vs.protocol = 'HTTPS';
    vs.certificates = JSON.parse(metaValue(o, 'certificates') ?? '[]') as string[];
    const client = clientValidationOf(app[String(o.serverTLS ?? '')] as Json | undefined, app);
    const subject = client ? subjectHeaderOf(o, app, name) : undefined;
    if (client) vs.clientValidation = { ...client, ...(subject ? { subjectHeader: subject } : {}) };
    const hosts = misdirectedRead(o, app, metaValue(o, 'listenerHosts'), name);
    if (hosts) vs.listenerHosts = hosts;
  }
  return vs;
}

/**
 * An L4 service. One that ends TLS (a `serverTLS`, tls-terminate.ts) reads its certificates and
 * routes as applied when its TLS profile and SNI iRule are on the device as they would be written
 * from them, and none otherwise (so the next pass writes them again).
 */
export function parseL4(name: string, o: Json, app: Json = {}, paths?: TlsPaths): L4VirtualService {
  const vs: L4VirtualService = {
    kind: 'l4',
    name,
    vip: String((o.virtualAddresses as unknown[] | undefined)?.[0] ?? ''),
    port: Number(o.virtualPort),
    protocol: o.class === 'Service_UDP' ? 'UDP' : 'TCP',
    pool: usedPool(o.pool) ?? '',
    source: metaValue(o, 'source') ?? '',
    ...placementRead(o),
  };
  const sni = metaValue(o, 'sni');
  if (sni) vs.sni = JSON.parse(sni) as SniRoute[];
  const certs = metaValue(o, 'certificates');
  if (certs !== undefined || o.serverTLS !== undefined) {
    vs.certificates = JSON.parse(certs ?? '[]') as string[];
    if (!paths || !terminateWired(vs, o, app, paths)) vs.certificates = [];
  }
  const ranges = metaValue(o, 'sourceRanges');
  if (ranges) vs.sourceRanges = JSON.parse(ranges) as string[];
  return vs;
}
