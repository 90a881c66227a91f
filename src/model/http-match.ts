/**
 * What an L7 virtual service does with one request, by the model's semantics: the reference every
 * adapter's rendering is held to (the memory device serves with it; conformance-modelled tests ask
 * it). The most specific matching host first, then the first route that matches by order; then a
 * redirect, or a backend chosen by weight (an unresolved one answers 500) with the request's
 * headers and URL rewritten. No match: 404. Pure.
 */
import { isPreflight, originAllowed, preflightHeaders, responseHeaders } from './cors.ts';
import type { HeaderModifier, HttpRoute, L4VirtualService, L7VirtualService, PathModifier } from './types.ts';

export interface HttpRequest {
  host: string;
  /** Path with an optional query string. */
  path: string;
  method?: string;
  headers?: Record<string, string>;
  scheme?: 'http' | 'https';
  port?: number;
  /** The server name of the TLS connection it came on (HTTPS), when the client sent one. */
  sni?: string;
}

export interface HttpOutcome {
  status: number;
  route?: HttpRoute;
  /** The pool the request is sent to. */
  pool?: string;
  /** A redirect's target. */
  location?: string;
  /** The request as the backend gets it. */
  upstream?: { host: string; path: string; headers: Record<string, string> };
  responseHeaders?: HeaderModifier;
  /**
   * Headers the answer carries for the route's CORS policy (names lower case): a preflight's
   * answer, or what an allowed origin's answer from a member gets.
   */
  cors?: Record<string, string>;
}

const bareHost = (h: string): string => h.toLowerCase().replace(/:\d+$/, '');

/**
 * How specifically a route host names a request host: higher is more specific; -1 no match. A
 * wildcard covers one or more labels (the Gateway API), or exactly one for an Ingress rule (no
 * `order`), as the Ingress spec says.
 */
function hostRank(routeHost: string, host: string, oneLabel = false): number {
  if (routeHost === '') return 0;
  if (routeHost === host) return 1_000_000;
  if (routeHost.startsWith('*.')) {
    const suffix = routeHost.slice(1);
    if (!host.endsWith(suffix) || host.length <= suffix.length) return -1;
    return oneLabel && host.slice(0, -suffix.length).includes('.') ? -1 : suffix.length;
  }
  return -1;
}

const rankOf = (r: HttpRoute, host: string): number => hostRank(r.host, host, r.order === undefined);

