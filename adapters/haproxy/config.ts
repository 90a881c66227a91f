/**
 * The model <-> haproxy.cfg mapping. Our sections are named `<cluster>--...` (the owner mark) and
 * carry `# npl-lb ...` comment lines with what HAProxy has no field for (the Service, the route's
 * source); everything else in the file is foreign and kept verbatim. Pools are backends whose
 * servers are named `<node>_<address>_<port>` (an admin sees the node), draining members have
 * weight 0; L4 virtual services are `mode tcp` frontends on VIP:port; each L7 one is a `mode http`
 * frontend with host and path ACLs switching to backends. Pure: no I/O.
 */
import type {
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  Member,
  PathType,
  Pool,
  VirtualService,
} from '../../src/model/types.ts';
import type { Observed } from '../../src/adapter/changes.ts';
import { statusList } from '../../src/model/status-ranges.ts';
import { join } from 'node:path';
import { policyWords, readStoredCheck, storeCheck, storedPolicy } from '../../src/adapter/stored-check.ts';
import { logFormatArg, pct, quoteArg } from './encode.ts';
import {
  balanceLines,
  frontendLines,
  frontendWord,
  readFrontend,
  readSourceRanges,
  sourceRangeLines,
  timeoutLines,
} from './policy-lines.ts';
import {
  parseGatewayRoutes,
  parseSniRoutes,
  needsRouteRules,
  renderGatewayRoutes,
  renderSniRoutes,
  ROUTE_TIMEOUT_VAR,
} from './http-routes.ts';
import { httpPools } from './validate.ts';

export interface RenderOptions {
  owner: string;
  adminSocket: string;
  /** Appended to every bind line of ours (e.g. `transparent` to bind VIPs not on this host). */
  bindOptions?: string;
  /** Health checks on servers (off: no probe traffic, for tests with documentation addresses). */
  healthChecks?: boolean;
  /** Where server states are saved before a reload, so health and drain states survive it. */
  serverStateFile?: string;
  /** A group allowed on the admin socket (`mode 660 gid N`); else only HAProxy's user (`mode 600`). */
  socketGroup?: number;
  /** Where certificates and crt-lists are (cert-store.ts). */
  certDir?: string;
}

export interface Section {
  kind: string;
  name: string;
  lines: string[];
}

export const serverName = (m: Pick<Member, 'node' | 'address' | 'port'>): string =>
  `${m.node || 'pod'}_${m.address}_${m.port}`.replace(/[^A-Za-z0-9_.:-]/g, '_');

const SECTION =
  /^(global|defaults|frontend|backend|listen|peers|resolvers|userlist|program|http-errors|cache|ring|mailers)\b\s*(\S*)/;

export function parseSections(text: string): Section[] {
  const out: Section[] = [];
  for (const line of text.split('\n')) {
    const m = SECTION.exec(line);
    if (m) out.push({ kind: m[1]!, name: m[2] ?? '', lines: [line] });
    else if (out.length > 0) out[out.length - 1]!.lines.push(line);
  }
  return out;
}

export const kv = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]));
/** Our data in comments and descriptions: encode.ts `pct`. */
export const enc = pct;

/**
 * The check words of a pool's servers (on their `server` lines and in `add server` at runtime,
 * which takes no default-server): `check`, with the HTTP check's interval and thresholds; '' when
 * checks are off.
 */
export function checkWords(p: Pool, checks: boolean): string {
  // A BackendPolicy's limit and ramp (`add server` takes both, as server lines do), and HTTP/2 to
  // the members (`proto h2`: h2c with prior knowledge; the check speaks it too).
  const limits = `${p.backendProtocol === 'h2c' ? ' proto h2' : ''}${p.maxConnections ? ` maxconn ${p.maxConnections}` : ''}${p.slowStartSeconds ? ` slowstart ${p.slowStartSeconds}s` : ''}`;
  if (!checks) return limits;
  const c = p.check;
  return c
    ? ` check${c.tls ? ' check-ssl verify none' : ''} inter ${c.intervalSeconds}s fall ${c.fall} rise ${c.rise}${limits}`
    : ` check${limits}`;
}

export function serverLine(m: Member, check: string): string {
  return `    server ${serverName(m)} ${m.address.includes(':') ? `[${m.address}]` : m.address}:${m.port}${check}${m.enabled ? '' : ' weight 0'} # npl-lb node=${enc(m.node)} pod=${enc(m.pod)}`;
}

/**
 * A pool's HTTP check as backend lines: the application's path (one quoted argument, encode.ts)
 * and the check's timeout; HAProxy's own expectation of an HTTP check is a 2xx or 3xx status,
 * the kubelet's rule for a readiness probe. Without one, the servers' `check` is a TCP connect.
 */
