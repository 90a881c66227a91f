/**
 * Gateway API routes (routes with `order`) in a `mode http` frontend, with the model's semantics
 * (src/model/http-match.ts): the most specific host that matches takes the request (a route of a
 * less specific host never sees a host another route names: listener isolation), then the first
 * route by order whose path (Exact, segment-aware prefix, anchored regular expression), headers,
 * query parameters and method match. The chosen route is kept in `txn.npl_route`; its header
 * modifiers, its weighted pick (`rand`, with a 500 for the share of a backend that does not
 * resolve) and its backend hang off that variable. Every value is one quoted argument (encode.ts);
 * names HAProxy reads inside a fetch's parentheses must be plain tokens (checked before). The
 * whole route is kept in a comment, URI-encoded, so observe() gives back exactly what was applied.
 * Pure.
 */
import { firstMatchOrder } from '../../src/model/route-order.ts';
import type { HeaderModifier, HttpRoute, L7VirtualService, SniRoute } from '../../src/model/types.ts';

/**
 * Whether a frontend's routes take the rules below rather than plain host and path ACLs: Gateway
 * API routes (`order`), and Ingress rules that redirect (npl-lb.io/ssl-redirect) or filter clients
 * (npl-lb.io/source-ranges), which `use_backend` alone cannot say.
 */
export const needsRouteRules = (v: L7VirtualService): boolean =>
  v.listenerHosts !== undefined ||
  v.clientValidation?.subjectHeader !== undefined ||
  v.routes.some((r) => r.order !== undefined || r.redirect !== undefined || r.sourceRanges !== undefined);
import { logFormatArg, pct, quoteArg } from './encode.ts';
import {
  clientSubjectRules,
  type GatewayRules,
  hostAcl,
  hostRank,
  type HttpAction,
  type HttpRule,
  misdirectedRules,
  type SwitchRule,
} from './frontend-rules.ts';

export type { Acl, GatewayRules, HttpAction, HttpRule, SwitchRule } from './frontend-rules.ts';
import { srcAclValues } from './policy-lines.ts';
import { corsRules } from './cors-rules.ts';
import { mirrorRules } from './mirrors.ts';

function actionText(a: HttpAction): string {
  switch (a.type) {
    case 'set-var':
      return `set-var(${a.name}) ${a.expr}`;
    case 'set-header':
    case 'add-header':
      return `${a.type} ${a.header} ${a.fmt}`;
    case 'del-header':
      return `del-header ${a.header}`;
    case 'redirect':
      return `redirect location ${a.location} code ${a.code}`;
    case 'set-path':
      return `set-path ${a.fmt}`;
    case 'wait-for-body':
      return `wait-for-body time ${a.ms}`;
    case 'lua':
      return `lua.${a.name} ${a.params}`;
    case 'return':
      // Headers need a body to go with (the Data Plane API's return_hdrs), so an empty one.
      return a.hdrs
        ? `return status ${a.status} content-type ${RETURN_TYPE} lf-string ${RETURN_BODY}${a.hdrs.map((h) => ` hdr ${h.name} ${h.fmt}`).join('')}`
        : `return status ${a.status}`;
  }
}

/** The content type and (empty) body of an answer HAProxy gives with headers. */
export const RETURN_TYPE = 'text/plain';
export const RETURN_BODY = '"%[str()]"';

/** An http-request / http-response rule as a configuration line (also the simulator's). */
export const httpRuleLine = (kind: 'request' | 'response', r: HttpRule): string =>
  `http-${kind} ${actionText(r.action)}${r.cond ? ` if ${r.cond}` : ''}`;

/** The variable a route's backend timeout travels in, from the frontend to its pool's backend (ms). */
export const ROUTE_TIMEOUT_VAR = 'txn.npl_timeout';

/** Header and query names HAProxy reads inside `req.hdr(...)` / `urlp(...)`. */
export const FETCH_NAME = /^[A-Za-z0-9_-]+$/;

const enc = pct;

