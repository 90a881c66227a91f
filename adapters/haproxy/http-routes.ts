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
import type { HeaderModifier, HttpRoute, L7VirtualService, SniRoute } from '../../src/model/types.ts';
import { quoteArg } from './encode.ts';

/** Header and query names HAProxy reads inside `req.hdr(...)` / `urlp(...)`. */
export const FETCH_NAME = /^[A-Za-z0-9_-]+$/;

const enc = (s: string): string => encodeURIComponent(s);

/** Rank of a route host for a request it matches: exact over wildcard (longer first) over any. */
const hostRank = (h: string): number => (h === '' ? 0 : h.startsWith('*.') ? h.length : 1_000_000);

/** Whether every host `narrow` matches, `wide` matches too (wide is less specific). */
function covers(wide: string, narrow: string): boolean {
  if (wide === '') return narrow !== '';
  if (!wide.startsWith('*.') || wide === narrow) return false;
  const bare = narrow.startsWith('*.') ? narrow.slice(1) : `.${narrow}`;
  return bare.endsWith(wide.slice(1)) && bare.length > wide.length - 1;
}

function hostAcl(h: string): string {
  if (!h.startsWith('*.')) return `hdr(host),field(1,:),lower -m str ${quoteArg(h)}`;
  const suffix = h.slice(1).replace(/[.+?^${}()|[\]\\*]/g, '\\$&');
  return `hdr(host),field(1,:),lower -m reg ${quoteArg(`^.+${suffix}$`)}`;
}

/** A log-format value (set-header): `%` is HAProxy's, written `%%`. */
const fmt = (v: string): string => quoteArg(v.replaceAll('%', '%%'));