const httpCheckLines = (p: Pool): string[] =>
  p.check
    ? [
        `    option httpchk ${p.check.method ?? 'GET'} ${quoteArg(p.check.path)}`,
        // The probe's headers, each name and value one quoted argument.
        ...(p.check.headers?.length
          ? [
              `    http-check send${p.check.headers.map((h) => ` hdr ${quoteArg(h.name)} ${logFormatArg(h.value)}`).join('')}`,
            ]
          : []),
        // The statuses meaning up, when not HAProxy's own 2xx-3xx (digits, dashes and commas).
        ...(p.check.expect ? [`    http-check expect status ${statusList(p.check.expect)}`] : []),
        `    timeout check ${p.check.timeoutSeconds}s`,
      ]
    : [];

/** The pools a Gateway API route with its own timeout sends to: their backends apply it. */
function timedPools(vss: VirtualService[]): Set<string> {
  const out = new Set<string>();
  for (const v of vss) {
    if (v.kind !== 'l7') continue;
    for (const r of v.routes) {
      if (r.timeoutMs === undefined) continue;
      if (r.pool) out.add(r.pool);
      for (const b of r.backends ?? []) if (b.pool) out.add(b.pool);
    }
  }
  return out;
}

function renderPool(p: Pool, routed: boolean, o: RenderOptions, timed = false): string[] {
  // An HTTP/2 pool is an HTTP backend even routed nowhere (`proto h2` needs one: a weight-0 split).
  const http = routed || p.backendProtocol === 'h2c';
  const checks = o.healthChecks ?? true;
  return [
    `backend ${p.name}`,
    `    # npl-lb pool service=${enc(p.service)} port=${enc(p.servicePort)} protocol=${p.protocol} health=${p.health}${p.check ? ` check=${enc(storeCheck(p.check))}` : ''}${policyWords(
      p,
    )
      .map((w) => ` ${w}`)
      .join('')}`,
    `    mode ${http ? 'http' : 'tcp'}`,
    ...balanceLines(p),
    ...timeoutLines(p),
    // A Gateway API route's own timeout, set by the frontend for the requests it takes.
    ...(http && timed
      ? [
          `    http-request set-timeout server var(${ROUTE_TIMEOUT_VAR}) if { var(${ROUTE_TIMEOUT_VAR}) -m found }`,
        ]
      : []),
    ...(checks ? httpCheckLines(p) : []),
    ...p.members.map((m) => serverLine(m, checkWords(p, checks))),
    '',
  ];
}

const routeRank = (r: HttpRoute) => [r.host === '' ? 1 : 0, r.pathType === 'Exact' ? 0 : 1, -r.path.length];
function sortRoutes(routes: HttpRoute[]): HttpRoute[] {
  return [...routes].sort((a, b) => {
    const [x, y] = [routeRank(a), routeRank(b)];
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return `${a.host}${a.path}` < `${b.host}${b.path}` ? -1 : 1;
  });
}

export interface RouteMatcher {
  index: number;
  route: HttpRoute;
  /** ACL lines (`acl <name> <criterion> <value>`); two lines with one name are OR-ed. */
  acls: { name: string; criterion: string; value: string }[];
  /** The condition of the route's `use_backend` (AND of its ACL names). */
  cond: string;
}

/** Host and path ACLs per route, most specific route first (exact before prefix, longer first). */
export function routeMatchers(routes: HttpRoute[]): RouteMatcher[] {
  return sortRoutes(routes).map((r, i) => {
    const acls: RouteMatcher['acls'] = [];
    const conds: string[] = [];
    // Every value from the model is one quoted argument (encode.ts), whatever it holds.
    if (r.host) {
      // The Host header, with or without a port; a wildcard host (*.example) matches one label.
      const host = r.host.replace(/[.+?^${}()|[\]\\*]/g, '\\$&').replace(/^\\\*\\\./, '[^.]+\\.');
      acls.push({
        name: `r${i}_host`,
        criterion: 'hdr(host)',
        value: `-m reg -i ${quoteArg(`^${host}(:[0-9]+)?$`)}`,
      });
      conds.push(`r${i}_host`);
    }
    const path = { name: `r${i}_path`, criterion: 'path' };
    if (r.pathType === 'Exact') acls.push({ ...path, value: `-m str ${quoteArg(r.path)}` });
    else if (r.path === '/' || r.path === '') acls.push({ ...path, value: '-m beg /' });
    else {
      // Kubernetes Prefix matches whole path elements: /foo matches /foo and /foo/bar, not /foobar.
      const p = r.path.replace(/\/+$/, '');
      acls.push(
        { ...path, value: `-m str ${quoteArg(p)}` },
        { ...path, value: `-m beg ${quoteArg(`${p}/`)}` },
      );
    }
    conds.push(`r${i}_path`);
    return { index: i, route: r, acls, cond: conds.join(' ') };
  });
}

