/**
 * What HAProxy can and cannot take, shared by both transports (foreign objects never reach it: the
 * controller's ownership guard refuses them, src/adapter/ownership.ts): an update needs its object, UDP is not balanced, members and VIPs must be IP addresses and
 * ports, and a virtual service needs its pools.
 */
import { capabilityProblem } from '../../src/adapter/preflight.ts';
import { HAPROXY_CAPABILITIES } from './capabilities.ts';
import { isIP } from 'node:net';
import type { ApplyError, Capabilities } from '../../src/adapter/contract.ts';
import type { L7VirtualService, Pool, VirtualService } from '../../src/model/types.ts';
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { nameProblem } from './encode.ts';
import { FETCH_NAME } from './http-routes.ts';
import { FILTER_HOST } from './crt-list.ts';

export type Fail = ApplyError;

/** `passthrough`: the transport renders TLS passthrough (SNI) frontends. */
export function changeProblem(
  c: Change,
  exists: boolean,
  passthrough = false,
  caps: Capabilities = HAPROXY_CAPABILITIES,
): Fail | undefined {
  if (c.op === 'update' && !exists) {
    return { code: 'NotFound', message: `${c.kind} ${c.name} is not in the configuration`, terminal: false };
  }
  if (c.op === 'delete') return undefined;
  const badName =
    nameProblem(c.kind === 'pool' ? 'pool' : 'virtual service', c.name) ??
    (c.kind === 'virtualService'
      ? poolsOf(c.desired)
          .map((p) => nameProblem('pool', p))
          .find(Boolean)
      : undefined);
  if (badName) return { code: 'Invalid', message: badName, terminal: true };
  // A placement HAProxy does not apply (another vendor's): refused, never run elsewhere.
  const refused = capabilityProblem(c, caps, 'HAProxy');
  if (refused) return refused;
  if (c.kind === 'pool') return poolProblem(c.name, c.desired);
  const v = c.desired;
  // Client filters go into ACLs as they are: a CIDR's characters only (the source gives network
  // forms; this transport defends itself).
  const ranges = v.kind === 'l4' ? (v.sourceRanges ?? []) : v.routes.flatMap((r) => r.sourceRanges ?? []);
  const badRange = ranges.find((x) => !/^[0-9a-fA-F.:]{2,39}\/\d{1,3}$/.test(x));
  if (badRange !== undefined)
    return {
      code: 'Invalid',
      message: `${c.name}: client filter ${JSON.stringify(badRange.slice(0, 64))} is not a CIDR`,
      terminal: true,
    };
  if (v.kind === 'l4' && v.protocol === 'UDP') {
    return { code: 'Unsupported', message: `HAProxy does not balance UDP (${c.name})`, terminal: true };
  }
  const asking = v.kind === 'l7' ? hostValidationProblem(c.name, v) : undefined;
  if (asking) return { code: 'Invalid', message: asking, terminal: true };
  if (v.kind === 'l7') {
    const nul = v.routes.find((r) => JSON.stringify(r).includes('\\u0000'));
    if (nul) return { code: 'Invalid', message: `${c.name}: a route holds a NUL byte`, terminal: true };
    const name = v.routes
      .flatMap((r) => [...(r.headers ?? []), ...(r.queryParams ?? [])])
      .find((m) => !FETCH_NAME.test(m.name));
    if (name) {
      return {
        code: 'Invalid',
        message: `${c.name}: HAProxy matches only header and query names of letters, digits, '-' and '_' (${JSON.stringify(name.name.slice(0, 40))})`,
        terminal: true,
      };
    }
  }
  if (v.kind === 'l4' && v.sni && !passthrough) {
    return {
      code: 'Unsupported',
      message: `TLS passthrough is not served by this transport (${c.name})`,
      terminal: true,
    };
  }
  if (isIP(v.vip) === 0 || !(v.port >= 1 && v.port <= 65535)) {
    return {
      code: 'Invalid',
      message: `${c.name}: VIP ${v.vip}:${v.port} is not an IP address and port`,
      terminal: true,
    };
  }
  return undefined;
}

/** The pools a virtual service sends traffic to (weighted backends included). */
export const poolsOf = (v: VirtualService): string[] => poolRefs(v);

/** Backends used by an L7 frontend must speak HTTP. */
export function httpPools(vss: Iterable<VirtualService>): Set<string> {
  const out = new Set<string>();
  for (const v of vss) if (v.kind === 'l7') for (const p of poolsOf(v)) out.add(p);
  return out;
}

/** What of a pool HAProxy would read as syntax or cannot serve: refused alone, terminal. */
function poolProblem(name: string, p: Pool): Fail | undefined {
  // A keyed hash's name goes inside a fetch's parentheses: a plain word only.
  if (p.hashKey !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(p.hashKey))
    return {
      code: 'Invalid',
      message: `pool ${name}: hash key ${JSON.stringify(p.hashKey.slice(0, 64))} is not a header or cookie name`,
      terminal: true,
    };
  // TLS to the members: the names go on server lines as they are (`sni str(...)`,
  // `verifyhost`): DNS names only (the source gives them so; this transport defends itself).
  const tls = p.backendTls;
  const badTlsName =
    tls && [tls.serverName, ...tls.verifyNames].find((n) => !/^[a-z0-9][a-z0-9.-]{0,252}$/.test(n));
  if (tls && (badTlsName !== undefined || tls.verifyNames.length !== 1))
    return {
      code: 'Invalid',
      message: `pool ${name}: TLS name ${JSON.stringify((badTlsName ?? tls.verifyNames.join(',')).slice(0, 64))} is not one DNS name`,
      terminal: true,
    };
  // The certificate presented names a file of the certificate store: a plain model name.
  if (tls?.clientCertificate !== undefined && !/^[a-z0-9][a-z0-9.-]{0,252}$/.test(tls.clientCertificate))
    return {
      code: 'Invalid',
      message: `pool ${name}: client certificate ${JSON.stringify(tls.clientCertificate.slice(0, 64))} is not a certificate name`,
      terminal: true,
    };
  if (p.protocol === 'UDP') {
    return {
      code: 'Unsupported',
      message: `HAProxy does not balance UDP (pool ${name})`,
      terminal: true,
    };
  }
  const bad = p.members.find((m) => isIP(m.address) === 0 || !(m.port >= 1 && m.port <= 65535));
  if (bad) {
    return {
      code: 'Invalid',
      message: `pool ${name}: member ${bad.address}:${bad.port} is not an IP address and port`,
      terminal: true,
    };
  }
  return undefined;
}

/**
 * Hosts asking client certificates (crt-list.ts): each a crt-list filter as it is (a DNS name's
 * characters only), served with one of the frontend's own certificates; and one CA for them all,
 * since a TLS session resumed under another host's name carries the verification of the first
 * (frontend-rules.ts).
 */
function hostValidationProblem(name: string, v: L7VirtualService): string | undefined {
  const asked = v.hostClientValidation ?? [];
  if (new Set(asked.map((h) => h.ca)).size > 1)
    return `${name}: client certificates for several hosts against different CAs (a resumed TLS session would carry one host's verification to another)`;
  const bad = asked.find((h) => !FILTER_HOST.test(h.host) || !v.certificates?.includes(h.certificate));
  return bad
    ? `${name}: client certificates for host ${JSON.stringify(bad.host.slice(0, 64))}: not a DNS name, or its certificate ${JSON.stringify(bad.certificate.slice(0, 64))} is not one of the frontend's`
    : undefined;
}
