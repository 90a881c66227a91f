/**
 * What a virtual service refers to: the pools its routes send to (weighted backends and mirrors
 * included, unresolved ones left out) and the certificates its listener serves. Pure.
 */
import type { VirtualService } from './types.ts';

export function poolRefs(vs: VirtualService): string[] {
  if (vs.kind === 'l4') return [...new Set([vs.pool, ...(vs.sni ?? []).map((r) => r.pool)])].filter(Boolean);
  const out = new Set<string>();
  for (const r of vs.routes) {
    if (r.pool) out.add(r.pool);
    for (const b of r.backends ?? []) if (b.pool) out.add(b.pool);
    for (const m of r.mirrors ?? []) out.add(m.pool);
  }
  if (vs.defaultPool) out.add(vs.defaultPool);
  return [...out];
}

export const certificateRefs = (vs: VirtualService): string[] => vs.certificates ?? [];
