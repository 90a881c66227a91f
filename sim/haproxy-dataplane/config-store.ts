/**
 * The simulated Data Plane API's configuration: backends with their servers, frontends with their
 * binds, ACLs and switching rules, rendered to haproxy.cfg. `runtimePlan` applies the rule from
 * the real API: a change that only moves a server (address, port, weight, maintenance; metadata,
 * which lives in a comment) is done through the runtime socket; anything else needs a reload.
 */
import { globalLines } from './global-section.ts';
import type {
  DpAcl,
  DpBackend,
  DpBind,
  DpFrontend,
  DpHttpRule,
  DpRule,
  DpServer,
  DpTcpRule,
} from '../../adapters/haproxy/dataplane/models.ts';
import { httpCheckLine, httpRuleLine, stickRuleLine, tcpRequestLine } from './rule-lines.ts';

/** bind_params: client certificates (ssl_cafile as ca-file, verify, the errors ignored), as haproxy.cfg words. */
function clientWords(b: DpBind): string {
  const words: string[] = [];
  if (b.ssl_cafile !== undefined) words.push(`ca-file ${b.ssl_cafile}`);
  if (b.verify !== undefined) words.push(`verify ${b.verify}`);
  if (b.ca_ignore_err !== undefined) words.push(`ca-ignore-err ${b.ca_ignore_err}`);
  if (b.crt_ignore_err !== undefined) words.push(`crt-ignore-err ${b.crt_ignore_err}`);
  return words.map((w) => ` ${w}`).join('');
}

export interface StoredBackend {
  backend: DpBackend;
  servers: DpServer[];
  /** Its `http-check` rules, in order (the http_check model); none when absent. */
  httpChecks?: Record<string, unknown>[];
  /** Its `stick` rules, in order (the stick_rule model); none when absent. */
  stickRules?: Record<string, unknown>[];
  /** Its http-request rules, in order (the http_request_rule model); none when absent. */
  httpRequest?: Record<string, unknown>[];
}

export interface StoredFrontend {
  frontend: DpFrontend;
  binds: DpBind[];
  acls: DpAcl[];
  rules: DpRule[];
  httpRequest: DpHttpRule[];
  httpResponse: DpHttpRule[];
  tcpRequest: DpTcpRule[];
}

export interface DpConfig {
  backends: Map<string, StoredBackend>;
  frontends: Map<string, StoredFrontend>;
  /** The global section's fields this simulator renders (global-section.ts); absent: none. */
  global?: Record<string, unknown>;
}

export const emptyConfig = (): DpConfig => ({ backends: new Map(), frontends: new Map(), global: {} });

export function cloneConfig(c: DpConfig): DpConfig {
  return structuredClone(c);
}

export interface RenderPaths {
  adminSocket: string;
  serverStateFile: string;
}

const addr = (a: string, port: number | undefined) =>
  `${a.includes(':') ? `[${a}]` : a}${port !== undefined ? `:${port}` : ''}`;

function serverLine(s: DpServer): string {
  const words = [`server ${s.name} ${addr(s.address, s.port)}`];
  if (s.check === 'enabled') words.push('check');
  // The server_params model: inter in milliseconds, rise and fall as counts.
  if (s.inter !== undefined) words.push(`inter ${s.inter}`);
  if (s.rise !== undefined) words.push(`rise ${s.rise}`);
  if (s.fall !== undefined) words.push(`fall ${s.fall}`);
  // server_params: check-ssl (enabled/disabled) and verify (none/required), as haproxy.cfg words.
  if (s['check-ssl'] === 'enabled') words.push('check-ssl');
  if (s.verify !== undefined) words.push(`verify ${s.verify}`);
  // server_params: maxconn a count, slowstart a duration in milliseconds.
  if (s.maxconn !== undefined) words.push(`maxconn ${s.maxconn}`);
  if (s.slowstart !== undefined) words.push(`slowstart ${s.slowstart}ms`);
  // server_params: proto, the multiplexer spoken to the server (h2 with prior knowledge).
  if (s.proto !== undefined) words.push(`proto ${s.proto}`);
  // server_params: TLS to the server (ssl, ssl_cafile as ca-file, sni, verifyhost, check-sni).
  if (s.ssl === 'enabled') words.push('ssl');
  if (s.ssl_cafile !== undefined) words.push(`ca-file ${s.ssl_cafile}`);
  if (s.ssl_certificate !== undefined) words.push(`crt ${s.ssl_certificate}`);
  if (s.sni !== undefined) words.push(`sni ${s.sni}`);
  if (s.verifyhost !== undefined) words.push(`verifyhost ${s.verifyhost}`);
  if (s['check-sni'] !== undefined) words.push(`check-sni ${s['check-sni']}`);
  // server_params: send-proxy-v2, a PROXY v2 header before the stream.
  if (s['send-proxy-v2'] === 'enabled') words.push('send-proxy-v2');
  if (s.maintenance === 'enabled') words.push('disabled');
  if (s.weight !== undefined) words.push(`weight ${s.weight}`);
  if (s.metadata) words.push(`# metadata ${JSON.stringify(s.metadata)}`);
  return `    ${words.join(' ')}`;
}

