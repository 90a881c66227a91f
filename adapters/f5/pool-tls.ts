/**
 * A pool's TLS to its members on BIG-IP (Pool.backendTls: a BackendTLSPolicy, or an Ingress's
 * re-encryption annotations) as AS3 holds it. Each TLS pool has a `TLS_Client` of its own beside
 * it (a server-ssl profile: `sendSNI` the policy's hostname, `serverName` the name the member's
 * certificate must carry, `validateCertificate` on, `trustCA` a `CA_Bundle` of its own or
 * `generic`, BIG-IP's bundle of public CAs, for `wellKnownCACertificates: System`, and
 * `clientCertificate` where the Gateway presents one). A virtual server has one server-ssl
 * profile in AS3, not one per pool, so each HTTP virtual server sending to a TLS pool carries the
 * first of them as its `clientTLS` and an iRule that picks the pool's own profile once the member
 * is chosen (`SSL::profile` in SERVER_CONNECTED, as F5's own controller does) and turns server-side
 * TLS off for a clear-text pool. A weighted rule's pool holds the members of all its backends, so
 * they must ask one TLS (`Capabilities.http.backendTls.oneTlsPerSplit`). Everything is read back
 * from those objects: a switch, a name, a CA or the iRule changed by hand is written again. Pure.
 */
import {
  type BackendTls,
  type L7VirtualService,
  type Pool,
  SYSTEM_CA,
  type VirtualService,
} from '../../src/model/types.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { pointedName, remark, tclPath } from './as3-text.ts';

type Json = Record<string, unknown>;

/** A TLS pool's server-ssl profile and CA bundle, beside it in its application. */
export const poolTlsName = (pool: string): string => `${pool}_stls`;
export const poolCaName = (pool: string): string => `${pool}_sca`;
/** The iRule choosing each pool's server-side TLS on a virtual server. */
export const serverTlsRuleName = (vs: string): string => `${vs}_btls`;

/** The objects a TLS pool adds beside itself (none for a clear-text pool). */
export function poolTlsObjects(p: Pool, certRef: (name: string) => string): Record<string, Json> {
  const tls = p.backendTls;
  if (!tls) return {};
  const system = tls.ca === SYSTEM_CA;
  return {
    [poolTlsName(p.name)]: {
      class: 'TLS_Client',
      remark: remark(`npl-lb TLS to the members of ${p.name}`),
      sendSNI: tls.serverName,
      serverName: tls.verifyNames[0] ?? tls.serverName,
      validateCertificate: true,
      // `generic`: BIG-IP's own bundle of public CAs (wellKnownCACertificates: System).
      trustCA: system ? 'generic' : { use: poolCaName(p.name) },
      ...(tls.clientCertificate ? { clientCertificate: certRef(tls.clientCertificate) } : {}),
    },
    ...(system
      ? {}
      : {
          [poolCaName(p.name)]: {
            class: 'CA_Bundle',
            remark: remark(`npl-lb CAs the members of ${p.name} are verified against`),
            bundle: tls.ca,
          },
        }),
  };
}

/**
 * A pool's TLS as its `TLS_Client` says: verifying (`validateCertificate` true, never
 * `ignoreUntrusted` or `ignoreExpired`), with the SNI it sends and the name it checks, against its
 * own CA bundle or `generic`. Anything else (no profile, a switch turned off, a CA bundle pointed
 * elsewhere or gone) reads as no TLS, so the next pass writes it again.
 */