/** Whether every host `narrow` matches, `wide` matches too (wide is less specific). */
function covers(wide: string, narrow: string): boolean {
  if (wide === '') return narrow !== '';
  if (!wide.startsWith('*.') || wide === narrow) return false;
  const bare = narrow.startsWith('*.') ? narrow.slice(1) : `.${narrow}`;
  return bare.endsWith(wide.slice(1)) && bare.length > wide.length - 1;
}

/**
 * A log-format value (set-header): `%` is HAProxy's, written `%%`. An empty value is the empty
 * sample `%[str()]`: HAProxy drops an empty quoted argument, and the rule would lose its value.
 */
const fmt = logFormatArg;

function modifierRules(m: HeaderModifier | undefined, cond: string): HttpRule[] {
  if (!m) return [];
  return [
    ...m.set.map((h): HttpRule => ({
      action: { type: 'set-header', header: quoteArg(h.name), fmt: fmt(h.value) },
      cond,
    })),
    ...m.add.map((h): HttpRule => ({
      action: { type: 'add-header', header: quoteArg(h.name), fmt: fmt(h.value) },
      cond,
    })),
    ...m.remove.map((n): HttpRule => ({ action: { type: 'del-header', header: quoteArg(n) }, cond })),
  ];
}

/**
 * A route's own backend timeout, set for its requests for the pool's backend to apply (HAProxy 2.6
 * sets a server timeout only in a backend: config.ts); 0 lifts it (a day).
 */
function timeoutRules(r: HttpRoute, cond: string): HttpRule[] {
  if (r.timeoutMs === undefined) return [];
  const ms = r.timeoutMs > 0 ? r.timeoutMs : 86_400_000;
  return [{ action: { type: 'set-var', name: ROUTE_TIMEOUT_VAR, expr: `int(${ms})` }, cond }];
}

/** Static text inside a log-format string. */
const lit = (s: string): string => s.replaceAll('%', '%%');
const DEFAULT_PORT = { http: 80, https: 443 } as const;
/** The request's path after the matched prefix (ReplacePrefixMatch). */
const restAfter = (r: HttpRoute): string => `%[path,bytes(${r.path.replace(/\/+$/, '').length})]`;

/**
 * A replaced path as a log-format string, and, for a prefix replaced by '/', the rule for the path
 * that is the prefix itself (which becomes '/').
 */
function replacedPath(
  r: HttpRoute,
  m: NonNullable<HttpRoute['rewrite']>['path'],
): { fmt: string; exact?: string } {
  if (m!.type === 'ReplaceFullPath') return { fmt: lit(m!.value) };
  const base = m!.value.replace(/\/+$/, '');
  return base === '' ? { fmt: restAfter(r), exact: '/' } : { fmt: `${lit(base)}${restAfter(r)}` };
}

function redirectRules(r: HttpRoute, p: string, scheme: 'http' | 'https'): HttpRule[] {
  const to = r.redirect!;
  const toScheme = to.scheme ?? scheme;
  const host = to.hostname !== undefined ? lit(to.hostname) : '%[hdr(host),field(1,:),lower]';
  // The port: the one asked for, none when the scheme changes, else the request's own.
  const port =
    to.port !== undefined
      ? to.port === DEFAULT_PORT[toScheme]
        ? ''
        : `:${to.port}`
      : to.scheme && to.scheme !== scheme
        ? ''
        : '%[hdr(host),regsub(^[^:]*,)]';
  const query = '%[url,regsub(^[^?]*,)]';
  const head = `${toScheme}://${host}${port}`;
  const line = (path: string, cond: string): HttpRule => ({
    action: { type: 'redirect', location: quoteArg(`${head}${path}${query}`), code: to.statusCode },
    cond,
  });
  if (!to.path) return [line('%[path]', `is_${p}`)];
  const { fmt: path, exact } = replacedPath(r, to.path);
  if (exact === undefined) return [line(path, `is_${p}`)];
  return [line(exact, `is_${p} ${p}_whole`), line(path, `is_${p} !${p}_whole`)];
}