/** A backend's section, from the backend model and its lists (servers, http-check, stick, http-request rules). */
function backendLines({ backend: b, servers, httpChecks, stickRules, httpRequest }: StoredBackend): string[] {
  const lines: string[] = [];
  lines.push(`backend ${b.name}`);
  if (b.mode) lines.push(`    mode ${b.mode}`);
  // The spec's balance: `hdr` takes its header's name, `hash` its expression.
  if (b.balance)
    lines.push(
      `    balance ${b.balance.algorithm}${
        b.balance.algorithm === 'hdr'
          ? `(${b.balance.hdr_name ?? ''})`
          : b.balance.algorithm === 'hash'
            ? ` ${b.balance.hash_expression ?? ''}`
            : ''
      }`,
    );
  if (b.hash_type?.method) lines.push(`    hash-type ${b.hash_type.method}`);
  if (b.cookie) {
    // The cookie model's flags as the keywords HAProxy reads, in its documented order.
    const c = b.cookie;
    const flags = (['indirect', 'nocache', 'dynamic'] as const).filter((f) => c[f] === true);
    // maxlife in seconds (the cookie keyword's unit), each attr one quoted argument.
    const life = c.maxlife !== undefined ? ` maxlife ${c.maxlife}s` : '';
    const attrs = (c.attr ?? []).map((a) => ` attr "${a.value}"`).join('');
    lines.push(
      `    cookie ${c.name}${c.type ? ` ${c.type}` : ''}${flags.map((f) => ` ${f}`).join('')}${life}${attrs}`,
    );
  }
  if (b.dynamic_cookie_key) lines.push(`    dynamic-cookie-key ${b.dynamic_cookie_key}`);
  if (b.stick_table) {
    // config_stick_table: the key type, entries, and expire in milliseconds (HAProxy's unit
    // for a bare number).
    const t = b.stick_table;
    lines.push(
      `    stick-table type ${t.type ?? 'ip'}${t.size !== undefined ? ` size ${t.size}` : ''}${t.expire !== undefined ? ` expire ${t.expire}` : ''}`,
    );
  }
  for (const r of stickRules ?? []) lines.push(`    ${stickRuleLine(r)}`);
  if (b.description) lines.push(`    description ${b.description}`);
  if (b.adv_check === 'httpchk') {
    // httpchk_params as the model names them; without, HAProxy's own default request.
    const p = b.httpchk_params;
    lines.push(`    option httpchk${p?.method ? ` ${p.method}` : ''}${p?.uri ? ` ${p.uri}` : ''}`);
  } else if (b.adv_check === 'tcp-check') lines.push('    option tcp-check');
  for (const r of httpChecks ?? []) lines.push(`    ${httpCheckLine(r)}`);
  if (b.check_timeout !== undefined) lines.push(`    timeout check ${b.check_timeout}`);
  // The model's timeouts are milliseconds, HAProxy's unit when none is written.
  if (b.connect_timeout !== undefined) lines.push(`    timeout connect ${b.connect_timeout}`);
  if (b.server_timeout !== undefined) lines.push(`    timeout server ${b.server_timeout}`);
  if (b.retries !== undefined) lines.push(`    retries ${b.retries}`);
  if (b.retry_on !== undefined) lines.push(`    retry-on ${b.retry_on}`);
  for (const r of httpRequest ?? []) lines.push(`    ${httpRuleLine('request', r)}`);
  lines.push(...servers.map(serverLine), '');
  return lines;
}

