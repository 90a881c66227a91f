/**
 * Whether a virtual service still serving on a device lets in clients its desired form refuses:
 * the test that keeps a refused client-filter change from failing open. When a device refuses the
 * change that adds or narrows a filter, what it keeps serving must not be the wider one. Ranges are
 * compared as the network forms the source gives (a live range not listed in the desired filter
 * counts as wider, even where a desired range happens to cover it: the safe side). Pure.
 */
import type { HttpRoute, VirtualService } from './types.ts';

/** Whether `live` admits a client that `desired` (its filter) would refuse. */
function rangesWiden(live: readonly string[] | undefined, desired: readonly string[] | undefined): boolean {
  if (desired === undefined) return false;
  if (live === undefined) return true;
  const allowed = new Set(desired);
  return live.some((r) => !allowed.has(r));
}

const routeKey = (r: HttpRoute): string => JSON.stringify([r.source, r.host, r.path, r.pathType]);

/**
 * Whether the live virtual service serves a client the desired one keeps out: an L4 filter that
 * is missing or lists a range the desired does not; on L7, any route whose desired filter is
 * narrower than the live route of the same source, host and path.
 */
export function clientFilterWidens(live: VirtualService, desired: VirtualService): boolean {
  if (live.kind === 'l4' || desired.kind === 'l4') {
    if (live.kind !== 'l4' || desired.kind !== 'l4') return false;
    return rangesWiden(live.sourceRanges, desired.sourceRanges);
  }
  const filters = new Map<string, string[]>();
  for (const r of desired.routes) if (r.sourceRanges) filters.set(routeKey(r), r.sourceRanges);
  if (filters.size === 0) return false;
  return live.routes.some((r) => {
    const want = filters.get(routeKey(r));
    return want !== undefined && rangesWiden(r.sourceRanges, want);
  });
}
