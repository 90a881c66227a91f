/**
 * An L7 virtual service's routes as an Avi HTTP policy set, with the model's request semantics
 * (src/model/http-match.ts). Avi evaluates request rules by index and the first that matches acts:
 *
 * - Rules go most specific host first (exact, the longest wildcard, then any host), then by the
 *   route's `order` (Gateway API) or Exact before the longest prefix (Ingress). After a host's
 *   rules comes a fence rule on that host alone (the default pool group, else a local 404), so a
 *   host's requests never fall through to a less specific host's routes (a MatchTarget has one
 *   host match, so the exclusion cannot be a condition as on F5).
 * - Paths compare case-sensitively; a PathPrefix is whole segments (EQUALS the prefix, or
 *   BEGINS_WITH it and a '/': two rules). Headers (HDR_EQUALS, case-sensitive), one query
 *   parameter (the query string EQUALS `k=v`, BEGINS_WITH `k=v&`, ENDS_WITH `&k=v` or CONTAINS
 *   `&k=v&`: four rules) and the method are matches of the same rule. No regular expressions (Avi
 *   takes them through string groups only): the adapter does not declare them.
 * - Actions: a redirect alone (protocol, host, port, path tokens, the query kept), or a URL rewrite
 *   (host header, path tokens), request header changes (set = remove then add), and a switch to a
 *   pool group: the route's pool's, or for weighted backends a pool group built for the rule with
 *   each pool at its weight as ratio. The share of a backend that does not resolve goes in a
 *   request header the service's DataScript reads (and removes) to answer 500 with that
 *   probability; every rule of such a service removes a copy the client sent.
 * - Response header changes are a response policy with the same rules in the same order.
 * - A route's client filter (an Ingress's npl-lb.io/source-ranges): before its own rules, the same
 *   matches with the client's address IS_NOT_IN the ranges answer a local 403 (none: every client).
 *
 * Values from Kubernetes objects are JSON strings in Avi's fields, never code: the DataScript is a
 * constant, and what it reads is a number we wrote. Pure.
 */
import type { HeaderModifier, HttpRoute, L7VirtualService, PathModifier } from '../../src/model/types.ts';
import { firstMatchOrder } from '../../src/model/route-order.ts';
import { limitName } from '../../src/model/names.ts';

type Json = Record<string, unknown>;

/** The request header a rule sets with its unresolved share (0 < p <= 1), read by the DataScript. */
export const SHARE_HEADER = 'X-Npl-Lb-Unresolved-Share';

/** The service's DataScript: answers 500 with the probability the rule wrote, and forgets it. */
export const SHARE_SCRIPT = [
  `local share = avi.http.get_header("${SHARE_HEADER}")`,
  'if share then',
  `  avi.http.remove_header("${SHARE_HEADER}")`,
  '  if math.random() < tonumber(share) then',
  '    avi.http.response(500)',
  '  end',
  'end',
].join('\n');

/** Why Avi cannot serve a route as the model means it (undefined: it can). */
export function routeProblem(r: HttpRoute): string | undefined {
  if (r.pathType === 'RegularExpression')
    return `route ${r.source}: Avi policies take regular expressions only through string groups`;
  const regex = [...(r.headers ?? []), ...(r.queryParams ?? [])].find((m) => m.type === 'RegularExpression');
  if (regex) return `route ${r.source}: Avi policies take regular expressions only through string groups`;
  if (r.redirect && !REDIRECT_CODES[r.redirect.statusCode])
    return `route ${r.source}: Avi redirects with 301, 302 or 307, not ${r.redirect.statusCode}`;
  if ((r.queryParams?.length ?? 0) > 1)
    return `route ${r.source}: Avi matches one query parameter per rule; this route has ${r.queryParams!.length}`;
  return undefined;
}

const byName = (type: string, name: string): string => `/api/${type}?name=${encodeURIComponent(name)}`;
export const poolGroupName = (vs: string, pool: string): string => limitName(`${vs}--${pool}`, 200);
/** A weighted rule's pool group: `--rule-` cannot be part of a pool name (they carry the cluster first). */
export const splitGroupName = (vs: string, route: number): string => limitName(`${vs}--rule-${route}`, 200);

