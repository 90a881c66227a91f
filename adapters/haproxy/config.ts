/**
 * The model -> haproxy.cfg rendering (config-parse.ts reads it back). Our sections are named
 * `<cluster>--...` (the owner mark) and carry `# npl-lb ...` comment lines with what HAProxy has no
 * field for (the Service, the route's source); everything else in the file is foreign and kept
 * verbatim. Pools are backends whose servers are named `<node>_<address>_<port>` (an admin sees the
 * node), draining members have weight 0; L4 virtual services are `mode tcp` frontends on VIP:port;
 * each L7 one is a `mode http` frontend with host and path ACLs switching to backends. Pure: no I/O.
 */
import {
  type HttpRoute,
  type L7VirtualService,
  type Member,
  type Pool,
  SYSTEM_CA,
  type VirtualService,
} from '../../src/model/types.ts';
import { caTag } from '../../src/adapter/ca-bundles.ts';
import { CLIENT_FALLBACK, CLIENT_REQUIRED, SYSTEM_CA_FILE } from './tls-words.ts';
import { statusList } from '../../src/model/status-ranges.ts';
import { join } from 'node:path';
import { policyWords, storeCheck } from '../../src/adapter/stored-check.ts';
import { logFormatArg, pct, quoteArg } from './encode.ts';
import { balanceLines, frontendLines, frontendWord, sourceRangeLines, timeoutLines } from './policy-lines.ts';
import { needsRouteRules, renderGatewayRoutes, renderSniRoutes, ROUTE_TIMEOUT_VAR } from './http-routes.ts';
import { httpPools } from './validate.ts';
import type { Section } from './config-parse.ts';
import { isMixed, loopSections, outerBackend } from './tls-mixed.ts';
import { MIRROR_LUA_FILE, mirrorFrontend, mirrorPools, mirrorScriptWanted, mirrorSocket } from './mirrors.ts';

/**
 * A virtual service's mirror frontends (mirrors.ts): one per pool its routes copy requests to, on
 * the socket the routes' action sends to, part of the virtual service when read back.
 */
function mirrorSections(v: L7VirtualService, instance: string): string[] {
  return mirrorPools(v).flatMap((pool, k) => [
    `frontend ${mirrorFrontend(v.name, k)}`,
    `    # npl-lb part-of=${v.name} mirror=${enc(pool)}`,
    '    mode http',
    `    bind ${mirrorSocket(v.name, pool, instance)}`,
    `    default_backend ${pool}`,
    '',
  ]);
}

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

export { SYSTEM_CA_FILE } from './tls-words.ts';

/** Our global's line that keeps HAProxy's unused HTTP client from loading the system CAs. */
export const HTTPCLIENT_OFF = '    httpclient.ssl.verify none';

export const serverName = (m: Pick<Member, 'node' | 'address' | 'port'>): string =>
  `${m.node || 'pod'}_${m.address}_${m.port}`.replace(/[^A-Za-z0-9_.:-]/g, '_');

/** Our data in comments and descriptions: encode.ts `pct`. */
export const enc = pct;

/**
 * The check words of a pool's servers (on their `server` lines and in `add server` at runtime,
 * which takes no default-server): `check`, with the HTTP check's interval and thresholds; '' when
 * checks are off.
 */
export function checkWords(p: Pool, checks: boolean, certDir = '.'): string {
  // A BackendPolicy's limit and ramp (`add server` takes both, as server lines do), and HTTP/2 to
  // the members (`proto h2`: h2c with prior knowledge; the check speaks it too).
  const limits = `${p.backendProtocol === 'h2c' ? ' proto h2' : ''}${p.maxConnections ? ` maxconn ${p.maxConnections}` : ''}${p.slowStartSeconds ? ` slowstart ${p.slowStartSeconds}s` : ''}${tlsWords(p, checks, certDir)}`;
  if (!checks) return limits;
  const c = p.check;
  // A pool spoken to over TLS checks over the same verified TLS (never `verify none`).
  return c
    ? ` check${c.tls && !p.backendTls ? ' check-ssl verify none' : ''} inter ${c.intervalSeconds}s fall ${c.fall} rise ${c.rise}${limits}`
    : ` check${limits}`;
}

/** Where a pool's CA bundle is: HAProxy's `@system-ca`, or a file named by its content in `certDir`. */
export const caFile = (ca: string, certDir: string): string =>
  ca === SYSTEM_CA ? SYSTEM_CA_FILE : join(certDir, `ca-${caTag(ca)}.pem`);

/**
 * TLS to the members (a BackendTLSPolicy): verified against the CA, the policy's hostname sent as
 * SNI (a DNS name from the validation boundary, as is the name verified) and, with checks on, by
 * the checks too. HAProxy verifies the certificate against the SNI it sends; `verifyhost` (the
 * same name: capabilities.ts) covers a connection made without one.
 */
