/**
 * The configuration collections of the simulated Data Plane API, pure: reads of backends,
 * frontends and their children (servers, binds, ACLs, switching rules) as v2 or v3 shows them,
 * and writes checked against the subset the simulator renders (a field it would drop is refused).
 */
import type { z } from 'zod';
import {
  type ApiVersion,
  dpAclSchema,
  dpBackendSchema,
  dpBindSchema,
  dpFrontendSchema,
  dpHttpCheckSchema,
  dpHttpRuleSchema,
  dpRuleSchema,
  dpServerSchema,
  dpStickRuleSchema,
  dpTcpRuleSchema,
} from '../../adapters/haproxy/dataplane/models.ts';
import { httpCheckLine, httpRuleLine, RuleRefused, stickRuleLine, tcpRequestLine } from './rule-lines.ts';
import type { DpConfig } from './config-store.ts';

export class DpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type Kind =
  | 'backends'
  | 'frontends'
  | 'servers'
  | 'binds'
  | 'acls'
  | 'backend_switching_rules'
  | 'http_checks'
  | 'stick_rules'
  | RuleKind;
type RuleKind = 'http_request_rules' | 'http_response_rules' | 'tcp_request_rules';
const RULES: readonly string[] = ['http_request_rules', 'http_response_rules', 'tcp_request_rules'];
/** The lists a frontend holds in order (addressed by index). */
const isOrdered = (k: Kind): boolean =>
  k === 'acls' ||
  k === 'backend_switching_rules' ||
  k === 'http_checks' ||
  k === 'stick_rules' ||
  RULES.includes(k);
const HTTP_RULE = [
  'type',
  'cond',
  'cond_test',
  'hdr_name',
  'hdr_format',
  'var_scope',
  'var_name',
  'var_expr',
  'redir_type',
  'redir_value',
  'redir_code',
  'path_fmt',
  'return_status_code',
  'return_content_type',
  'return_content_format',
  'return_content',
  'return_hdrs',
  'timeout_type',
  'timeout',
  'wait_time',
  'wait_at_least',
  'lua_action',
  'lua_params',
];
const TCP_RULE = ['type', 'action', 'cond', 'cond_test', 'timeout'];
/** The stick_rule fields this simulator renders. */
const STICK_RULE = ['type', 'pattern', 'table', 'cond', 'cond_test'];
/** The http_check fields this simulator renders (send: method, uri, version, headers; expect). */
const HTTP_CHECK = ['type', 'method', 'uri', 'version', 'headers', 'match', 'pattern', 'exclamation_mark'];
/** The server fields we take (the server_params model; check-ssl is spelled with a hyphen there). */
/** bind_params: where it listens, a PROXY header taken, TLS with its crt-list and ALPN, client certificates asked. */
const BIND_FIELDS = [
  'name',
  'address',
  'port',
  'transparent',
  'accept_proxy',
  'ssl',
  'crt_list',
  'alpn',
  'ssl_cafile',
  'verify',
  'ca_ignore_err',
  'crt_ignore_err',
];
const SERVER_FIELDS = [
  'name',
  'address',
  'port',
  'check',
  'inter',
  'rise',
  'fall',
  'check-ssl',
  'verify',
  'maxconn',
  'slowstart',
  'proto',
  'ssl',
  'ssl_cafile',
  'ssl_certificate',
  'sni',
  'verifyhost',
  'check-sni',
  'send-proxy-v2',
  'maintenance',
  'weight',
];

/** The backend fields this simulator renders (the backend model's names), v3 adding metadata. */
const BACKEND_FIELDS = [
  'name',
  'mode',
  'balance',
  'hash_type',
  'cookie',
  'dynamic_cookie_key',
  'adv_check',
  'httpchk_params',
  'check_timeout',
  'connect_timeout',
  'server_timeout',
  'retries',
  'retry_on',
  'description',
  'stick_table',
];