/** The redirect status codes Avi has (HTTPRedirectStatusCode); capabilities declare these only. */
export const REDIRECT_CODES: Record<number, string> = {
  301: 'HTTP_REDIRECT_STATUS_CODE_301',
  302: 'HTTP_REDIRECT_STATUS_CODE_302',
  307: 'HTTP_REDIRECT_STATUS_CODE_307',
};

/** Path tokens (joined by '/'): a string, then the request's path segments from `from` on. */
function pathParam(r: HttpRoute, m: PathModifier): Json {
  const value = m.value.replace(/^\/+|\/+$/g, '');
  const tokens: Json[] = value ? [{ type: 'URI_TOKEN_TYPE_STRING', str_value: value }] : [];
  if (m.type === 'ReplacePrefixMatch') {
    const segments = r.path.replace(/\/+$/, '').split('/').length - 1;
    tokens.push({ type: 'URI_TOKEN_TYPE_PATH', start_index: segments });
  }
  return { type: 'URI_PARAM_TYPE_TOKENIZED', tokens };
}

const stringParam = (s: string): Json => ({
  type: 'URI_PARAM_TYPE_TOKENIZED',
  tokens: [{ type: 'URI_TOKEN_TYPE_STRING', str_value: s }],
});

function redirectAction(vs: L7VirtualService, r: HttpRoute): Json {
  const rd = r.redirect!;
  const scheme = vs.protocol === 'HTTPS' ? 'https' : 'http';
  const to = rd.scheme ?? scheme;
  const port = rd.port ?? (rd.scheme && rd.scheme !== scheme ? (to === 'https' ? 443 : 80) : vs.port);
  return {
    protocol: to.toUpperCase(),
    port,
    ...(rd.hostname ? { host: stringParam(rd.hostname) } : {}),
    ...(rd.path ? { path: pathParam(r, rd.path) } : {}),
    keep_query: true,
    status_code: REDIRECT_CODES[rd.statusCode],
  };
}

function headerActions(m: HeaderModifier | undefined): Json[] {
  if (!m) return [];
  const hdr = (name: string, value?: string) => ({
    name,
    ...(value !== undefined ? { value: { val: value } } : {}),
  });
  return [
    ...m.set.flatMap((h) => [
      { action: 'HTTP_REMOVE_HDR', hdr: hdr(h.name) },
      { action: 'HTTP_ADD_HDR', hdr: hdr(h.name, h.value) },
    ]),
    ...m.add.map((h) => ({ action: 'HTTP_ADD_HDR', hdr: hdr(h.name, h.value) })),
    ...m.remove.map((n) => ({ action: 'HTTP_REMOVE_HDR', hdr: hdr(n) })),
  ];
}

function hostMatch(host: string): Json {
  return host.startsWith('*.')
    ? { match_criteria: 'HDR_ENDS_WITH', match_case: 'INSENSITIVE', value: [host.slice(1)] }
    : { match_criteria: 'HDR_EQUALS', match_case: 'INSENSITIVE', value: [host] };
}