function pathMatches(r: HttpRoute, path: string): boolean {
  if (r.pathType === 'Exact') return path === r.path;
  if (r.pathType === 'RegularExpression') return new RegExp(`^(?:${r.path})$`).test(path);
  const prefix = r.path.replace(/\/+$/, '');
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

function routeMatches(r: HttpRoute, path: string, query: URLSearchParams, req: HttpRequest): boolean {
  if (!pathMatches(r, path)) return false;
  if (r.method && (req.method ?? 'GET') !== r.method) return false;
  const headers = new Map(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  for (const h of r.headers ?? []) {
    const v = headers.get(h.name.toLowerCase());
    if (v === undefined || (h.type === 'Exact' ? v !== h.value : !new RegExp(`^(?:${h.value})$`).test(v)))
      return false;
  }
  for (const q of r.queryParams ?? []) {
    const v = query.get(q.name);
    if (v === null || (q.type === 'Exact' ? v !== q.value : !new RegExp(`^(?:${q.value})$`).test(v)))
      return false;
  }
  return true;
}

/** Ingress rules (no `order`): Exact first, then the longest path. */
const ingressRank = (r: HttpRoute): number => (r.pathType === 'Exact' ? 1e6 : 0) + r.path.length;

function modifyPath(path: string, r: HttpRoute, m: PathModifier): string {
  if (m.type === 'ReplaceFullPath') return m.value;
  const prefix = r.path.replace(/\/+$/, '');
  const rest = path.slice(prefix.length);
  const base = m.value.replace(/\/+$/, '');
  const joined = `${base}${rest}`;
  return joined === '' ? '/' : joined.startsWith('/') ? joined : `/${joined}`;
}

function modifyHeaders(
  headers: Record<string, string>,
  m: HeaderModifier | undefined,
): Record<string, string> {
  if (!m) return headers;
  const out = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  for (const h of m.set) out.set(h.name.toLowerCase(), h.value);
  for (const h of m.add) {
    const k = h.name.toLowerCase();
    out.set(k, out.has(k) ? `${out.get(k)},${h.value}` : h.value);
  }
  for (const n of m.remove) out.delete(n.toLowerCase());
  return Object.fromEntries(out);
}

const DEFAULT_PORT = { http: 80, https: 443 } as const;

/**
 * The listener of `listenerHosts` (L7VirtualService) a name selects: the most specific hostname
 * that matches it (exact, then the longest wildcard, which covers one or more labels, then the
 * listener without one), or undefined when none does.
 */
export function listenerOf(listenerHosts: readonly string[], name: string): string | undefined {
  let best: string | undefined;
  let rank = -1;
  for (const h of listenerHosts) {
    const r = hostRank(h, name);
    if (r > rank) [best, rank] = [h, r];
  }
  return best;
}

/**
 * A CORS preflight is the load balancer's to answer: 200 with the policy's headers for an allowed
 * origin, 403 for another; it never reaches a member. Undefined for any other request.
 */
function preflightOutcome(route: HttpRoute, req: HttpRequest): HttpOutcome | undefined {
  if (!route.cors || !isPreflight(req.method ?? 'GET', req.headers ?? {})) return undefined;
  const origin = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'origin')?.[1];
  return originAllowed(route.cors.allowOrigins, origin)
    ? { status: 200, route, cors: preflightHeaders(route.cors, req.headers ?? {}) }
    : { status: 403, route };
}

/**
 * A request whose connection's server name selects another listener than its Host (HTTP/2
 * connection reuse across names a certificate covers): 421, whatever the routes say. A host asking
 * client certificates (hostClientValidation) is not reached over a handshake without a server name
 * either: that one asked nothing.
 */
function misdirected(vs: L7VirtualService, req: HttpRequest, host: string): boolean {
  const hosts = vs.listenerHosts;
  if (!hosts) return false;
  if (req.sni !== undefined) return listenerOf(hosts, bareHost(req.sni)) !== listenerOf(hosts, host);
  const selected = listenerOf(hosts, host);
  return (vs.hostClientValidation ?? []).some((h) => h.host === selected);
}

/** `pick` in [0, 1) chooses among weighted backends (a test passes it; Math.random otherwise). */
export function resolveRequest(vs: L7VirtualService, req: HttpRequest, pick = Math.random()): HttpOutcome {
  const host = bareHost(req.host);
  if (misdirected(vs, req, host)) return { status: 421 };
  let best = -1;
  for (const r of vs.routes) best = Math.max(best, rankOf(r, host));
  const candidates = best < 0 ? [] : vs.routes.filter((r) => rankOf(r, host) === best);
  const sorted = candidates.some((r) => r.order !== undefined)
    ? [...candidates].sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
    : [...candidates].sort((a, b) => ingressRank(b) - ingressRank(a));
  const q = req.path.indexOf('?');
  const path = q < 0 ? req.path : req.path.slice(0, q);
  const search = q < 0 ? '' : req.path.slice(q);
  const query = new URLSearchParams(search);
  const route = sorted.find((r) => routeMatches(r, path, query, req));
  if (!route) {
    if (vs.defaultPool) {
      return {
        status: 200,
        pool: vs.defaultPool,
        upstream: { host: req.host, path: req.path, headers: req.headers ?? {} },
      };
    }
    return { status: 404 };
  }
  const scheme = req.scheme ?? (vs.protocol === 'HTTPS' ? 'https' : 'http');
  const preflight = preflightOutcome(route, req);
  if (preflight) return preflight;
  if (route.redirect) {
    const r = route.redirect;
    const toScheme = r.scheme ?? scheme;
    const port = r.port ?? (r.scheme && r.scheme !== scheme ? undefined : req.port);
    const shown = port === undefined || port === DEFAULT_PORT[toScheme] ? '' : `:${port}`;
    const toPath = r.path ? modifyPath(path, route, r.path) : path;
    return {
      status: r.statusCode,
      route,
      location: `${toScheme}://${r.hostname ?? host}${shown}${toPath}${search}`,
    };
  }
  let pool: string | null = route.pool;
  let picked: HeaderModifier | undefined;
  if (route.backends) {
    const total = route.backends.reduce((s, b) => s + b.weight, 0);
    let at = pick * total;
    pool = route.backends.at(-1)!.pool;
    picked = route.backends.at(-1)!.requestHeaders;
    for (const b of route.backends) {
      if (at < b.weight) {
        pool = b.pool;
        picked = b.requestHeaders;
        break;
      }
      at -= b.weight;
    }
  }
  if (!pool) return { status: 500, route };
  const upstreamPath = route.rewrite?.path ? modifyPath(path, route, route.rewrite.path) : path;
  return {
    status: 200,
    route,
    pool,
    upstream: {
      host: route.rewrite?.hostname ?? req.host,
      path: `${upstreamPath}${search}`,
      // The route's changes, then the picked backend's own (a backendRef's filters).
      headers: modifyHeaders(modifyHeaders(req.headers ?? {}, route.requestHeaders), picked),
    },
    ...(route.responseHeaders ? { responseHeaders: route.responseHeaders } : {}),
    ...(route.cors ? { cors: responseHeaders(route.cors, req.headers ?? {}) } : {}),
  };
}

/**
 * The pool an L4 virtual service sends a connection to: its pool, or for TLS passthrough the route
 * of the most specific host the ClientHello's SNI matches (undefined: the connection is refused).
 */
export function resolveConnection(vs: L4VirtualService, sni?: string): string | undefined {
  if (!vs.sni) return vs.pool || undefined;
  const host = bareHost(sni ?? '');
  let best: { rank: number; pool: string } | undefined;
  for (const r of vs.sni) {
    const rank = hostRank(r.host, host);
    if (rank >= 0 && (!best || rank > best.rank)) best = { rank, pool: r.pool };
  }
  return best?.pool;
}