function bind(vip: string, port: number, o: RenderOptions): string {
  const addr = vip.includes(':') ? `[${vip}]` : vip;
  return `    bind ${addr}:${port}${o.bindOptions ? ` ${o.bindOptions}` : ''}`;
}

function renderVirtualService(v: VirtualService, o: RenderOptions): string[] {
  if (v.kind === 'l4') {
    return [
      `frontend ${v.name}`,
      `    # npl-lb l4 source=${enc(v.source)} protocol=${v.protocol}${v.sourceRanges ? ` sourceRanges=${enc(JSON.stringify(v.sourceRanges))}` : ''}${frontendWord(v)}`,
      '    mode tcp',
      bind(v.vip, v.port, o),
      ...frontendLines(v),
      ...sourceRangeLines(v.sourceRanges),
      ...(v.sni ? renderSniRoutes(v.sni) : [`    default_backend ${v.pool}`]),
      '',
    ];
  }
  const https = v.protocol === 'HTTPS';
  const tls = `${https ? ` protocol=HTTPS certificates=${(v.certificates ?? []).map(enc).join(',')}` : ''}${v.http2 ? ' http2=true' : ''}`;
  const lines = [
    `frontend ${v.name}`,
    `    # npl-lb l7 ingressClass=${enc(v.ingressClass)}${tls}${frontendWord(v)}`,
    '    mode http',
    ...frontendLines(v),
    // The crt-list names the certificates' files (cert-store.ts); HAProxy picks one by SNI.
    // HTTP/2: with prior knowledge on a plain bind (told by its preface), by ALPN on HTTPS.
    `${bind(v.vip, v.port, o)}${https ? ` ssl crt-list ${join(o.certDir ?? '.', `${v.name}.crtlist`)}${v.http2 ? ' alpn h2,http/1.1' : ''}` : ''}`,
  ];
  if (needsRouteRules(v)) lines.push(...renderGatewayRoutes(v));
  else
    for (const m of routeMatchers(v.routes)) {
      const r = m.route;
      lines.push(
        `    # npl-lb route ${m.index} host=${enc(r.host)} path=${enc(r.path)} type=${r.pathType} source=${enc(r.source)} pool=${enc(r.pool)}`,
        ...m.acls.map((a) => `    acl ${a.name} ${a.criterion} ${a.value}`),
        `    use_backend ${r.pool} if ${m.cond}`,
      );
    }
  if (v.defaultPool) lines.push(`    default_backend ${v.defaultPool}`);
  lines.push('');
  return lines;
}

/** The whole file: our global and defaults, foreign sections as they were, ours from the model. */
export function renderConfig(
  pools: Iterable<Pool>,
  vss: Iterable<VirtualService>,
  foreign: Section[],
  o: RenderOptions,
): string {
  const vsList = [...vss].sort((a, b) => (a.name < b.name ? -1 : 1));
  const http = httpPools(vsList);
  const timed = timedPools(vsList);
  return [
    'global',
    `    stats socket ${o.adminSocket} ${o.socketGroup ? `mode 660 gid ${o.socketGroup}` : 'mode 600'} level admin expose-fd listeners`,
    '    stats timeout 30s',
    '    hard-stop-after 30s',
    ...(o.serverStateFile ? [`    server-state-file ${o.serverStateFile}`] : []),
    '',
    'defaults',
    '    mode tcp',
    ...(o.serverStateFile ? ['    load-server-state-from-file global'] : []),
    '    timeout connect 5s',
    '    timeout client 30s',
    '    timeout server 30s',
    '    retries 3',
    '    option redispatch',
    '',
    ...foreign.flatMap((s) => s.lines),
    ...[...pools]
      .sort((a, b) => (a.name < b.name ? -1 : 1))
      .flatMap((p) => renderPool(p, http.has(p.name), o, timed.has(p.name))),
    ...vsList.flatMap((v) => renderVirtualService(v, o)),
  ].join('\n');
}

/**
 * An address and port as haproxy.cfg writes them: `[ipv6]:port` (bracketed: an IPv6 address holds
 * colons) or `ipv4:port`. Groups: the IPv6 address, the IPv4 one, the port.
 */
const HOST_PORT = String.raw`(?:\[([0-9A-Fa-f:.]+)\]|([^\s:\[\]]+)):(\d+)`;
/** A server line: HOST_PORT's groups, then its words and our comment. */
const SERVER_LINE = new RegExp(String.raw`^\s*server\s+\S+\s+${HOST_PORT}(.*?)(?:#\s*npl-lb\s+(.*))?$`);
const BIND_LINE = new RegExp(String.raw`^\s*bind\s+${HOST_PORT}`, 'm');