/** The match targets one route becomes (one rule each). */
function matchVariants(r: HttpRoute): Json[] {
  const base: Json = {
    ...(r.host ? { host_hdr: hostMatch(r.host) } : {}),
    ...(r.headers?.length
      ? {
          hdrs: r.headers.map((h) => ({
            hdr: h.name,
            match_criteria: 'HDR_EQUALS',
            match_case: 'SENSITIVE',
            value: [h.value],
          })),
        }
      : {}),
    ...(r.method ? { method: { match_criteria: 'IS_IN', methods: [`HTTP_METHOD_${r.method}`] } } : {}),
  };
  const path = (criteria: string, s: string) => ({
    path: { match_criteria: criteria, match_case: 'SENSITIVE', match_str: [s] },
  });
  const prefix = r.path.replace(/\/+$/, '');
  const paths: Json[] =
    r.pathType === 'Exact'
      ? [path('EQUALS', r.path)]
      : prefix === ''
        ? [{}]
        : [path('EQUALS', prefix), path('BEGINS_WITH', `${prefix}/`)];
  const q = r.queryParams?.[0];
  // Avi compares the query string as sent (not decoded): the pair as a client percent-encodes it.
  const kv = q ? `${encodeURIComponent(q.name)}=${encodeURIComponent(q.value)}` : '';
  const queries: Json[] = q
    ? [
        ['QUERY_MATCH_EQUALS', kv],
        ['QUERY_MATCH_BEGINS_WITH', `${kv}&`],
        ['QUERY_MATCH_ENDS_WITH', `&${kv}`],
        ['QUERY_MATCH_CONTAINS', `&${kv}&`],
      ].map(([c, s]) => ({
        query: { match_criteria: c, match_case: 'SENSITIVE', match_decoded_string: false, match_str: [s] },
      }))
    : [{}];
  return paths.flatMap((p) => queries.map((qm) => ({ ...base, ...p, ...qm })));
}

export interface RenderedPolicy {
  /** HTTP request rules, by index. */
  request: Json[];
  /** HTTP response rules (same matches and order); empty when no route changes response headers. */
  response: Json[];
  /** Pool groups of weighted rules: name and members (pool name, ratio). */
  splitGroups: { name: string; members: { pool: string; ratio: number }[] }[];
  /** Pools the policy switches to through their own pool group. */
  pools: string[];
  /** Whether a rule has an unresolved share (the service then carries SHARE_SCRIPT). */
  needsScript: boolean;
}

/** Weights as Avi ratios (1-1000), in the same proportions. */
function ratios(weights: number[]): number[] {
  const top = Math.max(...weights);
  return top <= 1000 ? weights : weights.map((w) => Math.max(1, Math.round((1000 * w) / top)));
}

