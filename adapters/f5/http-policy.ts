/**
 * An L7 virtual service's routes as an AS3 `Endpoint_Policy` (strategy first-match), with the
 * model's request semantics (src/model/http-match.ts):
 *
 * - Rules go most specific host first (exact, the longest wildcard, then any host), then by the
 *   route's `order` (Gateway API) or Exact before the longest prefix (Ingress). A less specific
 *   host's rules exclude every more specific host of the service (`does-not-equal`,
 *   `does-not-end-with`), so a host's requests never fall through to another host's routes.
 * - Paths compare case-sensitively; a PathPrefix is whole segments (`equals` the prefix, or
 *   `starts-with` it and a '/': two rules). Header, query-parameter and method matches are
 *   conditions of the same rule (AND). LTM policies have no regular expressions: the adapter does
 *   not declare them and refuses a route that carries one (`routeProblem`).
 * - Actions: a redirect (`httpRedirect`, its location built in Tcl from the request where the
 *   route keeps a part of it), URL rewrites (`httpHeader` Host, `httpUri` path), header changes on
 *   request and response (set = remove then insert), and the forward to the route's pool. Weighted
 *   backends forward to a pool built for the rule (`ratio-member`, each member's ratio its backend's
 *   share divided among its members); the share of a backend that does not resolve sets a Tcl
 *   variable with that probability, and the service's iRule answers 500 when it is set.
 * - A route's client filter (an Ingress's npl-lb.io/source-ranges): before each of its rules, the
 *   same conditions and the client's address (`tcp address does-not-match` the ranges; none: any)
 *   mark the request, and the service's 403 iRule answers it.
 * - Persistence (a pool's BackendPolicy): AS3 keeps it on the virtual server, so each rule that
 *   forwards to a pool asking it carries a `persist` action (a cookie named per pool, as HAProxy
 *   names it, or the client's address for 30 minutes), and where any rule of the service persists,
 *   every other rule (and a last one for the default pool) disables it for its requests.
 *
 * Every value from a Kubernetes object reaches the policy either as a plain string AS3 stores as
 * it is, or, where BIG-IP would read Tcl (`tcl:` locations, and any value that itself starts with
 * `tcl:`), as a Tcl literal with every special character escaped. Pure.
 */
import type { HeaderModifier, HttpRoute, L7VirtualService, Pool } from '../../src/model/types.ts';
import { persistActions, routePersistence } from './persistence.ts';
import { coveredHosts, firstMatchOrder } from '../../src/model/route-order.ts';
import { meta, remark } from './as3-text.ts';

type Json = Record<string, unknown>;

/** The Tcl variable a rule sets when its request takes an unresolved backend's share (answer 500). */
export const SHARE_500_VARIABLE = 'npl_500';

/** The service's iRule: answers 500 for a request whose rule set the variable, then forgets it. */
export const IRULE_500 = [
  'when HTTP_REQUEST priority 900 {',
  `  if { [info exists ${SHARE_500_VARIABLE}] } {`,
  `    set npl_r $${SHARE_500_VARIABLE}`,
  `    unset ${SHARE_500_VARIABLE}`,
  '    if { $npl_r } { HTTP::respond 500 content "" noserver }',
  '  }',
  '}',
].join('\n');

/** The Tcl variable a filter rule sets for a request from outside a route's client ranges. */
export const FORBIDDEN_VARIABLE = 'npl_403';

/** The service's iRule for client filters: answers 403 for a request a filter rule marked. */
export const IRULE_403 = [
  'when HTTP_REQUEST priority 890 {',
  `  if { [info exists ${FORBIDDEN_VARIABLE}] } {`,
  `    unset ${FORBIDDEN_VARIABLE}`,
  '    HTTP::respond 403 content "" noserver',
  '  }',
  '}',
].join('\n');