export function parsePoolTls(pool: string, app: Json): BackendTls | undefined {
  const c = app[poolTlsName(pool)] as Json | undefined;
  if (c?.class !== 'TLS_Client' || c.validateCertificate !== true) return undefined;
  if (c.ignoreUntrusted === true || c.ignoreExpired === true) return undefined;
  if (typeof c.sendSNI !== 'string' || typeof c.serverName !== 'string') return undefined;
  let ca: string | undefined;
  if (c.trustCA === 'generic') ca = SYSTEM_CA;
  else if (pointedName(c.trustCA) === poolCaName(pool)) {
    const bundle = app[poolCaName(pool)] as Json | undefined;
    if (bundle?.class === 'CA_Bundle' && typeof bundle.bundle === 'string') ca = bundle.bundle;
  }
  if (ca === undefined) return undefined;
  const cert = pointedName(c.clientCertificate);
  return {
    serverName: c.sendSNI,
    verifyNames: [c.serverName],
    ca,
    ...(cert ? { clientCertificate: cert } : {}),
  };
}

/** Absolute paths on the BIG-IP (an iRule names objects by path). */
export interface TlsPaths {
  /** A pool of the model. */
  pool: (name: string) => string;
  /** A TLS pool's server-ssl profile. */
  tls: (pool: string) => string;
  /** An object of the virtual service's own application (a weighted rule's pool). */
  own: (name: string) => string;
  /** How the virtual server points at a pool's server-ssl profile (`clientTLS`). */
  tlsRef: (pool: string) => string;
}

/** What a weighted rule's pool or a pool speaks: its TLS as one comparable word, '' for clear text. */
const tlsKey = (t: BackendTls | undefined): string => (t ? JSON.stringify(t) : '');

/**
 * The rule of a weighted split whose backends ask different TLS (clear text beside TLS, or other
 * names or CAs), if any: BIG-IP splits through one pool of all their members.
 */
export function splitTlsProblem(vs: L7VirtualService, pools: ReadonlyMap<string, Pool>): string | undefined {
  for (const r of vs.routes) {
    const asked = new Set(
      (r.backends ?? []).flatMap((b) => (b.pool ? [tlsKey(pools.get(b.pool)?.backendTls)] : [])),
    );
    if (asked.size > 1)
      return `a weighted rule of ${vs.name} (${r.source}) sends to backends that differ in TLS to members; BIG-IP splits through one pool and speaks one TLS to it`;
  }
  return undefined;
}

/**
 * A virtual server's server-side TLS: its `clientTLS` (the first TLS pool's profile) and the iRule
 * choosing each pool's own, or nothing when none of its pools speaks TLS (an HTTP service, or a
 * TCP one ending TLS: tls-terminate.ts). `splits`: the weighted
 * rules' pools (by their name in the service's application) and the pools they draw from.
 */
export function serverSideTls(
  vs: VirtualService,
  pools: ReadonlyMap<string, Pool>,
  splits: ReadonlyMap<string, string[]>,
  paths: TlsPaths,
): { clientTLS: string; iRule: string } | undefined {
  const byProfile = new Map<string, string[]>();
  const add = (pool: string, path: string) => {
    if (!pools.get(pool)?.backendTls) return;
    const profile = tclPath(paths.tls(pool));
    byProfile.set(profile, [...(byProfile.get(profile) ?? []), tclPath(path)]);
  };
  const used = [...new Set(poolRefs(vs))].sort();
  for (const p of used) add(p, paths.pool(p));
  for (const [split, from] of [...splits].sort(([a], [b]) => (a < b ? -1 : 1)))
    if (from[0] !== undefined) add(from[0], paths.own(split));
  // The weighted rules' pools draw from pools the service refers to: the first TLS one of those
  // is the service's own profile.
  const first = used.find((p) => pools.get(p)?.backendTls);
  if (byProfile.size === 0 || first === undefined) return undefined;
  const cases = [...byProfile].map(
    ([profile, targets]) =>
      `    ${targets.map((t) => `"${t}"`).join(' -\n    ')} { SSL::profile ${profile} }`,
  );
  return {
    clientTLS: paths.tlsRef(first),
    iRule: [
      'when SERVER_CONNECTED {',
      '  switch -- [LB::server pool] {',
      ...cases,
      '    default { SSL::disable serverside }',
      '  }',
      '}',
    ].join('\n'),
  };
}
