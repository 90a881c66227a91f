/**
 * The virtual services as an LB admin checks them: VIP, listeners, certificates (never a key),
 * routes, member counts, and a problem (a failed apply, no members, none healthy) in words. Pure.
 */
import type { StateInput } from './by-node.ts';
import { poolsOf } from './impact.ts';

export interface CertificateView {
  name: string;
  subject: string;
  sans: string[];
  notAfter: string;
}

export interface VirtualServiceView {
  name: string;
  kind: string;
  vip: string;
  port: number;
  /** `TCP/80`, `HTTP/8080`, ... */
  listeners: string[];
  certificates: CertificateView[];
  routes: { host: string; path: string; pool: string }[];
  pools: string[];
  members: { total: number; serving: number; down: number };
  lastApply: 'ok' | 'failed' | 'pending';
  lastApplyAt: string | null;
  /** Its own last apply failed, or that of a pool it uses. */
  applyFailed: boolean;
  /** Why it needs attention (shown in red), or null. */
  problem: string | null;
}

const applyText = (a: { error?: { code: string; message: string } | undefined } | null | undefined) =>
  a?.error ? `${a.error.code}: ${a.error.message}` : 'failed';

/** Where a route sends: its pool, or its split (`pool x3, (500) x1` for a share that answers 500). */
function routeTarget(r: NonNullable<StateInput['virtualServices'][number]['routes']>[number]): string {
  if (r.pool || !r.backends) return r.pool;
  return r.backends.map((b) => `${b.pool ?? '(500)'} x${b.weight}`).join(', ');
}

export function virtualServices(doc: StateInput): VirtualServiceView[] {
  const pools = new Map(doc.pools.map((p) => [p.name, p]));
  return doc.virtualServices
    .map((vs): VirtualServiceView => {
      const names = poolsOf(vs);
      const members = names.flatMap((n) => pools.get(n)?.members ?? []);
      const serving = members.filter((m) => m.enabled && m.health?.state !== 'down').length;
      const down = members.filter((m) => m.health?.state === 'down').length;
      const failedPool = names.map((n) => pools.get(n)).find((p) => p?.lastApply && !p.lastApply.ok);
      const lastApply =
        vs.lastApply === undefined || vs.lastApply === null ? 'pending' : vs.lastApply.ok ? 'ok' : 'failed';
      const problem =
        lastApply === 'failed'
          ? `apply failed: ${applyText(vs.lastApply)}`
          : failedPool
            ? `pool ${failedPool.name} apply failed: ${applyText(failedPool.lastApply)}`
            : members.length === 0
              ? 'no members'
              : serving === 0
                ? `no serving member (${down} down, ${members.length - down} draining)`
                : null;
      // The listener as a client meets it: HTTP or HTTPS, TLS passthrough (routes by SNI), TCP, UDP.
      const protocol = vs.kind === 'l7' ? (vs.protocol ?? 'HTTP') : vs.sni ? 'TLS' : (vs.protocol ?? 'TCP');
      return {
        name: vs.name,
        kind: vs.kind ?? 'l4',
        vip: vs.vip,
        port: vs.port,
        listeners: [`${protocol}/${vs.port}`],
        certificates: (vs.certificates ?? []).map((c) => ({
          name: c.name,
          subject: c.subject,
          sans: c.sans,
          notAfter: c.notAfter,
        })),
        routes: [
          ...(vs.routes ?? []).map((r) => ({ host: r.host ?? '', path: r.path ?? '', pool: routeTarget(r) })),
          ...(vs.sni ?? []).map((r) => ({ host: r.host, path: '', pool: r.pool })),
        ],
        pools: names,
        members: { total: members.length, serving, down },
        lastApply,
        lastApplyAt: vs.lastApply?.at ?? null,
        applyFailed: lastApply === 'failed' || failedPool !== undefined,
        problem,
      };
    })
    .sort((a, b) => Number(b.problem !== null) - Number(a.problem !== null) || (a.name < b.name ? -1 : 1));
}
