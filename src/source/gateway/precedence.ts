/**
 * HTTPRoute rule precedence as the Gateway API orders it, for the routes of one host: an Exact path
 * before a PathPrefix, a longer prefix before a shorter one, then a method match, then more header
 * matches, then more query matches; ties go to the older route, then the route first by
 * namespace/name, then the rule and match that come first in it. (Regular expressions, whose order
 * the spec leaves open, come after prefixes, longer first.) Hosts are chosen before this, the most
 * specific first. Pure.
 */
import type { HttpRoute } from '../../model/types.ts';

export interface Ranked {
  route: HttpRoute;
  /** The route object's creationTimestamp (ISO) and namespace/name. */
  created: string;
  key: string;
  rule: number;
  match: number;
}

const TYPE_RANK = { Exact: 0, Prefix: 1, ImplementationSpecific: 1, RegularExpression: 2 } as const;

export function comparePrecedence(a: Ranked, b: Ranked): number {
  const x = a.route;
  const y = b.route;
  return (
    TYPE_RANK[x.pathType] - TYPE_RANK[y.pathType] ||
    y.path.length - x.path.length ||
    Number(y.method !== undefined) - Number(x.method !== undefined) ||
    (y.headers?.length ?? 0) - (x.headers?.length ?? 0) ||
    (y.queryParams?.length ?? 0) - (x.queryParams?.length ?? 0) ||
    (a.created < b.created ? -1 : a.created > b.created ? 1 : 0) ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
    a.rule - b.rule ||
    a.match - b.match
  );
}

/** The routes in precedence order, each with its `order`. */
export function ordered(list: Ranked[]): HttpRoute[] {
  return [...list].sort(comparePrecedence).map((r, order) => ({ ...r.route, order }));
}