/** A string as a Tcl word inside a substituted string: every character Tcl reads is escaped. */
export function tclLiteral(s: string): string {
  return s.replace(/[\\[\]${}";]/g, (c) => `\\${c}`);
}

/** A value BIG-IP stores as it is unless it starts with `tcl:`; such a value goes as a Tcl literal. */
export function policyValue(s: string): string {
  return /^tcl:/i.test(s) ? `tcl:${tclLiteral(s)}` : s;
}

/** Why F5 cannot serve a route as the model means it (undefined: it can). */
export function routeProblem(r: HttpRoute): string | undefined {
  if (r.pathType === 'RegularExpression')
    return `route ${r.source}: LTM policies have no regular expression paths`;
  const regex = [...(r.headers ?? []), ...(r.queryParams ?? [])].find((m) => m.type === 'RegularExpression');
  if (regex) return `route ${r.source}: LTM policies have no regular expression matches (${regex.name})`;
  return undefined;
}

const str = (operand: string, values: string[], caseSensitive = false): Json => ({
  operand,
  values,
  ...(caseSensitive ? { caseSensitive: true } : {}),
});

/** The host conditions of a route: its own host, and none of the more specific hosts it covers. */
function hostConditions(host: string, hosts: readonly string[]): Json[] {
  if (host !== '' && !host.startsWith('*.'))
    return [{ type: 'httpHost', event: 'request', host: str('equals', [host]) }];
  const { exact, wildcards } = coveredHosts(host, hosts);
  const wild = wildcards.map((h) => h.slice(1));
  return [
    ...(host ? [{ type: 'httpHost', event: 'request', host: str('ends-with', [host.slice(1)]) }] : []),
    ...(exact.length ? [{ type: 'httpHost', event: 'request', host: str('does-not-equal', exact) }] : []),
    ...(wild.length ? [{ type: 'httpHost', event: 'request', host: str('does-not-end-with', wild) }] : []),
  ];
}

/** The path condition(s) of a route: one per rule it becomes (a prefix is two). */
function pathVariants(r: HttpRoute): Json[][] {
  const uri = (operand: string, value: string) => ({
    type: 'httpUri',
    event: 'request',
    path: str(operand, [value], true),
  });
  if (r.pathType === 'Exact') return [[uri('equals', r.path)]];
  const prefix = r.path.replace(/\/+$/, '');
  return prefix === '' ? [[]] : [[uri('equals', prefix)], [uri('starts-with', `${prefix}/`)]];
}

function matchConditions(r: HttpRoute): Json[] {
  return [
    ...(r.headers ?? []).map((h) => ({
      type: 'httpHeader',
      event: 'request',
      name: h.name,
      all: str('equals', [h.value], true),
    })),
    ...(r.queryParams ?? []).map((q) => ({
      type: 'httpUri',
      event: 'request',
      name: q.name,
      queryParameter: str('equals', [q.value], true),
    })),
    ...(r.method ? [{ type: 'httpMethod', event: 'request', all: str('equals', [r.method], true) }] : []),
  ];
}

/** The request's path with the route's matched prefix replaced (Tcl), as the model's modifyPath. */
function prefixReplaced(r: HttpRoute, value: string): string {
  const cut = r.path.replace(/\/+$/, '').length;
  const base = value.replace(/\/+$/, '');
  const rest = `string range [HTTP::path] ${cut} end`;
  if (base !== '') return `${tclLiteral(base)}[${rest}]`;
  return `[if {[string length [HTTP::path]] > ${cut}} {${rest}} else {format /}]`;
}

function redirectLocation(vs: L7VirtualService, r: HttpRoute): string {
  const rd = r.redirect!;
  const scheme = vs.protocol === 'HTTPS' ? 'https' : 'http';
  const to = rd.scheme ?? scheme;
  const port = rd.port ?? (rd.scheme && rd.scheme !== scheme ? undefined : vs.port);
  const shown = port === undefined || port === (to === 'https' ? 443 : 80) ? '' : `:${port}`;
  const host = rd.hostname ? tclLiteral(rd.hostname) : '[string tolower [getfield [HTTP::host] ":" 1]]';
  const path = !rd.path
    ? '[HTTP::path]'
    : rd.path.type === 'ReplaceFullPath'
      ? tclLiteral(rd.path.value)
      : prefixReplaced(r, rd.path.value);
  return `tcl:${to}://${host}${shown}${path}[if {[HTTP::query] ne ""} {format ?%s [HTTP::query]}]`;
}

function headerActions(m: HeaderModifier | undefined, event: 'request' | 'response'): Json[] {
  if (!m) return [];
  const out: Json[] = [];
  for (const h of m.set) {
    out.push({ type: 'httpHeader', event, remove: { name: h.name } });
    out.push({ type: 'httpHeader', event, insert: { name: h.name, value: policyValue(h.value) } });
  }
  for (const h of m.add)
    out.push({ type: 'httpHeader', event, insert: { name: h.name, value: policyValue(h.value) } });
  for (const n of m.remove) out.push({ type: 'httpHeader', event, remove: { name: n } });
  return out;
}

/** The pool built for a weighted rule: name and members with ratios in proportion to the weights. */
export const splitPoolName = (vs: string, route: number): string => `${vs}_w${route}`;

function splitPool(
  r: HttpRoute,
  pools: ReadonlyMap<string, Pool>,
  owner: string,
  vs: string,
  route: number,
): Json | undefined {
  const shares = (r.backends ?? [])
    .filter((b) => b.pool && b.weight > 0)
    .map((b) => ({ weight: b.weight, pool: pools.get(b.pool!) }))
    .filter((s) => s.pool && s.pool.members.length > 0);
  if (shares.length === 0) return undefined;
  const per = shares.map((s) => s.weight / s.pool!.members.length);
  const top = Math.max(...per);
  const members = shares.flatMap((s, i) =>
    s.pool!.members.map((m) => ({
      servicePort: m.port,
      serverAddresses: [m.address],
      shareNodes: true,
      ratio: Math.max(1, Math.round((100 * per[i]!) / top)),
      adminState: m.enabled ? 'enable' : 'disable',
      remark: remark(`node ${m.node}`),
    })),
  );
  return {
    class: 'Pool',
    remark: remark(`npl-lb weighted rule ${route} of ${vs}`),
    loadBalancingMode: 'ratio-member',
    monitors: [shares[0]!.pool!.health === 'udp' ? 'udp' : 'tcp'],
    members,
    metadata: meta({ owner, split: vs }),
  };
}

/**
 * A route's rules, one per path variant (`route_<i>[_<v>]`), each after a rule marking the clients
 * its filter refuses (`_src`: the 403 iRule answers them).
 */
function routeRules(r: HttpRoute, i: number, base: Json[], actions: Json[]): Json[] {
  const ranges = r.sourceRanges;
  return pathVariants(r).flatMap((path, v, all) => {
    const name = all.length > 1 ? `route_${i}_${v}` : `route_${i}`;
    const refused = ranges
      ? [
          {
            name: `${name}_src`,
            conditions: [
              ...base,
              ...path,
              ...(ranges.length > 0
                ? [{ type: 'tcp', event: 'request', address: { operand: 'does-not-match', values: ranges } }]
                : []),
            ],
            actions: [
              { type: 'tcl', event: 'request', setVariable: { name: FORBIDDEN_VARIABLE, expression: '1' } },
            ],
          },
        ]
      : [];
    return [...refused, { name, conditions: [...base, ...path], actions }];
  });
}

/** A route's rewrites of the host and path, and its request and response header changes. */
function rewriteActions(r: HttpRoute): Json[] {
  const actions: Json[] = [];
  if (r.rewrite?.hostname)
    actions.push({
      type: 'httpHeader',
      event: 'request',
      replace: { name: 'Host', value: r.rewrite.hostname },
    });
  if (r.rewrite?.path) {
    const p = r.rewrite.path;
    const path = p.type === 'ReplaceFullPath' ? policyValue(p.value) : `tcl:${prefixReplaced(r, p.value)}`;
    actions.push({ type: 'httpUri', event: 'request', replace: { path } });
  }
  actions.push(...headerActions(r.requestHeaders, 'request'));
  actions.push(...headerActions(r.responseHeaders, 'response'));
  return actions;
}

/**
 * The share of a route's requests answered 500 (its unresolved backends' weight), as the variable
 * the 500 iRule reads; none when every request has a pool. Nothing to send to (no pool, every
 * share unresolved, or weights all 0): every request.
 */
function share500Action(r: HttpRoute, hasSplit: boolean): Json | undefined {
  const backends = r.backends ?? [];
  const total = backends.reduce((s, b) => s + b.weight, 0);
  const unresolved = backends.filter((b) => !b.pool).reduce((s, b) => s + b.weight, 0);
  const all500 = backends.length > 0 ? total === 0 || !hasSplit : !r.pool;
  const p500 = all500 ? 1 : total > 0 ? unresolved / total : 0;
  if (p500 <= 0) return undefined;
  return {
    type: 'tcl',
    event: 'request',
    setVariable: {
      name: SHARE_500_VARIABLE,
      expression: p500 >= 1 ? '1' : `[expr {rand() < ${p500.toFixed(6)}}]`,
    },
  };
}

export interface RenderedPolicy {
  rules: Json[];
  /** Pools built for weighted rules, by name. */
  splitPools: Record<string, Json>;
  /** The pools each of those draws its members from. */
  splitFrom: Map<string, string[]>;
  /** Whether a rule sets the 500 variable (the service then carries IRULE_500). */
  needs500: boolean;
  /** Whether a route filters clients (the service then carries IRULE_403). */
  needs403: boolean;
}

export function renderHttpPolicy(
  vs: L7VirtualService,
  owner: string,
  ref: (pool: string) => string,
  pools: ReadonlyMap<string, Pool>,
): RenderedPolicy {
  const hosts = [...new Set(vs.routes.map((r) => r.host))];
  const rules: Json[] = [];
  const splitPools: Record<string, Json> = {};
  const splitFrom = new Map<string, string[]>();
  let needs500 = false;
  const persisted = (p: string | undefined) => (p ? pools.get(p)?.persistence : undefined);
  // A route's session cookie: its pool's (a weighted rule's pools are its variants: one session).
  const sessionOf = (p: string | undefined) => (p ? pools.get(p)?.sessionCookie : undefined);
  const anyPersists =
    vs.routes.some((r) => routePersistence(r, pools) !== undefined) || !!persisted(vs.defaultPool);
  firstMatchOrder(vs.routes).forEach((r, i) => {
    const actions: Json[] = [];
    if (r.redirect) {
      actions.push({
        type: 'httpRedirect',
        event: 'request',
        location: redirectLocation(vs, r),
        code: r.redirect.statusCode,
      });
    } else {
      actions.push(...rewriteActions(r));
      const backends = r.backends ?? [];
      const split = backends.length > 0 ? splitPool(r, pools, owner, vs.name, i) : undefined;
      const share500 = share500Action(r, split !== undefined);
      if (share500) {
        needs500 = true;
        actions.push(share500);
      }
      const kind = routePersistence(r, pools);
      const sticky = kind === 'mixed' ? undefined : kind;
      if (split) {
        const name = splitPoolName(vs.name, i);
        splitPools[name] = split;
        splitFrom.set(
          name,
          backends.flatMap((b) => (b.pool && b.weight > 0 ? [b.pool] : [])),
        );
        const first = backends.find((b) => b.pool && b.weight > 0)?.pool ?? undefined;
        actions.push(...persistActions(sticky, name, anyPersists, sessionOf(first)));
        actions.push({ type: 'forward', event: 'request', select: { pool: { use: name } } });
      } else if (r.pool) {
        actions.push(...persistActions(sticky, r.pool, anyPersists, sessionOf(r.pool)));
        actions.push({ type: 'forward', event: 'request', select: { pool: { use: ref(r.pool) } } });
      }
    }
    rules.push(...routeRules(r, i, [...hostConditions(r.host, hosts), ...matchConditions(r)], actions));
  });
  // The default pool's requests, where the service persists: its own persistence, or none.
  if (anyPersists && vs.defaultPool)
    rules.push({
      name: 'default_pool',
      conditions: [],
      actions: [
        ...persistActions(persisted(vs.defaultPool), vs.defaultPool, true, sessionOf(vs.defaultPool)),
        { type: 'forward', event: 'request', select: { pool: { use: ref(vs.defaultPool) } } },
      ],
    });
  return {
    rules,
    splitPools,
    splitFrom,
    needs500,
    needs403: vs.routes.some((r) => r.sourceRanges !== undefined),
  };
}
