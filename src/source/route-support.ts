/**
 * Whether a load balancer's HTTP capabilities can serve one route as it is: the one check the core
 * (applyCapabilities) and the Gateway API source (a route refused alone, naming the field) share.
 * Pure.
 */
import type { HttpCapabilities } from '../adapter/contract.ts';
import type { HttpRoute } from '../model/types.ts';
import { pcre2Problem } from './regex-dialect.ts';

/** What of a route the adapter cannot serve, in words; undefined when it can serve all of it. */
export function routeLacks(r: HttpRoute, http: HttpCapabilities): string | undefined {
  if (!http.pathTypes.includes(r.pathType)) return `path match type ${r.pathType}`;
  if (r.headers?.length && !http.headerMatches) return 'header matches';
  if (r.queryParams?.length && !http.queryMatches) return 'query parameter matches';
  if (
    !http.regexMatches &&
    [...(r.headers ?? []), ...(r.queryParams ?? [])].some((m) => m.type === 'RegularExpression')
  )
    return 'regular expression header or query parameter matches';
  const named = http.matchNames
    ? [...(r.headers ?? []), ...(r.queryParams ?? [])].find((m) => !http.matchNames!.pattern.test(m.name))
    : undefined;
  if (named)
    return `match names other than ${http.matchNames!.description} (${JSON.stringify(named.name.slice(0, 64))})`;
  if (http.regexDialect === 'pcre2') {
    const regexes = [
      ...(r.pathType === 'RegularExpression' ? [r.path] : []),
      ...[...(r.headers ?? []), ...(r.queryParams ?? [])]
        .filter((m) => m.type === 'RegularExpression')
        .map((m) => m.value),
    ];
    const bad = regexes.find((re) => pcre2Problem(re) !== undefined);
    if (bad !== undefined)
      return `the regular expression ${JSON.stringify(bad.slice(0, 64))} (${pcre2Problem(bad)!})`;
  }
  if (r.method && !http.methodMatches) return 'method matches';
  if (r.sourceRanges && !http.sourceRanges)
    return 'client address filters on HTTP routes (npl-lb.io/source-ranges)';
  if (r.sourceRanges && http.maxSourceRanges !== undefined && r.sourceRanges.length > http.maxSourceRanges)
    return `client filters of ${r.sourceRanges.length} ranges (npl-lb.io/source-ranges; at most ${http.maxSourceRanges})`;
  if ((r.requestHeaders || r.responseHeaders) && !http.headerModifiers) return 'header modifiers';
  if (r.redirect && !http.redirects) return 'request redirects';
  if (r.redirect && http.redirectCodes && !http.redirectCodes.includes(r.redirect.statusCode))
    return `redirects with status ${r.redirect.statusCode}`;
  if (http.maxQueryMatches !== undefined && (r.queryParams?.length ?? 0) > http.maxQueryMatches)
    return `more than ${http.maxQueryMatches} query parameter match${http.maxQueryMatches === 1 ? '' : 'es'} in one rule`;
  if (r.rewrite && !http.rewrites) return 'URL rewrites';
  if (r.backends && !http.weights) return 'weighted backends';
  if (r.backends?.some((b) => b.requestHeaders) && !http.backendHeaderModifiers)
    return 'header modifiers on a backendRef';
  if (r.timeoutMs !== undefined && !http.timeouts) return 'request timeouts';
  if (r.cors && !http.cors) return 'CORS';
  if (r.mirrors && !http.mirror) return 'request mirrors';
  if (r.mirrors && http.mirror && r.mirrors.length > http.mirror.maxPerRoute)
    return `more than ${http.mirror.maxPerRoute} request mirrors in one rule`;
  return undefined;
}