/** Fields this simulator renders; anything else is refused rather than silently dropped. */
const FIELDS: Record<Kind, { schema: z.ZodType; v2: string[]; v3: string[] }> = {
  backends: {
    schema: dpBackendSchema,
    v2: BACKEND_FIELDS,
    v3: [...BACKEND_FIELDS, 'metadata'],
  },
  frontends: {
    schema: dpFrontendSchema,
    v2: ['name', 'mode', 'default_backend', 'maxconn', 'client_timeout', 'description'],
    v3: ['name', 'mode', 'default_backend', 'maxconn', 'client_timeout', 'description', 'metadata'],
  },
  servers: {
    schema: dpServerSchema,
    v2: SERVER_FIELDS,
    v3: [...SERVER_FIELDS, 'metadata'],
  },
  binds: {
    schema: dpBindSchema,
    v2: BIND_FIELDS,
    v3: [...BIND_FIELDS, 'metadata'],
  },
  http_request_rules: { schema: dpHttpRuleSchema, v2: ['index', ...HTTP_RULE], v3: HTTP_RULE },
  http_response_rules: { schema: dpHttpRuleSchema, v2: ['index', ...HTTP_RULE], v3: HTTP_RULE },
  tcp_request_rules: { schema: dpTcpRuleSchema, v2: ['index', ...TCP_RULE], v3: TCP_RULE },
  http_checks: { schema: dpHttpCheckSchema, v2: ['index', ...HTTP_CHECK], v3: HTTP_CHECK },
  stick_rules: { schema: dpStickRuleSchema, v2: ['index', ...STICK_RULE], v3: STICK_RULE },
  acls: {
    schema: dpAclSchema,
    v2: ['index', 'acl_name', 'criterion', 'value'],
    v3: ['acl_name', 'criterion', 'value'],
  },
  backend_switching_rules: {
    schema: dpRuleSchema,
    v2: ['index', 'name', 'cond', 'cond_test'],
    v3: ['name', 'cond', 'cond_test'],
  },
};

function parseBody(kind: Kind, v: ApiVersion, body: unknown): Record<string, unknown> {
  const spec = FIELDS[kind];
  const r = spec.schema.safeParse(body);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new DpError(400, `${kind}: ${i.path.join('.') || 'body'}: ${i.message}`);
  }
  const unknown = Object.keys(r.data as object).find((k) => !spec[v].includes(k));
  if (unknown) throw new DpError(400, `${kind}: field "${unknown}" is not supported by this simulator`);
  if (kind === 'binds' && v === 'v3' && !(r.data as { name?: string }).name) {
    throw new DpError(422, 'binds: name is required');
  }
  // A rule this simulator could not write into haproxy.cfg is refused, not dropped.
  try {
    const rule = r.data as Record<string, unknown>;
    if (kind === 'tcp_request_rules') tcpRequestLine(rule);
    else if (kind === 'http_request_rules') httpRuleLine('request', rule);
    else if (kind === 'http_response_rules') httpRuleLine('response', rule);
    else if (kind === 'http_checks') httpCheckLine(rule);
    else if (kind === 'stick_rules') stickRuleLine(rule);
  } catch (err) {
    if (err instanceof RuleRefused) throw new DpError(err.status, `${kind}: ${err.message}`);
    throw err;
  }
  return r.data as Record<string, unknown>;
}

/** Which collection a path names: its kind, parent and item key. */
export interface Target {
  kind: Kind;
  parent: string | undefined;
  key: string | undefined;
  /** The parent is a backend (http-request rules live in frontends and backends alike). */
  of?: 'backend';
}

export function readItems(v: ApiVersion, c: DpConfig, { kind, parent, key, of }: Target): unknown {
  if (kind === 'backends' || kind === 'frontends') {
    const map = kind === 'backends' ? c.backends : c.frontends;
    if (key === undefined) {
      return [...map.values()].map((x) => ('backend' in x ? x.backend : x.frontend));
    }
    const x = map.get(key);
    if (!x) throw new DpError(404, `${kind.slice(0, -1)} ${key} not found`);
    return 'backend' in x ? x.backend : x.frontend;
  }
  const list = children(c, kind, parent!, of);
  const shown = (item: Record<string, unknown>, i: number) =>
    isOrdered(kind) && v === 'v2' ? { index: i, ...item } : item;
  if (key === undefined) return list.map((x, i) => shown(x, i));
  const i = find(kind, list, key);
  return shown(list[i]!, i);
}