export function renderHttpPolicy(vs: L7VirtualService): RenderedPolicy {
  const ordered = firstMatchOrder(vs.routes);
  const needsScript = ordered.some((r) => unresolvedShare(r) > 0);
  const request: Json[] = [];
  const response: Json[] = [];
  const splitGroups: RenderedPolicy['splitGroups'] = [];
  const pools = new Set<string>();
  const anyResponse = ordered.some((r) => r.responseHeaders);
  const defaultSwitch = vs.defaultPool
    ? {
        action: 'HTTP_SWITCHING_SELECT_POOLGROUP',
        pool_group_ref: byName('poolgroup', poolGroupName(vs.name, vs.defaultPool)),
      }
    : { action: 'HTTP_SWITCHING_SELECT_LOCAL', status_code: 'HTTP_LOCAL_RESPONSE_STATUS_CODE_404' };
  const push = (name: string, match: Json, actions: Json, responseHdrs: Json[]) => {
    const index = request.length + 1;
    request.push({ name, index, enable: true, match, ...actions });
    if (anyResponse)
      response.push({
        name,
        index,
        enable: true,
        match,
        ...(responseHdrs.length ? { hdr_action: responseHdrs } : {}),
      });
  };
  const scrub = needsScript ? [{ action: 'HTTP_REMOVE_HDR', hdr: { name: SHARE_HEADER } }] : [];
  let fenced = new Set<string>();
  ordered.forEach((r, i) => {
    let actions: Json;
    if (r.redirect) actions = { redirect_action: redirectAction(vs, r) };
    else {
      const hdr = [...scrub, ...headerActions(r.requestHeaders)];
      const share = unresolvedShare(r);
      if (share > 0)
        hdr.push({
          action: 'HTTP_ADD_HDR',
          hdr: { name: SHARE_HEADER, value: { val: share >= 1 ? '1' : share.toFixed(6) } },
        });
      let switching: Json | undefined;
      const live = (r.backends ?? []).filter((b) => b.pool && b.weight > 0);
      if (r.backends && live.length > 0) {
        const name = splitGroupName(vs.name, i);
        const rs = ratios(live.map((b) => b.weight));
        splitGroups.push({ name, members: live.map((b, k) => ({ pool: b.pool!, ratio: rs[k]! })) });
        switching = { action: 'HTTP_SWITCHING_SELECT_POOLGROUP', pool_group_ref: byName('poolgroup', name) };
      } else if (!r.backends && r.pool) {
        pools.add(r.pool);
        switching = {
          action: 'HTTP_SWITCHING_SELECT_POOLGROUP',
          pool_group_ref: byName('poolgroup', poolGroupName(vs.name, r.pool)),
        };
      }
      const rewrite = r.rewrite
        ? {
            rewrite_url_action: {
              ...(r.rewrite.hostname ? { host_hdr: stringParam(r.rewrite.hostname) } : {}),
              ...(r.rewrite.path ? { path: pathParam(r, r.rewrite.path) } : {}),
              query: { keep_query: true },
            },
          }
        : {};
      actions = {
        ...rewrite,
        ...(hdr.length ? { hdr_action: hdr } : {}),
        ...(switching ? { switching_action: switching } : {}),
      };
    }
    const variants = matchVariants(r);
    if (r.sourceRanges)
      variants.forEach((match, v, all) =>
        push(
          `${i}${all.length > 1 ? `.${v}` : ''}.src`,
          { ...match, ...clientFilter(r.sourceRanges!) },
          {
            ...(scrub.length ? { hdr_action: scrub } : {}),
            switching_action: {
              action: 'HTTP_SWITCHING_SELECT_LOCAL',
              status_code: 'HTTP_LOCAL_RESPONSE_STATUS_CODE_403',
            },
          },
          [],
        ),
      );
    variants.forEach((match, v, all) =>
      push(`${i}${all.length > 1 ? `.${v}` : ''}`, match, actions, headerActions(r.responseHeaders)),
    );
    // The last route of a host: fence it, so none of its requests reach a less specific host.
    const next = ordered[i + 1];
    if (r.host !== '' && next?.host !== r.host && !fenced.has(r.host)) {
      fenced = new Set([...fenced, r.host]);
      push(
        `${i}.fence`,
        { host_hdr: hostMatch(r.host) },
        { ...(scrub.length ? { hdr_action: scrub } : {}), switching_action: defaultSwitch },
        [],
      );
    }
  });
  // Nothing matched and no default pool: 404, as the model answers (Avi would close the connection).
  if (!vs.defaultPool)
    push(
      'none',
      { path: { match_criteria: 'BEGINS_WITH', match_case: 'SENSITIVE', match_str: ['/'] } },
      { ...(scrub.length ? { hdr_action: scrub } : {}), switching_action: defaultSwitch },
      [],
    );
  if (vs.defaultPool) pools.add(vs.defaultPool);
  return { request, response, splitGroups, pools: [...pools].sort(), needsScript };
}

/**
 * The match of a route's requests from outside its client ranges: the client's address IS_NOT_IN
 * them (prefixes of both families); none left: no address match, every client.
 */
function clientFilter(ranges: readonly string[]): Json {
  if (ranges.length === 0) return {};
  return {
    client_ip: {
      match_criteria: 'IS_NOT_IN',
      prefixes: ranges.map((c) => {
        const [addr = '', mask = '0'] = c.split('/');
        return { ip_addr: { addr, type: addr.includes(':') ? 'V6' : 'V4' }, mask: Number(mask) };
      }),
    },
  };
}

/** The share of a route's requests that answer 500 (0 to 1). */
export function unresolvedShare(r: HttpRoute): number {
  if (r.redirect) return 0;
  if (!r.backends) return r.pool ? 0 : 1;
  const total = r.backends.reduce((s, b) => s + b.weight, 0);
  const live = r.backends.filter((b) => b.pool).reduce((s, b) => s + b.weight, 0);
  return total === 0 || live === 0 ? 1 : (total - live) / total;
}
