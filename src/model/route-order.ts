/**
 * The order in which a first-match device (an endpoint policy, an HTTP policy set) must try
 * an L7 virtual service's routes to answer as the model does (src/model/http-match.ts): the most
 * specific host first (exact, then the longest wildcard, then any host), then by the route's
 * `order` (Gateway API), or Exact before the longest prefix (Ingress rules). Pure.
 */
import type { HttpRoute } from './types.ts';

/** How specific a route host is, for sorting: exact, then longer wildcards, then ''. */
export const hostSpecificity = (h: string): [number, number] =>
  h === '' ? [2, 0] : h.startsWith('*.') ? [1, -h.length] : [0, 0];

const ingressRank = (r: HttpRoute): number => (r.pathType === 'Exact' ? 1e6 : 0) + r.path.length;

export function firstMatchOrder(routes: readonly HttpRoute[]): HttpRoute[] {
  return [...routes].sort((a, b) => {
    const [x, y] = [hostSpecificity(a.host), hostSpecificity(b.host)];
    if (x[0] !== y[0] || x[1] !== y[1]) return x[0] - y[0] || x[1] - y[1];
    if (a.host !== b.host) return a.host < b.host ? -1 : 1;
    if (a.order !== undefined || b.order !== undefined) return (a.order ?? 0) - (b.order ?? 0);
    return ingressRank(b) - ingressRank(a) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  });
}

/** The more specific hosts of a service that `host` covers ('' covers every other host). */
export function coveredHosts(
  host: string,
  hosts: readonly string[],
): { exact: string[]; wildcards: string[] } {
  if (host !== '' && !host.startsWith('*.')) return { exact: [], wildcards: [] };
  const suffix = host.slice(1);
  const covered = (h: string) => h !== host && h !== '' && h.endsWith(suffix) && h.length > suffix.length;
  return {
    exact: hosts.filter((h) => !h.startsWith('*.') && covered(h)),
    wildcards: hosts.filter((h) => h.startsWith('*.') && covered(h)),
  };
}