export function renderConfig(c: DpConfig, p: RenderPaths): string {
  const lines = [
    'global',
    `    stats socket ${p.adminSocket} mode 600 level admin expose-fd listeners`,
    '    stats timeout 30s',
    '    hard-stop-after 30s',
    // Nothing here uses HAProxy's own HTTP client: it need not load every system CA at each reload.
    '    httpclient.ssl.verify none',
    ...globalLines(c.global ?? {}),
    `    server-state-file ${p.serverStateFile}`,
    '',
    'defaults',
    '    mode tcp',
    '    load-server-state-from-file global',
    '    timeout connect 5s',
    '    timeout client 30s',
    '    timeout server 30s',
    '    retries 3',
    '    option redispatch',
    '',
  ];
  for (const stored of c.backends.values()) lines.push(...backendLines(stored));
  for (const {
    frontend: f,
    binds,
    acls,
    rules,
    httpRequest,
    httpResponse,
    tcpRequest,
  } of c.frontends.values()) {
    lines.push(`frontend ${f.name}`);
    if (f.mode) lines.push(`    mode ${f.mode}`);
    if (f.description) lines.push(`    description ${f.description}`);
    // The spec's frontend fields: maxconn, and client_timeout in milliseconds (HAProxy's unit).
    if (f.maxconn !== undefined) lines.push(`    maxconn ${f.maxconn}`);
    if (f.client_timeout !== undefined) lines.push(`    timeout client ${f.client_timeout}`);
    for (const b of binds) {
      lines.push(
        `    bind ${addr(b.address ?? '', b.port)} name ${b.name}${b.transparent ? ' transparent' : ''}${b.accept_proxy ? ' accept-proxy' : ''}${b.ssl ? ` ssl${b.crt_list ? ` crt-list ${b.crt_list}` : ''}${b.alpn ? ` alpn ${b.alpn}` : ''}${clientWords(b)}` : ''}`,
      );
    }
    for (const a of acls) lines.push(`    acl ${a.acl_name} ${a.criterion}${a.value ? ` ${a.value}` : ''}`);
    for (const r of tcpRequest) lines.push(`    ${tcpRequestLine(r)}`);
    for (const r of httpRequest) lines.push(`    ${httpRuleLine('request', r)}`);
    for (const r of httpResponse) lines.push(`    ${httpRuleLine('response', r)}`);
    for (const r of rules) {
      lines.push(`    use_backend ${r.name}${r.cond && r.cond_test ? ` ${r.cond} ${r.cond_test}` : ''}`);
    }
    if (f.default_backend) lines.push(`    default_backend ${f.default_backend}`);
    lines.push('');
  }
  return lines.join('\n');
}

/** Everything about a server that only a reload can change. */
const serverStatic = (s: DpServer) => {
  const { address: _a, port: _p, weight: _w, maintenance: _m, metadata: _md, ...rest } = s;
  return JSON.stringify(rest);
};
const sectionStatic = (x: unknown, drop: string) => {
  const o = { ...(x as Record<string, unknown>) };
  delete o[drop];
  return JSON.stringify(o);
};

/**
 * Runtime commands moving the servers that `from` and `to` both have, alike but for runtime fields;
 * a server whose other fields change too (a reload follows) still gets its address moved first,
 * since the reload restores the state saved before it (HAProxy takes a server's port from that
 * state over the file's).
 */
export function serverMoves(from: DpConfig, to: DpConfig): string[] {
  const commands: string[] = [];
  for (const [name, b] of to.backends) {
    const before = new Map((from.backends.get(name)?.servers ?? []).map((s) => [s.name, s]));
    for (const s of b.servers) {
      const old = before.get(s.name);
      if (!old) continue;
      const id = `${name}/${s.name}`;
      if (serverStatic(old) !== serverStatic(s)) {
        if (old.address !== s.address || old.port !== s.port)
          commands.push(`set server ${id} addr ${s.address}${s.port !== undefined ? ` port ${s.port}` : ''}`);
        continue;
      }
      const toMaint = s.maintenance === 'enabled' && old.maintenance !== 'enabled';
      const fromMaint = s.maintenance !== 'enabled' && old.maintenance === 'enabled';
      if (toMaint) commands.push(`set server ${id} state maint`);
      if (old.address !== s.address || old.port !== s.port) {
        commands.push(`set server ${id} addr ${s.address}${s.port !== undefined ? ` port ${s.port}` : ''}`);
      }
      if ((old.weight ?? 1) !== (s.weight ?? 1)) commands.push(`set weight ${id} ${s.weight ?? 1}`);
      if (fromMaint) commands.push(`set server ${id} state ready`);
    }
  }
  return commands;
}

/**
 * Runtime socket commands taking `from` to `to`, or `reload: true` when the change needs one (the
 * moves are still worth sending first: the state saved for the reload then has the new ports).
 */
export function runtimePlan(from: DpConfig, to: DpConfig): { reload: boolean; commands: string[] } {
  const commands = serverMoves(from, to);
  const reload = { reload: true, commands };
  if (JSON.stringify(from.global ?? {}) !== JSON.stringify(to.global ?? {})) return reload;
  if (from.frontends.size !== to.frontends.size || from.backends.size !== to.backends.size) return reload;
  for (const [name, f] of to.frontends) {
    const g = from.frontends.get(name);
    if (!g || JSON.stringify(f) !== JSON.stringify(g)) return reload;
  }
  for (const [name, b] of to.backends) {
    const a = from.backends.get(name);
    if (!a || sectionStatic(a, 'servers') !== sectionStatic(b, 'servers')) return reload;
    if (a.servers.length !== b.servers.length) return reload;
    for (const [i, s] of b.servers.entries()) {
      const old = a.servers[i]!;
      if (old.name !== s.name || serverStatic(old) !== serverStatic(s)) return reload;
    }
  }
  return { reload: false, commands };
}
