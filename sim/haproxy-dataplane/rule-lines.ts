/**
 * The simulated Data Plane API's rendering of rule objects into haproxy.cfg lines, written from the
 * Data Plane API specification (the `http_request_rule`, `http_response_rule`, `tcp_request_rule`
 * `http_check` and `stick_rule` models: which field each rule type reads) and HAProxy's configuration manual,
 * as the real API's configuration library does. It shares nothing with the adapter's mapping: an
 * adapter that puts a value in a field the type does not read is refused here (422, as the real
 * API refuses a rule missing a field its type needs), not undone by an inverse of its own.
 */

/** A rule object as the API stores it (fields by their names in the specification). */
export type RuleObject = Record<string, unknown>;

export class RuleRefused extends Error {
  readonly status = 422;
}

const str = (o: RuleObject, field: string, type: string): string => {
  const v = o[field];
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string' || v === '') throw new RuleRefused(`${type}: ${field} is required`);
  return v;
};

/** ` if <test>` / ` unless <test>`, or nothing. */
function condition(o: RuleObject): string {
  const cond = o.cond;
  if (cond === undefined) return '';
  if (cond !== 'if' && cond !== 'unless')
    throw new RuleRefused(`cond must be if or unless, not ${String(cond)}`);
  return ` ${cond} ${str(o, 'cond_test', `cond ${cond}`)}`;
}

/** Fields each type of http-request / http-response rule reads, in the order of its line. */
const HTTP_TYPES: Record<string, (o: RuleObject, t: string) => string> = {
  'set-header': (o, t) => `${t} ${str(o, 'hdr_name', t)} ${str(o, 'hdr_format', t)}`,
  'add-header': (o, t) => `${t} ${str(o, 'hdr_name', t)} ${str(o, 'hdr_format', t)}`,
  'del-header': (o, t) => `${t} ${str(o, 'hdr_name', t)}`,
  'set-path': (o, t) => `${t} ${str(o, 'path_fmt', t)}`,
  'set-var': (o, t) => `${t}(${str(o, 'var_scope', t)}.${str(o, 'var_name', t)}) ${str(o, 'var_expr', t)}`,
  redirect: (o, t) => {
    const kind = str(o, 'redir_type', t);
    if (!['location', 'prefix', 'scheme'].includes(kind)) throw new RuleRefused(`${t}: redir_type ${kind}`);
    const code = o.redir_code === undefined ? '' : ` code ${str(o, 'redir_code', t)}`;
    return `${t} ${kind} ${str(o, 'redir_value', t)}${code}`;
  },
  // wait-for-body: a time in ms, at least so many bytes; lua: the action of a loaded script, its arguments.
  'wait-for-body': (o, t) =>
    `${t} time ${str(o, 'wait_time', t)}${o.wait_at_least === undefined ? '' : ` at-least ${str(o, 'wait_at_least', t)}`}`,
  lua: (o, t) =>
    `lua.${str(o, 'lua_action', t)}${o.lua_params === undefined ? '' : ` ${str(o, 'lua_params', t)}`}`,
  'set-timeout': (o, t) => {
    const which = str(o, 'timeout_type', t);
    if (!['server', 'tunnel', 'client'].includes(which)) throw new RuleRefused(`${t}: timeout_type ${which}`);
    return `${t} ${which} ${str(o, 'timeout', t)}`;
  },
  return: (o, t) => {
    const status = `${t} status ${o.return_status_code === undefined ? '200' : str(o, 'return_status_code', t)}`;
    const format = o.return_content_format;
    const hdrs = o.return_hdrs;
    // return_hdrs depends on a content format of file, lf-file, string or lf-string (the spec's
    // x-dependency); the content and its type go with the format.
    if (format === undefined) {
      if (hdrs !== undefined) throw new RuleRefused(`${t}: return_hdrs needs return_content_format`);
      return status;
    }
    if (!['string', 'lf-string'].includes(String(format)))
      throw new RuleRefused(`${t}: return_content_format ${String(format)} is not served by this simulator`);
    const list = hdrs === undefined ? [] : hdrs;
    if (!Array.isArray(list)) throw new RuleRefused(`${t}: return_hdrs must be a list`);
    const headers = (list as RuleObject[])
      .map((h) => ` hdr ${str(h, 'name', t)} ${str(h, 'fmt', t)}`)
      .join('');
    return `${status} content-type ${str(o, 'return_content_type', t)} ${String(format)} ${str(o, 'return_content', t)}${headers}`;
  },
};

export function httpRuleLine(direction: 'request' | 'response', o: RuleObject): string {
  const type = typeof o.type === 'string' ? o.type : '';
  const render = HTTP_TYPES[type];
  if (!render)
    throw new RuleRefused(
      `http-${direction} rule type ${JSON.stringify(type)} is not served by this simulator`,
    );
  return `http-${direction} ${render(o, type)}${condition(o)}`;
}

export function tcpRequestLine(o: RuleObject): string {
  if (o.type === 'inspect-delay') return `tcp-request inspect-delay ${str(o, 'timeout', 'inspect-delay')}`;
  if (o.type === 'content' || o.type === 'connection' || o.type === 'session') {
    const action = str(o, 'action', `tcp-request ${o.type}`);
    if (!['accept', 'reject'].includes(action))
      throw new RuleRefused(`tcp-request ${o.type} ${action} is not served by this simulator`);
    return `tcp-request ${o.type} ${action}${condition(o)}`;
  }
  throw new RuleRefused(`tcp-request rule type ${JSON.stringify(o.type)}`);
}

/**
 * An `http_check` as its haproxy.cfg line: `send` with the request's parts it names (meth, uri,
 * ver, then each header's name and log-format value), `expect` a match and its pattern (`!` first
 * when negated). Other types are not served by this simulator.
 */
export function httpCheckLine(o: RuleObject): string {
  if (o.type === 'send') {
    const parts: string[] = [];
    if (o.method !== undefined) parts.push(`meth ${str(o, 'method', 'send')}`);
    if (o.uri !== undefined) parts.push(`uri ${str(o, 'uri', 'send')}`);
    if (o.version !== undefined) parts.push(`ver ${str(o, 'version', 'send')}`);
    const headers = o.headers === undefined ? [] : o.headers;
    if (!Array.isArray(headers)) throw new RuleRefused('send: headers must be a list');
    for (const h of headers as RuleObject[])
      parts.push(`hdr ${str(h, 'name', 'send')} ${str(h, 'fmt', 'send')}`);
    return `http-check send${parts.map((x) => ` ${x}`).join('')}`;
  }
  if (o.type === 'expect') {
    const match = str(o, 'match', 'expect');
    if (!['status', 'rstatus', 'string', 'rstring', 'hdr', 'fhdr'].includes(match))
      throw new RuleRefused(`expect: match ${match}`);
    return `http-check expect ${o.exclamation_mark === true ? '! ' : ''}${match} ${str(o, 'pattern', 'expect')}`;
  }
  throw new RuleRefused(`http-check type ${JSON.stringify(o.type)} is not served by this simulator`);
}

/** A `stick_rule` as its haproxy.cfg line: `stick <type> <pattern> [table <t>] [if|unless <test>]`. */
export function stickRuleLine(o: RuleObject): string {
  const type = str(o, 'type', 'stick rule');
  if (!['match', 'on', 'store-request', 'store-response'].includes(type))
    throw new RuleRefused(`stick rule type ${type}`);
  const table = o.table === undefined ? '' : ` table ${str(o, 'table', 'stick rule')}`;
  return `stick ${type} ${str(o, 'pattern', `stick ${type}`)}${table}${condition(o)}`;
}