function children(c: DpConfig, kind: Kind, parent: string, of?: 'backend'): Record<string, unknown>[] {
  if (of === 'backend' && kind === 'http_request_rules') {
    const b = c.backends.get(parent);
    if (!b) throw new DpError(404, `backend ${parent} not found`);
    return (b.httpRequest ??= []) as Record<string, unknown>[];
  }
  if (kind === 'servers' || kind === 'http_checks' || kind === 'stick_rules') {
    const b = c.backends.get(parent);
    if (!b) throw new DpError(404, `backend ${parent} not found`);
    const list =
      kind === 'servers' ? b.servers : kind === 'http_checks' ? (b.httpChecks ??= []) : (b.stickRules ??= []);
    return list as Record<string, unknown>[];
  }
  const f = c.frontends.get(parent);
  if (!f) throw new DpError(404, `frontend ${parent} not found`);
  const lists: Record<string, unknown[]> = {
    binds: f.binds,
    acls: f.acls,
    backend_switching_rules: f.rules,
    http_request_rules: f.httpRequest,
    http_response_rules: f.httpResponse,
    tcp_request_rules: f.tcpRequest,
  };
  return lists[kind] as Record<string, unknown>[];
}

function find(kind: Kind, list: Record<string, unknown>[], key: string): number {
  if (isOrdered(kind)) {
    const i = Number(key);
    if (!Number.isInteger(i) || i < 0 || i >= list.length) throw new DpError(404, `${kind} ${key} not found`);
    return i;
  }
  const i = list.findIndex((x) => x.name === key);
  if (i < 0) throw new DpError(404, `${kind.slice(0, -1)} ${key} not found`);
  return i;
}

export function writeItems(
  v: ApiVersion,
  c: DpConfig,
  method: string,
  { kind, parent, key, of }: Target,
  body: unknown,
): { body: unknown } {
  if (kind === 'backends' || kind === 'frontends') {
    const map = (kind === 'backends' ? c.backends : c.frontends) as Map<string, unknown>;
    if (method === 'DELETE') {
      if (key === undefined || !map.delete(key))
        throw new DpError(404, `${kind.slice(0, -1)} ${key} not found`);
      return { body: undefined };
    }
    const data = parseBody(kind, v, body);
    const name = String(data.name);
    if (method === 'POST' && key === undefined) {
      if (map.has(name)) throw new DpError(409, `${kind.slice(0, -1)} ${name} already exists`);
      if (kind === 'backends') c.backends.set(name, { backend: data as never, servers: [], httpChecks: [] });
      else
        c.frontends.set(name, {
          frontend: data as never,
          binds: [],
          acls: [],
          rules: [],
          httpRequest: [],
          httpResponse: [],
          tcpRequest: [],
        });
      return { body: data };
    }
    if (method === 'PUT' && key !== undefined) {
      const cur = map.get(key) as Record<string, unknown> | undefined;
      if (!cur) throw new DpError(404, `${kind.slice(0, -1)} ${key} not found`);
      if (name !== key) throw new DpError(400, `the name in the body (${name}) is not ${key}`);
      cur[kind === 'backends' ? 'backend' : 'frontend'] = data;
      return { body: data };
    }
    throw new DpError(405, `${method} not allowed here`);
  }
  const list = children(c, kind, parent!, of);
  const ordered = isOrdered(kind);
  if (method === 'PUT' && key === undefined) {
    // v3: the whole list at once.
    if (v !== 'v3' || !ordered || !Array.isArray(body))
      throw new DpError(405, `PUT of ${kind} needs v3 and a list`);
    const items = body.map((x) => parseBody(kind, v, x));
    list.splice(0, list.length, ...items);
    return { body: items };
  }
  if (method === 'DELETE') {
    if (key === undefined) throw new DpError(405, 'DELETE needs an item');
    list.splice(find(kind, list, key), 1);
    return { body: undefined };
  }
  const data = parseBody(kind, v, body);
  if (kind === 'binds' && data.name === undefined) data.name = `${String(data.address)}:${String(data.port)}`;
  if (method === 'POST') {
    if (ordered) {
      const { index, ...item } = data;
      const at = v === 'v2' ? Number(index) : key !== undefined ? Number(key) : list.length;
      if (!Number.isInteger(at) || at < 0 || at > list.length)
        throw new DpError(400, `index ${String(index ?? key)} is out of range`);
      list.splice(at, 0, item);
      return { body: data };
    }
    if (list.some((x) => x.name === data.name))
      throw new DpError(409, `${kind.slice(0, -1)} ${String(data.name)} already exists`);
    list.push(data);
    return { body: data };
  }
  if (method === 'PUT' && key !== undefined) {
    const i = find(kind, list, key);
    if (ordered) {
      const { index: _i, ...item } = data;
      list[i] = item;
    } else {
      if (data.name !== key)
        throw new DpError(400, `the name in the body (${String(data.name)}) is not ${key}`);
      list[i] = data;
    }
    return { body: data };
  }
  throw new DpError(405, `${method} not allowed here`);
}

