/**
 * One canonical form for model objects, so two states with the same meaning compare equal whatever
 * order their lists came in: members by address and port, routes by host, path and type.
 */
import type { HttpRoute, LbState, Member, Pool, VirtualService } from './types.ts';

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const memberKey = (m: Member): string => `${m.address}|${String(m.port).padStart(5, '0')}`;
const routeKey = (r: HttpRoute): string => `${r.host}|${r.path}|${r.pathType}`;

/**
 * Normal forms are remembered per object (objects are treated as immutable once built), and a
 * normal form is its own normal form: unchanged objects normalise, and compare, by reference.
 */
const normalized = new WeakMap<object, object>();

function remember<T extends object>(x: T, make: (x: T) => T): T {
  const hit = normalized.get(x) as T | undefined;
  if (hit) return hit;
  const n = make(x);
  normalized.set(x, n);
  normalized.set(n, n);
  return n;
}

export function normalizePool(p: Pool): Pool {
  return remember(p, (x) => ({
    ...x,
    members: [...x.members].sort((a, b) => cmp(memberKey(a), memberKey(b))),
  }));
}

export function normalizeVirtualService(vs: VirtualService): VirtualService {
  if (vs.kind === 'l4') return vs;
  return remember(vs, (x) =>
    x.kind === 'l7' ? { ...x, routes: [...x.routes].sort((a, b) => cmp(routeKey(a), routeKey(b))) } : x,
  );
}

export function normalizeState(s: LbState): LbState {
  return {
    pools: s.pools.map(normalizePool).sort((a, b) => cmp(a.name, b.name)),
    virtualServices: s.virtualServices.map(normalizeVirtualService).sort((a, b) => cmp(a.name, b.name)),
  };
}