function rewriteRules(r: HttpRoute, p: string): HttpRule[] {
  const rw = r.rewrite;
  if (!rw) return [];
  const out: HttpRule[] = [];
  const at = `is_${p}`;
  if (rw.hostname !== undefined) {
    out.push({ action: { type: 'set-header', header: 'Host', fmt: fmt(rw.hostname) }, cond: at });
  }
  if (rw.path) {
    const { fmt: path, exact } = replacedPath(r, rw.path);
    if (exact === undefined) out.push({ action: { type: 'set-path', fmt: quoteArg(path) }, cond: at });
    else {
      // Decided on the path as it came: the first set-path changes what `${p}_whole` would see.
      const whole = '{ var(txn.npl_whole) -m bool }';
      out.push(
        { action: { type: 'set-var', name: 'txn.npl_whole', expr: 'bool(true)' }, cond: `${at} ${p}_whole` },
        { action: { type: 'set-path', fmt: quoteArg(exact) }, cond: `${at} ${whole}` },
        { action: { type: 'set-path', fmt: quoteArg(path) }, cond: `${at} !${whole}` },
      );
    }
  }
  return out;
}

/**
 * A route's match as ACLs (added through `acl`) and the condition that picks it: its host (a
 * less specific host never takes a request another route's host names), path, headers, query
 * parameters and method; and `<p>_whole`, the prefix itself, for rewrites and redirects.
 */
function matchConds(
  r: HttpRoute,
  p: string,
  hosts: string[],
  hostName: (h: string) => string,
  acl: (name: string, criterion: string, value: string) => void,
): string[] {
  const conds: string[] = [];
  if (r.host) conds.push(hostName(r.host));
  for (const other of hosts) if (covers(r.host, other)) conds.push(`!${hostName(other)}`);
  let hasPath = true;
  if (r.pathType === 'Exact') acl(`${p}_path`, 'path', `-m str ${quoteArg(r.path)}`);
  else if (r.pathType === 'RegularExpression')
    acl(`${p}_path`, 'path', `-m reg ${quoteArg(`^(?:${r.path})$`)}`);
  else if (r.path.replace(/\/+$/, '') !== '') {
    const prefix = r.path.replace(/\/+$/, '');
    acl(`${p}_path`, 'path', `-m str ${quoteArg(prefix)}`);
    acl(`${p}_path`, 'path', `-m beg ${quoteArg(`${prefix}/`)}`);
  } else hasPath = false;
  if (hasPath) conds.push(`${p}_path`);
  (r.headers ?? []).forEach((h, j) => {
    const how = h.type === 'Exact' ? `-m str ${quoteArg(h.value)}` : `-m reg ${quoteArg(`^(?:${h.value})$`)}`;
    acl(`${p}_hdr${j}`, `req.hdr(${h.name})`, how);
    conds.push(`${p}_hdr${j}`);
  });
  (r.queryParams ?? []).forEach((q, j) => {
    const how = q.type === 'Exact' ? `-m str ${quoteArg(q.value)}` : `-m reg ${quoteArg(`^(?:${q.value})$`)}`;
    acl(`${p}_q${j}`, `urlp(${q.name})`, how);
    conds.push(`${p}_q${j}`);
  });
  if (r.pathType === 'Prefix' || r.pathType === 'ImplementationSpecific') {
    acl(`${p}_whole`, 'path', `-m str ${quoteArg(r.path.replace(/\/+$/, '') || '/')}`);
  }
  if (r.method) {
    acl(`${p}_method`, 'method', r.method);
    conds.push(`${p}_method`);
  }
  return conds;
}