/** The collection a configuration path (after /configuration/) names, v2 or v3 style. */
export function resolveTarget(v: ApiVersion, rest: string[], query: Record<string, string>): Target {
  const [a, b, c, d] = rest;
  if ((a === 'backends' || a === 'frontends') && c === undefined)
    return { kind: a, parent: undefined, key: b };
  if (v === 'v3' && a === 'backends' && b && (c === 'servers' || c === 'http_checks' || c === 'stick_rules'))
    return { kind: c, parent: b, key: d };
  if (v === 'v3' && a === 'backends' && b && c === 'http_request_rules')
    return { kind: c, parent: b, key: d, of: 'backend' };
  if (v === 'v2' && a === 'http_checks' && c === undefined) {
    if (query.parent_type !== 'backend' || !query.parent_name)
      throw new DpError(400, 'http_checks: this simulator holds those of backends (parent_type=backend)');
    return { kind: 'http_checks', parent: query.parent_name, key: b };
  }
  if (v === 'v2' && a === 'stick_rules' && c === undefined) {
    if (!query.backend) throw new DpError(400, 'stick_rules: the parent backend is not given');
    return { kind: 'stick_rules', parent: query.backend, key: b };
  }
  if (
    v === 'v3' &&
    a === 'frontends' &&
    b &&
    (c === 'binds' || c === 'acls' || c === 'backend_switching_rules' || RULES.includes(c ?? ''))
  ) {
    return { kind: c as Kind, parent: b, key: d };
  }
  if (v === 'v2' && a === 'http_request_rules' && c === undefined && query.parent_type === 'backend') {
    if (!query.parent_name) throw new DpError(400, `${a}: the parent backend is not given`);
    return { kind: a, parent: query.parent_name, key: b, of: 'backend' };
  }
  if (v === 'v2' && a && RULES.includes(a) && c === undefined) {
    if (query.parent_type !== 'frontend' || !query.parent_name) {
      throw new DpError(400, `${a}: this simulator holds rules of frontends (parent_type=frontend)`);
    }
    return { kind: a as RuleKind, parent: query.parent_name, key: b };
  }
  if (
    v === 'v2' &&
    (a === 'servers' || a === 'binds' || a === 'acls' || a === 'backend_switching_rules') &&
    c === undefined
  ) {
    const parent =
      a === 'servers'
        ? (query.backend ?? (query.parent_type === 'backend' ? query.parent_name : undefined))
        : a === 'binds'
          ? (query.frontend ?? (query.parent_type === 'frontend' ? query.parent_name : undefined))
          : a === 'acls'
            ? query.parent_type === 'frontend'
              ? query.parent_name
              : undefined
            : query.frontend;
    if (!parent)
      throw new DpError(400, `${a}: the parent ${a === 'servers' ? 'backend' : 'frontend'} is not given`);
    return { kind: a, parent, key: b };
  }
  throw new DpError(404, `configuration/${rest.join('/')}: not found in this simulator`);
}
