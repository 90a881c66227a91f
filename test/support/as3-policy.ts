/**
 * What BIG-IP does with one HTTP request given the AS3 objects of an L7 service, for the subset
 * npl-lb declares: an Endpoint_Policy with first-match rules (httpHost, httpUri path and
 * queryParameter, httpHeader, httpMethod conditions with their operands; httpRedirect, httpHeader,
 * httpUri, tcl setVariable and forward actions), the service's default pool, and the 500 iRule.
 * `tcl:` values are evaluated by a small Tcl interpreter of the commands npl-lb emits, so an
 * escaping mistake shows as a wrong value (or a thrown error), never as a silent pass.
 */
type Json = Record<string, unknown>;

export interface PolicyRequest {
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
}

export interface PolicyOutcome {
  /** 0: the connection is reset (no pool). */
  status: number;
  pool?: string;
  location?: string;
  upstream?: { host: string; path: string; headers: Record<string, string> };
  /** Response header actions, in order. */
  response?: Json[];
}

interface Ctx {
  host: string;
  path: string;
  query: string;
  rand: number;
}

/** Tcl: a script word list evaluated with command substitution; only the commands we emit. */
function substitute(s: string, c: Ctx): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '\\') out += s[++i] ?? '';
    else if (ch === '[') {
      const end = closing(s, i, '[', ']');
      out += command(s.slice(i + 1, end), c);
      i = end;
    } else if (ch === '$' || ch === ']' || ch === '{' || ch === '}' || ch === '"' || ch === ';')
      throw new Error(`tcl: unescaped ${ch} in ${JSON.stringify(s)}`);
    else out += ch;
  }
  return out;
}

function closing(s: string, at: number, open: string, close: string): number {
  let depth = 0;
  for (let i = at; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === open) depth++;
    else if (s[i] === close && --depth === 0) return i;
  }
  throw new Error(`tcl: unbalanced ${open} in ${JSON.stringify(s)}`);
}

/** Splits a command into words: {braced} (literal), "quoted" and bare words (substituted). */
function words(cmd: string, c: Ctx): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < cmd.length) {
    if (cmd[i] === ' ') {
      i++;
      continue;
    }
    if (cmd[i] === '{') {
      const end = closing(cmd, i, '{', '}');
      out.push(cmd.slice(i + 1, end));
      i = end + 1;
    } else if (cmd[i] === '"') {
      let end = i + 1;
      while (cmd[end] !== '"') end += cmd[end] === '\\' ? 2 : 1;
      out.push(substitute(cmd.slice(i + 1, end), c));
      i = end + 1;
    } else {
      let end = i;
      while (end < cmd.length && cmd[end] !== ' ') {
        if (cmd[end] === '[') end = closing(cmd, end, '[', ']');
        else if (cmd[end] === '\\') end++;
        end++;
      }
      out.push(substitute(cmd.slice(i, end), c));
      i = end;
    }
  }
  return out;
}

function expr(e: string, c: Ctx): boolean {
  const m = /^(.*?) (>|<|ne|eq) (.*)$/.exec(e.trim());
  if (!m) throw new Error(`tcl expr: ${e}`);
  const val = (x: string) => (x === 'rand()' ? String(c.rand) : x === '""' ? '' : substitute(x, c));
  const [a, b] = [val(m[1]!), val(m[3]!)];
  if (m[2] === 'ne') return a !== b;
  if (m[2] === 'eq') return a === b;
  return m[2] === '>' ? Number(a) > Number(b) : Number(a) < Number(b);
}

function command(cmd: string, c: Ctx): string {
  const [name, ...args] = words(cmd, c);
  switch (name) {
    case 'HTTP::host':
      return c.host;
    case 'HTTP::path':
      return c.path;
    case 'HTTP::query':
      return c.query;
    case 'getfield':
      return args[0]!.split(args[1]!)[Number(args[2]) - 1] ?? '';
    case 'format':
      return args[0]!.replace('%s', args[1] ?? '');
    case 'expr':
      return expr(args[0]!, c) ? '1' : '0';
    case 'if':
      return expr(args[0]!, c) ? command(args[1]!, c) : args[2] === 'else' ? command(args[3]!, c) : '';
    case 'string':
      if (args[0] === 'tolower') return args[1]!.toLowerCase();
      if (args[0] === 'length') return String(args[1]!.length);
      if (args[0] === 'range' && args[3] === 'end') return args[1]!.slice(Number(args[2]));
      break;
  }
  throw new Error(`tcl: command not modelled: ${cmd}`);
}