function tlsWords(p: Pool, checks: boolean, certDir: string): string {
  const t = p.backendTls;
  if (!t) return '';
  // The certificate presented to members (a Gateway's backend client certificate): its PEM file of
  // the certificate store (cert-store.ts; a model name, so a plain file name).
  const crt = t.clientCertificate ? ` crt ${join(certDir, `${t.clientCertificate}.pem`)}` : '';
  return ` ssl verify required ca-file ${caFile(t.ca, certDir)} sni str(${t.serverName}) verifyhost ${t.verifyNames[0] ?? t.serverName}${crt}${checks ? ` check-sni ${t.serverName}` : ''}`;
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
    ...p.members.map((m) => serverLine(m, checkWords(p, checks, o.certDir))),
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

/**
 * Client certificates asked at an HTTPS bind (a Gateway's spec.tls.frontend): verified against
 * the CA's file; with the insecure fallback asked, a client without one or with one that does
 * not verify still completes the handshake (the errors of the leaf and of its chain ignored).
 */
function clientWords(v: L7VirtualService, certDir: string): string {
  const c = v.clientValidation;
  if (!c) return '';
  return ` ca-file ${caFile(c.ca, certDir)} ${c.insecureFallback ? CLIENT_FALLBACK : CLIENT_REQUIRED}`;
}

function renderVirtualService(v: VirtualService, o: RenderOptions): string[] {
  if (v.kind === 'l4') {
    // Terminate mode: the handshake ends here with a certificate of the crt-list chosen by SNI,
    // and the name asked routes the decrypted stream.
    const terminate = v.certificates !== undefined;
    // Mixed mode: this frontend passes TLS through, the terminated names go round a loop.
    const mixed = isMixed(v);
    return [
      `frontend ${v.name}`,
      `    # npl-lb l4 source=${enc(v.source)} protocol=${v.protocol}${v.sourceRanges ? ` sourceRanges=${enc(JSON.stringify(v.sourceRanges))}` : ''}${terminate ? ` certificates=${v.certificates!.map(enc).join(',')}` : ''}${frontendWord(v)}`,
      '    mode tcp',
      `${bind(v.vip, v.port, o)}${terminate && !mixed ? ` ssl crt-list ${join(o.certDir ?? '.', `${v.name}.crtlist`)}` : ''}`,
      ...frontendLines(v),
      ...sourceRangeLines(v.sourceRanges),
      ...(mixed
        ? renderSniRoutes(v.sni!, false, outerBackend(v))
        : v.sni
          ? renderSniRoutes(v.sni, terminate)
          : [`    default_backend ${v.pool}`]),
      '',
      ...(mixed ? loopSections(v, o, frontendLines(v)) : []),
    ];
  }
  const https = v.protocol === 'HTTPS';
  const tls = `${https ? ` protocol=HTTPS certificates=${(v.certificates ?? []).map(enc).join(',')}` : ''}${v.http2 ? ' http2=true' : ''}${v.listenerHosts ? ` listenerHosts=${enc(JSON.stringify(v.listenerHosts))}` : ''}${v.clientValidation?.subjectHeader ? ` clientSubjectHeader=${enc(v.clientValidation.subjectHeader)}` : ''}`;
  const lines = [
    `frontend ${v.name}`,
    `    # npl-lb l7 ingressClass=${enc(v.ingressClass)}${tls}${frontendWord(v)}`,
    '    mode http',
    ...frontendLines(v),
    // The crt-list names the certificates' files (cert-store.ts); HAProxy picks one by SNI.
    // HTTP/2: with prior knowledge on a plain bind (told by its preface), by ALPN on HTTPS.
    `${bind(v.vip, v.port, o)}${https ? ` ssl crt-list ${join(o.certDir ?? '.', `${v.name}.crtlist`)}${v.http2 ? ' alpn h2,http/1.1' : ''}${clientWords(v, o.certDir ?? '.')}` : ''}`,
  ];
  if (needsRouteRules(v)) lines.push(...renderGatewayRoutes(v, o.adminSocket));
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
  lines.push('', ...mirrorSections(v, o.adminSocket));
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
    // HAProxy's own HTTP client (Lua's core.httpclient) is unreachable here: this global loads no
    // Lua. Without this line HAProxy 2.6 still loads every system CA for it (~145 files) at each
    // start, reload and check, about half of a small configuration's start; a server line's
    // `ca-file @system-ca` (BackendTLSPolicy's System CAs) still loads them where it is used.
    HTTPCLIENT_OFF,
    // Request mirrors: the script whose action copies requests (mirrors.ts), only where a route
    // mirrors (ours, or another cluster's in the sections kept as they were).
    ...(mirrorScriptWanted(vsList, foreign)
      ? [`    lua-load ${join(o.certDir ?? '.', MIRROR_LUA_FILE)}`]
      : []),
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