/** The routes' ACLs and rules, with the model's semantics (see the top of this file). */
export function gatewayRules(v: L7VirtualService, instance = ''): GatewayRules {
  const routes = sortedRoutes(v);
  const hosts = [...new Set(routes.map((r) => r.host).filter(Boolean))];
  const hostName = (h: string) => `h${hosts.indexOf(h)}`;
  const out: GatewayRules = { acls: [], request: [], response: [], switching: [] };
  const acl = (name: string, criterion: string, value: string) => out.acls.push({ name, criterion, value });
  for (const h of hosts) {
    const [criterion, ...value] = hostAcl(h).split(' ');
    acl(hostName(h), criterion!, value.join(' '));
  }
  const picks: HttpRule[] = [];
  const tail: HttpRule[] = [];
  routes.forEach((r, i) => {
    const p = `r${i}`;
    const conds = matchConds(r, p, hosts, hostName, acl);
    picks.push({
      action: { type: 'set-var', name: 'txn.npl_route', expr: `int(${i})` },
      cond: ['!{ var(txn.npl_route) -m found }', ...conds].join(' '),
    });
    acl(`is_${p}`, 'var(txn.npl_route)', `-m int ${i}`);
    const at = `is_${p}`;
    // Its client filter before anything else it does: 403 from outside the ranges (none: all).
    // The ranges go on as many lines of one ACL as they need (HAProxy ORs them; policy-lines.ts).
    if (r.sourceRanges) {
      for (const value of srcAclValues(r.sourceRanges)) acl(`${p}_src`, 'src', value);
      tail.push({
        action: { type: 'return', status: 403 },
        cond: r.sourceRanges.length > 0 ? `${at} !${p}_src` : at,
      });
    }
    // Its CORS policy next: a preflight answered here, an allowed origin kept for the answer.
    if (r.cors) {
      const c = corsRules(r.cors, p, at);
      out.acls.push(...c.acls);
      tail.push(...c.request);
      out.response.push(...c.response);
    }
    tail.push(...modifierRules(r.requestHeaders, at), ...timeoutRules(r, at));
    out.response.push(...modifierRules(r.responseHeaders, at));
    if (r.redirect) {
      // A redirected request is copied before it is answered.
      tail.push(...mirrorRules(v, r, at, instance));
      tail.push(...redirectRules(r, p, v.protocol === 'HTTPS' ? 'https' : 'http'));
      return;
    }
    tail.push(...rewriteRules(r, p));
    // Its copies, of the request as the route changed it (mirrors.ts).
    tail.push(...mirrorRules(v, r, at, instance));
    if (r.backends) {
      const total = r.backends.reduce((s, b) => s + b.weight, 0);
      tail.push({ action: { type: 'set-var', name: 'txn.npl_pick', expr: `rand(${total})` }, cond: at });
      let from = 0;
      for (const b of r.backends) {
        const pick = `{ var(txn.npl_pick) -m int ge ${from} } { var(txn.npl_pick) -m int lt ${from + b.weight} }`;
        from += b.weight;
        if (b.weight === 0) continue;
        // The backend's own header changes (a backendRef's filters), after the route's, when it is picked.
        if (b.pool) tail.push(...modifierRules(b.requestHeaders, `${at} ${pick}`));
        if (b.pool) out.switching.push({ backend: b.pool, cond: `${at} ${pick}` });
        else tail.push({ action: { type: 'return', status: 500 }, cond: `${at} ${pick}` });
      }
    } else if (r.pool) out.switching.push({ backend: r.pool, cond: at });
    else tail.push({ action: { type: 'return', status: 500 }, cond: at });
  });
  // A request no route takes: 404, as the model says (a default backend takes it when there is one).
  if (!v.defaultPool) {
    tail.push({ action: { type: 'return', status: 404 }, cond: '!{ var(txn.npl_route) -m found }' });
  }
  out.request = [...clientSubjectRules(v), ...misdirectedRules(v, out), ...picks, ...tail];
  return out;
}

function sortedRoutes(v: L7VirtualService): HttpRoute[] {
  // Ingress rules (no order): the model's first-match order (Exact, then the longest prefix).
  if (v.routes.every((r) => r.order === undefined)) return firstMatchOrder(v.routes);
  return [...v.routes].sort((a, b) => hostRank(b.host) - hostRank(a.host) || (a.order ?? 0) - (b.order ?? 0));
}