function modifierLines(kind: 'request' | 'response', m: HeaderModifier | undefined, cond: string): string[] {
  if (!m) return [];
  const rule = `http-${kind}`;
  return [
    ...m.set.map((h) => `    ${rule} set-header ${quoteArg(h.name)} ${fmt(h.value)} if ${cond}`),
    ...m.add.map((h) => `    ${rule} add-header ${quoteArg(h.name)} ${fmt(h.value)} if ${cond}`),
    ...m.remove.map((n) => `    ${rule} del-header ${quoteArg(n)} if ${cond}`),
  ];
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

function redirectLines(r: HttpRoute, p: string, scheme: 'http' | 'https'): string[] {
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
  const line = (path: string, cond: string) =>
    `    http-request redirect location ${quoteArg(`${head}${path}${query}`)} code ${to.statusCode} if ${cond}`;
  if (!to.path) return [line('%[path]', `is_${p}`)];
  const { fmt: path, exact } = replacedPath(r, to.path);
  if (exact === undefined) return [line(path, `is_${p}`)];
  return [line(exact, `is_${p} ${p}_whole`), line(path, `is_${p} !${p}_whole`)];
}

function rewriteLines(r: HttpRoute, p: string): string[] {
  const rw = r.rewrite;
  if (!rw) return [];
  const out: string[] = [];
  if (rw.hostname !== undefined) out.push(`    http-request set-header Host ${fmt(rw.hostname)} if is_${p}`);
  if (rw.path) {
    const { fmt: path, exact } = replacedPath(r, rw.path);
    if (exact === undefined) out.push(`    http-request set-path ${quoteArg(path)} if is_${p}`);
    else {
      // Decided on the path as it came: the first set-path changes what `${p}_whole` would see.
      const whole = '{ var(txn.npl_whole) -m bool }';
      out.push(
        `    http-request set-var(txn.npl_whole) bool(true) if is_${p} ${p}_whole`,
        `    http-request set-path ${quoteArg(exact)} if is_${p} ${whole}`,
        `    http-request set-path ${quoteArg(path)} if is_${p} !${whole}`,
      );
    }
  }
  return out;
}

/** The lines inside the frontend, after its bind. */
export function renderGatewayRoutes(v: L7VirtualService): string[] {
  const routes = [...v.routes].sort(
    (a, b) => hostRank(b.host) - hostRank(a.host) || (a.order ?? 0) - (b.order ?? 0),
  );
  const hosts = [...new Set(routes.map((r) => r.host).filter(Boolean))];
  const hostName = (h: string) => `h${hosts.indexOf(h)}`;
  const lines = hosts.map((h) => `    acl ${hostName(h)} ${hostAcl(h)}`);
  const tail: string[] = [];
  routes.forEach((r, i) => {
    const p = `r${i}`;
    lines.push(`    # npl-lb groute ${i} json=${enc(JSON.stringify(r))}`);
    const conds: string[] = [];
    if (r.host) conds.push(hostName(r.host));
    for (const other of hosts) if (covers(r.host, other)) conds.push(`!${hostName(other)}`);
    if (r.pathType === 'Exact') lines.push(`    acl ${p}_path path -m str ${quoteArg(r.path)}`);
    else if (r.pathType === 'RegularExpression') {
      lines.push(`    acl ${p}_path path -m reg ${quoteArg(`^(?:${r.path})$`)}`);
    } else if (r.path.replace(/\/+$/, '') !== '') {
      const prefix = r.path.replace(/\/+$/, '');
      lines.push(
        `    acl ${p}_path path -m str ${quoteArg(prefix)}`,
        `    acl ${p}_path path -m beg ${quoteArg(`${prefix}/`)}`,
      );
    }
    if (lines.at(-1)!.includes(`acl ${p}_path`)) conds.push(`${p}_path`);
    (r.headers ?? []).forEach((h, j) => {
      const how =
        h.type === 'Exact' ? `-m str ${quoteArg(h.value)}` : `-m reg ${quoteArg(`^(?:${h.value})$`)}`;
      lines.push(`    acl ${p}_hdr${j} req.hdr(${h.name}) ${how}`);
      conds.push(`${p}_hdr${j}`);
    });
    (r.queryParams ?? []).forEach((q, j) => {
      const how =
        q.type === 'Exact' ? `-m str ${quoteArg(q.value)}` : `-m reg ${quoteArg(`^(?:${q.value})$`)}`;
      lines.push(`    acl ${p}_q${j} urlp(${q.name}) ${how}`);
      conds.push(`${p}_q${j}`);
    });
    if (r.pathType === 'Prefix' || r.pathType === 'ImplementationSpecific') {
      lines.push(`    acl ${p}_whole path -m str ${quoteArg(r.path.replace(/\/+$/, '') || '/')}`);
    }
    if (r.method) {
      lines.push(`    acl ${p}_method method ${r.method}`);
      conds.push(`${p}_method`);
    }
    lines.push(
      `    http-request set-var(txn.npl_route) int(${i}) if !{ var(txn.npl_route) -m found } ${conds.join(' ')}`.trimEnd(),
      `    acl is_${p} var(txn.npl_route) -m int ${i}`,
    );
    tail.push(...modifierLines('request', r.requestHeaders, `is_${p}`));
    tail.push(...modifierLines('response', r.responseHeaders, `is_${p}`));
    if (r.redirect) {
      tail.push(...redirectLines(r, p, v.protocol === 'HTTPS' ? 'https' : 'http'));
      return;
    }
    tail.push(...rewriteLines(r, p));
    if (r.backends) {
      const total = r.backends.reduce((s, b) => s + b.weight, 0);
      tail.push(`    http-request set-var(txn.npl_pick) rand(${total}) if is_${p}`);
      let from = 0;
      for (const b of r.backends) {
        const pick = `{ var(txn.npl_pick) -m int ge ${from} } { var(txn.npl_pick) -m int lt ${from + b.weight} }`;
        from += b.weight;
        if (b.weight === 0) continue;
        tail.push(
          b.pool
            ? `    use_backend ${b.pool} if is_${p} ${pick}`
            : `    http-request return status 500 if is_${p} ${pick}`,
        );
      }
    } else if (r.pool) tail.push(`    use_backend ${r.pool} if is_${p}`);
    else tail.push(`    http-request return status 500 if is_${p}`);
  });
  // A request no route takes: 404, as the model says (a default backend takes it when there is one).
  if (!v.defaultPool) tail.push('    http-request return status 404 if !{ var(txn.npl_route) -m found }');
  return [...lines, ...reorder(tail)];
}

/** http-request rules run before use_backend: HAProxy warns when they come after; keep them first. */
function reorder(lines: string[]): string[] {
  const first = lines.filter((l) => !l.trimStart().startsWith('use_backend'));
  return [...first, ...lines.filter((l) => l.trimStart().startsWith('use_backend'))];
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
export function renderSniRoutes(sni: SniRoute[]): string[] {
  const routes = [...sni].sort((a, b) => hostRank(b.host) - hostRank(a.host) || (a.host < b.host ? -1 : 1));
  const lines = [
    `    # npl-lb sni json=${enc(JSON.stringify(sni))}`,
    '    tcp-request inspect-delay 5s',
    '    tcp-request content accept if { req_ssl_hello_type 1 }',
  ];
  let fallback: string | undefined;
  for (const r of routes) {
    if (r.host === '') fallback = r.pool;
    else if (r.host.startsWith('*.'))
      lines.push(`    use_backend ${r.pool} if { req_ssl_sni -m end -i ${quoteArg(r.host.slice(1))} }`);
    else lines.push(`    use_backend ${r.pool} if { req_ssl_sni -m str -i ${quoteArg(r.host)} }`);
  }
  // No route for the name: no backend, and HAProxy closes the connection before any handshake.
  if (fallback) lines.push(`    default_backend ${fallback}`);
  return lines;
}

export function parseSniRoutes(body: string): SniRoute[] | undefined {
  const m = /# npl-lb sni json=(\S+)/.exec(body);
  return m ? (JSON.parse(decodeURIComponent(m[1]!)) as SniRoute[]) : undefined;
}
