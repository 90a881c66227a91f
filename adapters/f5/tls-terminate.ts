/**
 * TLS ended at BIG-IP on a TCP listener (a TLSRoute in Terminate mode): the service's `serverTLS`
 * (a TLS_Server of the listener's certificates, picked by SNI as an HTTPS service's are) and an
 * iRule choosing each route's pool by the server name the client asked, once the handshake is
 * done (`SSL::sni name` in CLIENTSSL_HANDSHAKE): exact names first, then wildcards by the longest
 * suffix (one or more labels, as the Gateway API has it), then the catch-all; no match and no
 * catch-all: the connection is rejected. Read back from the device: the rule's text as it would be
 * written from the routes, its place in the service's iRules, and the TLS_Server the service
 * points at. A TLS listener passing TLS through routes by the ClientHello instead (an endpoint
 * policy: `sniPolicy`, in the same order). Pure.
 */
import type { L4VirtualService, SniRoute } from '../../src/model/types.ts';
import { listsIRule, remark, tclHost, tclPath } from './as3-text.ts';
import type { TlsPaths } from './pool-tls.ts';

type Json = Record<string, unknown>;

export const terminateTlsName = (vs: string): string => `${vs}_tls`;
export const sniRuleName = (vs: string): string => `${vs}_sni`;

/** The routes in the order the rule tries them: exact names, wildcards by longest suffix, catch-all. */
export function sniOrder(sni: readonly SniRoute[]): SniRoute[] {
  const rank = (h: string) => (h === '' ? [2, 0] : h.startsWith('*.') ? [1, -h.length] : [0, 0]);
  return [...sni].sort((a, b) => {
    const [x, y] = [rank(a.host), rank(b.host)];
    return x[0]! - y[0]! || x[1]! - y[1]! || (a.host < b.host ? -1 : 1);
  });
}

/** The iRule choosing each server name's pool once BIG-IP has ended the client's TLS. */
export function sniRule(sni: readonly SniRoute[], paths: TlsPaths): string {
  const ordered = sniOrder(sni);
  const named = ordered.filter((r) => r.host !== '');
  const fallback = ordered.find((r) => r.host === '');
  return [
    'when CLIENTSSL_HANDSHAKE {',
    '  switch -glob -- [string tolower [SSL::sni name]] {',
    ...named.map(
      (r) => `    ${tclHost(r.host.toLowerCase(), 'server name')} { pool ${tclPath(paths.pool(r.pool))} }`,
    ),
    fallback ? `    default { pool ${tclPath(paths.pool(fallback.pool))} }` : '    default { reject }',
    '  }',
    '}',
  ].join('\n');
}

/** The objects and service fields a terminating TCP service adds (none when it passes TLS through). */
export function terminateObjects(
  vs: L4VirtualService,
  cert: (name: string) => string,
  paths: TlsPaths,
  iRule: (text: string, rule: string) => Json,
): { service: Json; iRules: string[]; objects: Record<string, Json> } | undefined {
  const certs = vs.certificates ?? [];
  if (certs.length === 0 || vs.protocol !== 'TCP') return undefined;
  const sni = vs.sni ?? [];
  return {
    service: { serverTLS: terminateTlsName(vs.name) },
    iRules: sni.length > 0 ? [sniRuleName(vs.name)] : [],
    objects: {
      [terminateTlsName(vs.name)]: {
        class: 'TLS_Server',
        remark: remark(`npl-lb certificates of ${vs.name}`),
        certificates: certs.map((c) => ({ certificate: cert(c) })),
      },
      ...(sni.length > 0
        ? {
            [sniRuleName(vs.name)]: iRule(
              `npl-lb: the pool of each server name of ${vs.name}`,
              sniRule(sni, paths),
            ),
          }
        : {}),
    },
  };
}

/**
 * Whether a terminating TCP service on the device ends TLS and picks its pools as its routes say:
 * its `serverTLS` names a TLS_Server of its application, and (with routes) the SNI iRule is listed
 * and reads as it would be written. A profile or rule taken off or edited by hand is not: the
 * service is then written again.
 */
export function terminateWired(vs: L4VirtualService, o: Json, app: Json, paths: TlsPaths): boolean {
  const tls = app[String(o.serverTLS ?? '')] as Json | undefined;
  if (tls?.class !== 'TLS_Server') return false;
  const sni = vs.sni ?? [];
  if (sni.length === 0) return !listsIRule(o, sniRuleName(vs.name));
  const rule = app[sniRuleName(vs.name)] as Json | undefined;
  try {
    return listsIRule(o, sniRuleName(vs.name)) && rule?.iRule === sniRule(sni, paths);
  } catch {
    return false;
  }
}

/**
 * TLS passed through (no Terminate): the service's endpoint policy, an endpoint policy on the ClientHello's server name, first match: exact names,
 * then wildcards by the longest suffix (one or more labels, as the Gateway API has it), then the
 * catch-all. No match and no catch-all: no pool, the connection is refused.
 */
export function sniPolicy(vs: string, sni: SniRoute[], ref: (pool: string) => string): Json {
  const sorted = sniOrder(sni);
  return {
    class: 'Endpoint_Policy',
    remark: remark(`npl-lb server names of ${vs}`),
    strategy: 'first-match',
    rules: sorted.map((r, i) => ({
      name: `sni_${i}`,
      conditions:
        r.host === ''
          ? []
          : [
              {
                type: 'sslExtension',
                event: 'ssl-client-hello',
                serverName: r.host.startsWith('*.')
                  ? { operand: 'ends-with', values: [r.host.slice(1)] }
                  : { operand: 'equals', values: [r.host] },
              },
            ],
      actions: [{ type: 'forward', event: 'ssl-client-hello', select: { pool: { use: ref(r.pool) } } }],
    })),
  };
}