export const tclValue = (v: string, c: Ctx): string => (v.startsWith('tcl:') ? substitute(v.slice(4), c) : v);

function compare(spec: Json, value: string | undefined): boolean {
  const op = String(spec.operand ?? 'equals');
  const cs = spec.caseSensitive === true;
  const norm = (x: string) => (cs ? x : x.toLowerCase());
  const values = ((spec.values ?? []) as string[]).map(norm);
  if (op === 'exists') return value !== undefined;
  if (value === undefined) return op.startsWith('does-not');
  const v = norm(value);
  const test = (x: string) =>
    op.endsWith('equal') || op === 'equals'
      ? v === x
      : op.endsWith('start-with') || op === 'starts-with'
        ? v.startsWith(x)
        : v.endsWith(x);
  return op.startsWith('does-not') ? !values.some(test) : values.some(test);
}

/** BIG-IP's answer: the first rule whose conditions all hold, its actions, then the iRule. */
export function evaluate(
  app: Json,
  serviceName: string,
  req: PolicyRequest,
  rand = Math.random(),
): PolicyOutcome {
  const svc = app[serviceName] as Json;
  const policy = app[String(svc.policyEndpoint)] as Json;
  const q = req.path.indexOf('?');
  const ctx: Ctx = {
    host: req.host,
    path: q < 0 ? req.path : req.path.slice(0, q),
    query: q < 0 ? '' : req.path.slice(q + 1),
    rand,
  };
  const headers = new Map(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const query = new URLSearchParams(ctx.query);
  const bareHost = req.host.replace(/:\d+$/, '');
  const holds = (cond: Json): boolean => {
    if (cond.type === 'httpHost') return compare(cond.host as Json, bareHost);
    if (cond.type === 'httpMethod') return compare(cond.all as Json, req.method ?? 'GET');
    if (cond.type === 'httpHeader')
      return compare(cond.all as Json, headers.get(String(cond.name).toLowerCase()));
    if (cond.type === 'httpUri' && cond.path) return compare(cond.path as Json, ctx.path);
    if (cond.type === 'httpUri' && cond.queryParameter)
      return compare(cond.queryParameter as Json, query.get(String(cond.name)) ?? undefined);
    throw new Error(`condition not modelled: ${JSON.stringify(cond)}`);
  };
  const rule = ((policy.rules ?? []) as Json[]).find((r) => ((r.conditions ?? []) as Json[]).every(holds));
  let pool = typeof svc.pool === 'string' ? svc.pool : undefined;
  let host = req.host;
  let path = ctx.path;
  const up = new Map(headers);
  const response: Json[] = [];
  let vars: Record<string, string> = {};
  for (const a of (rule?.actions ?? []) as Json[]) {
    if (a.type === 'httpRedirect')
      return { status: Number(a.code ?? 302), location: tclValue(String(a.location), ctx) };
    if (a.type === 'forward') pool = String(((a.select as Json).pool as Json).use);
    else if (a.type === 'tcl') {
      const sv = a.setVariable as { name: string; expression: string };
      vars = { ...vars, [sv.name]: substitute(sv.expression, ctx) };
    } else if (a.type === 'httpUri') path = tclValue(String((a.replace as Json).path), ctx);
    else if (a.type === 'httpHeader' && a.event === 'response') response.push(a);
    else if (a.type === 'httpHeader') {
      const [op, h] = Object.entries(a).find(([k]) => ['replace', 'insert', 'remove'].includes(k))! as [
        string,
        { name: string; value?: string },
      ];
      const k = h.name.toLowerCase();
      if (op === 'remove') up.delete(k);
      else if (op === 'replace' && k === 'host') host = tclValue(h.value!, ctx);
      else if (op === 'replace') up.set(k, tclValue(h.value!, ctx));
      else up.set(k, up.has(k) ? `${up.get(k)},${tclValue(h.value!, ctx)}` : tclValue(h.value!, ctx));
    } else throw new Error(`action not modelled: ${JSON.stringify(a)}`);
  }
  const iRules = (svc.iRules ?? []) as string[];
  if (iRules.length > 0 && vars.npl_500 !== undefined && vars.npl_500 !== '0') return { status: 500 };
  // No pool to send to: BIG-IP resets the connection (status 0 here).
  if (!pool) return { status: 0 };
  return {
    status: 200,
    pool,
    upstream: { host, path: `${path}${ctx.query ? `?${ctx.query}` : ''}`, headers: Object.fromEntries(up) },
    response,
  };
}