function parseMembers(lines: string[]): Member[] {
  const out: Member[] = [];
  for (const l of lines) {
    const m = SERVER_LINE.exec(l);
    if (!m) continue;
    const meta = kv(m[5] ?? '');
    out.push({
      address: (m[1] ?? m[2])!,
      port: Number(m[3]),
      node: meta.node ?? '',
      pod: meta.pod ?? '',
      enabled: !/\bweight 0\b/.test(m[4] ?? ''),
    });
  }
  return out;
}

/** Our objects from the file, in model form, and everyone else's by name. */
export function parseConfig(text: string, owner: string): Observed & { foreignSections: Section[] } {
  const observed: Observed & { foreignSections: Section[] } = {
    owned: { pools: [], virtualServices: [] },
    foreign: [],
    foreignSections: [],
  };
  for (const s of parseSections(text)) {
    if (s.kind === 'global' || s.kind === 'defaults') continue;
    // An explicit `# npl-lb owner=<x>` line wins over the name prefix.
    const marked = /# npl-lb owner=(\S+)/.exec(s.lines.join('\n'))?.[1];
    const ours = marked !== undefined ? marked === owner : s.name.startsWith(`${owner}--`);
    if (!ours) {
      observed.foreignSections.push(s);
      if (s.kind === 'backend' || s.kind === 'frontend' || s.kind === 'listen') {
        observed.foreign.push({
          kind: s.kind === 'backend' ? 'pool' : 'virtualService',
          name: s.name,
          owner: marked ?? (s.name.includes('--') ? s.name.split('--')[0]! : 'unknown'),
        });
      }
      continue;
    }
    const body = s.lines.join('\n');
    if (s.kind === 'backend') {
      const meta = kv(/# npl-lb pool (.*)/.exec(body)?.[1] ?? '');
      observed.owned.pools.push({
        name: s.name,
        protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
        health: meta.health === 'http' ? 'http' : meta.health === 'udp' ? 'udp' : 'tcp',
        ...readStoredCheck(meta.check),
        ...storedPolicy(meta),
        members: parseMembers(s.lines),
        service: meta.service ?? '',
        servicePort: meta.port ?? '',
      });
    } else if (s.kind === 'frontend') {
      const bound = BIND_LINE.exec(body);
      const l4 = /# npl-lb l4 (.*)/.exec(body);
      if (l4) {
        const meta = kv(l4[1]!);
        const vs: L4VirtualService = {
          kind: 'l4',
          name: s.name,
          vip: bound?.[1] ?? bound?.[2] ?? '',
          port: Number(bound?.[3] ?? 0),
          protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
          pool: /^\s*default_backend\s+(\S+)/m.exec(body)?.[1] ?? '',
          source: meta.source ?? '',
          ...readSourceRanges(meta.sourceRanges),
          ...readFrontend(meta.frontend),
        };
        const sni = parseSniRoutes(body);
        if (sni) {
          vs.pool = '';
          vs.sni = sni;
        }
        observed.owned.virtualServices.push(vs);
      } else {
        const meta = kv(/# npl-lb l7 (.*)/.exec(body)?.[1] ?? '');
        const routes: HttpRoute[] =
          parseGatewayRoutes(body) ??
          [...body.matchAll(/# npl-lb route \d+ (.*)/g)].map((m) => {
            const r = kv(m[1]!);
            return {
              host: r.host ?? '',
              path: r.path ?? '/',
              pathType: (r.type ?? 'Prefix') as PathType,
              pool: r.pool ?? '',
              source: r.source ?? '',
            };
          });
        const vs: L7VirtualService = {
          kind: 'l7',
          name: s.name,
          vip: bound?.[1] ?? bound?.[2] ?? '',
          port: Number(bound?.[3] ?? 80),
          ingressClass: meta.ingressClass ?? '',
          routes,
          defaultPool: /^\s*default_backend\s+(\S+)/m.exec(body)?.[1],
          ...readFrontend(meta.frontend),
        };
        if (meta.http2 === 'true') vs.http2 = true;
        if (meta.protocol === 'HTTPS') {
          vs.protocol = 'HTTPS';
          const certs = /# npl-lb l7 .*certificates=(\S*)/.exec(body)?.[1] ?? '';
          vs.certificates = certs === '' ? [] : certs.split(',').map(decodeURIComponent);
        }
        observed.owned.virtualServices.push(vs);
      }
    }
  }
  return observed;
}
