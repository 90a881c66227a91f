/**
 * One canonical form for model objects, so two states with the same meaning compare equal whatever
 * order their lists came in: members by address and port, routes by host, path and type.
 */
import type { HttpRoute, LbState, Member, Pool, VirtualService } from './types.ts';

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const memberKey = (m: Member): string => `${m.address}|${String(m.port).padStart(5, '0')}`;
const routeKey = (r: HttpRoute): string => `${r.host}|${r.path}|${r.pathType}`;

export function normalizePool(p: Pool): Pool {
  return { ...p, members: [...p.members].sort((a, b) => cmp(memberKey(a), memberKey(b))) };
}

export function normalizeVirtualService(vs: VirtualService): VirtualService {
  if (vs.kind === 'l4') return vs;
  return { ...vs, routes: [...vs.routes].sort((a, b) => cmp(routeKey(a), routeKey(b))) };
}

export function normalizeState(s: LbState): LbState {
  return {
    pools: s.pools.map(normalizePool).sort((a, b) => cmp(a.name, b.name)),
    virtualServices: s.virtualServices.map(normalizeVirtualService).sort((a, b) => cmp(a.name, b.name)),
  };
}