/**
 * The lines inside the frontend, after its bind: each route kept whole in a comment (observe()
 * reads them back), then ACLs, http-request and http-response rules, and use_backend last (HAProxy
 * runs http-request rules before use_backend and warns when they come after).
 */
export function renderGatewayRoutes(v: L7VirtualService, instance = ''): string[] {
  const g = gatewayRules(v, instance);
  return [
    ...sortedRoutes(v).map((r, i) => `    # npl-lb groute ${i} json=${enc(JSON.stringify(r))}`),
    ...g.acls.map((a) => `    acl ${a.name} ${a.criterion} ${a.value}`),
    ...g.request.map((r) => `    ${httpRuleLine('request', r)}`),
    ...g.response.map((r) => `    ${httpRuleLine('response', r)}`),
    ...g.switching.map((r) => `    use_backend ${r.backend} if ${r.cond}`),
  ];
}

/** The routes of a frontend written by renderGatewayRoutes, or undefined when it has none. */
export function parseGatewayRoutes(body: string): HttpRoute[] | undefined {
  const found = [...body.matchAll(/# npl-lb groute \d+ json=(\S+)/g)];
  if (found.length === 0) return undefined;
  return found.map((m) => JSON.parse(decodeURIComponent(m[1]!)) as HttpRoute);
}

/**
 * TLS passthrough: a `mode tcp` frontend that waits for the ClientHello and routes by its SNI, the
 * most specific host first (exact, then the longest wildcard: one or more labels); a route for any
 * host is the default; with none, a name no route takes is closed unanswered. The routes are kept
 * in a comment for observe().
 */
export interface SniRules {
  /** The wait for the ClientHello (ms), then the accept once it is there. */
  inspectDelayMs: number;
  accept: string;
  switching: SwitchRule[];
  defaultBackend: string | undefined;
}

/**
 * `terminated`: the handshake ended at HAProxy (a TLS listener in Terminate mode), so the name is
 * the session's (`ssl_fc_sni`) and nothing waits for a ClientHello.
 */
export function sniRules(
  sni: SniRoute[],
  terminated = false,
  backendOf: (r: SniRoute) => string = (r) => r.pool,
): SniRules {
  const fetch = terminated ? 'ssl_fc_sni' : 'req_ssl_sni';
  const routes = [...sni].sort((a, b) => hostRank(b.host) - hostRank(a.host) || (a.host < b.host ? -1 : 1));
  const switching: SwitchRule[] = [];
  let fallback: string | undefined;
  for (const r of routes) {
    const backend = backendOf(r);
    if (r.host === '') fallback = backend;
    else if (r.host.startsWith('*.'))
      switching.push({ backend, cond: `{ ${fetch} -m end -i ${quoteArg(r.host.slice(1))} }` });
    else switching.push({ backend, cond: `{ ${fetch} -m str -i ${quoteArg(r.host)} }` });
  }
  // No route for the name: no backend, and HAProxy closes the connection before any handshake.
  return { inspectDelayMs: 5000, accept: '{ req_ssl_hello_type 1 }', switching, defaultBackend: fallback };
}

/** `backendOf`: where each route's connections go (its pool unless said; Mixed mode's loop). */
export function renderSniRoutes(
  sni: SniRoute[],
  terminated = false,
  backendOf?: (r: SniRoute) => string,
): string[] {
  const s = sniRules(sni, terminated, backendOf);
  return [
    `    # npl-lb sni json=${enc(JSON.stringify(sni))}`,
    ...(terminated
      ? []
      : [
          `    tcp-request inspect-delay ${s.inspectDelayMs / 1000}s`,
          `    tcp-request content accept if ${s.accept}`,
        ]),
    ...s.switching.map((r) => `    use_backend ${r.backend} if ${r.cond}`),
    ...(s.defaultBackend ? [`    default_backend ${s.defaultBackend}`] : []),
  ];
}

export function parseSniRoutes(body: string): SniRoute[] | undefined {
  const m = /# npl-lb sni json=(\S+)/.exec(body);
  return m ? (JSON.parse(decodeURIComponent(m[1]!)) as SniRoute[]) : undefined;
}
