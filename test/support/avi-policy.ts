/**
 * What an Avi Service Engine does with one HTTP request given the objects of an L7 virtual service,
 * for the subset npl-lb writes: the HTTP request policy (rules by index, the first that matches
 * acts: host header, path, headers, query string and method matches; redirect, URL rewrite,
 * header and switching actions), pool groups with member ratios, the virtual service's default
 * pool group, the response policy's header actions, and npl-lb's DataScript of unresolved shares.
 * Anything else throws, so an object the model of this file does not cover never passes silently.
 */
import { runHttpScript, runL4Script } from './avi-datascript.ts';

type Json = Record<string, unknown>;

export interface AviRequest {
  host: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
}

export interface AviOutcome {
  /** 0: the connection is closed (no pool, no response). */
  status: number;
  pool?: string;
  location?: string;
  upstream?: { host: string; path: string; headers: Record<string, string> };
  /** Response header actions, in order. */
  response?: Json[];
}

/** The objects by type and name, as the adapter rendered them (refs by name). */
export type AviObjects = Record<string, Map<string, Json>>;

const refName = (ref: unknown): string => decodeURIComponent(String(ref).replace(/^.*\?name=/, ''));

function compare(m: Json, value: string | undefined, prefix = ''): boolean {
  const criteria = String(m.match_criteria).replace(prefix, '');
  const cs = m.match_case === 'SENSITIVE';
  const norm = (x: string) => (cs ? x : x.toLowerCase());
  const values = ((m.value ?? m.match_str ?? []) as string[]).map(norm);
  if (value === undefined) return false;
  const v = norm(value);
  const test: Record<string, (x: string) => boolean> = {
    EQUALS: (x) => v === x,
    BEGINS_WITH: (x) => v.startsWith(x),
    ENDS_WITH: (x) => v.endsWith(x),
    CONTAINS: (x) => v.includes(x),
  };
  const t = test[criteria];
  if (!t) throw new Error(`match criteria not modelled: ${String(m.match_criteria)}`);
  return values.some(t);
}

function matches(
  match: Json,
  req: AviRequest,
  headers: Map<string, string>,
  path: string,
  query: string,
): boolean {
  for (const [k, m] of Object.entries(match)) {
    const ok =
      k === 'host_hdr'
        ? compare(m as Json, req.host.replace(/:\d+$/, ''), 'HDR_')
        : k === 'path'
          ? compare(m as Json, path)
          : k === 'query'
            ? compare(m as Json, query, 'QUERY_MATCH_')
            : k === 'method'
              ? ((m as Json).methods as string[]).includes(`HTTP_METHOD_${req.method ?? 'GET'}`)
              : k === 'hdrs'
                ? (m as Json[]).every((h) => compare(h, headers.get(String(h.hdr).toLowerCase()), 'HDR_'))
                : (() => {
                    throw new Error(`match not modelled: ${k}`);
                  })();
    if (!ok) return false;
  }
  return true;
}

/** URI tokens joined by '/': strings as they are, PATH tokens the request's segments from start_index. */
function uriParam(p: Json, path: string): string {
  const segments = path.split('/').slice(1);
  const parts = ((p.tokens ?? []) as Json[]).map((t) => {
    if (t.type === 'URI_TOKEN_TYPE_STRING') return String(t.str_value);
    if (t.type === 'URI_TOKEN_TYPE_PATH') return segments.slice(Number(t.start_index)).join('/');
    throw new Error(`token not modelled: ${String(t.type)}`);
  });
  return parts.filter((x) => x !== '').join('/');
}

const DEFAULT_PORT: Record<string, number> = { HTTP: 80, HTTPS: 443 };

/** The Service Engine's answer; `rand` in [0, 1) picks among pool group members and shares. */
export function evaluate(
  objects: AviObjects,
  vsName: string,
  req: AviRequest,
  rand = Math.random(),
): AviOutcome {
  const vs = objects.virtualservice!.get(vsName)!;
  const set = objects.httppolicyset!.get(refName((vs.http_policies as Json[])[0]!.http_policy_set_ref))!;
  const q = req.path.indexOf('?');
  const path = q < 0 ? req.path : req.path.slice(0, q);
  const query = q < 0 ? '' : req.path.slice(q + 1);
  const headers = new Map(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  const rules = ((set.http_request_policy as Json).rules as Json[]).sort(
    (a, b) => Number(a.index) - Number(b.index),
  );
  const rule = rules.find((r) => matches((r.match ?? {}) as Json, req, headers, path, query));
  const responseRules = (((set.http_response_policy as Json | undefined)?.rules ?? []) as Json[]).sort(
    (a, b) => Number(a.index) - Number(b.index),
  );
  const responseRule = responseRules.find((r) => matches((r.match ?? {}) as Json, req, headers, path, query));
  let group = vs.pool_group_ref ? refName(vs.pool_group_ref) : undefined;
  let host = req.host;
  let upPath = path;
  const up = new Map(headers);
  if (rule?.redirect_action) {
    const rd = rule.redirect_action as Json;
    const proto = String(rd.protocol);
    const port = Number(rd.port ?? DEFAULT_PORT[proto]);
    const toHost = rd.host ? uriParam(rd.host as Json, path) : req.host.replace(/:\d+$/, '').toLowerCase();
    const toPath = rd.path ? `/${uriParam(rd.path as Json, path)}` : path;
    const status = Number(String(rd.status_code).replace('HTTP_REDIRECT_STATUS_CODE_', ''));
    return {
      status,
      location: `${proto.toLowerCase()}://${toHost}${port === DEFAULT_PORT[proto] ? '' : `:${port}`}${toPath}${rd.keep_query && query ? `?${query}` : ''}`,
    };
  }
  if (rule?.rewrite_url_action) {
    const rw = rule.rewrite_url_action as Json;
    if (rw.host_hdr) host = uriParam(rw.host_hdr as Json, path);
    if (rw.path) upPath = `/${uriParam(rw.path as Json, path)}`;
  }
  for (const a of (rule?.hdr_action ?? []) as Json[]) {
    const h = a.hdr as { name: string; value?: { val: string } };
    const k = h.name.toLowerCase();
    if (a.action === 'HTTP_REMOVE_HDR') up.delete(k);
    else if (a.action === 'HTTP_ADD_HDR')
      up.set(k, up.has(k) ? `${up.get(k)},${h.value!.val}` : h.value!.val);
    else throw new Error(`header action not modelled: ${String(a.action)}`);
  }
  const sw = rule?.switching_action as Json | undefined;
  if (sw?.action === 'HTTP_SWITCHING_SELECT_LOCAL')
    return { status: Number(String(sw.status_code).replace('HTTP_LOCAL_RESPONSE_STATUS_CODE_', '')) };
  if (sw?.action === 'HTTP_SWITCHING_SELECT_POOLGROUP') group = refName(sw.pool_group_ref);
  // The DataScript runs after the request policy (npl-lb's: 500 for the share the rule wrote).
  for (const ref of (vs.vs_datascripts ?? []) as Json[]) {
    const set = objects.vsdatascriptset!.get(refName(ref.vs_datascript_set_ref))!;
    const answered = runHttpScript(String((set.datascript as Json[])[0]!.script), up, rand);
    if (answered !== undefined) return { status: answered };
  }
  if (!group) return { status: 0 };
  const members = (objects.poolgroup!.get(group)!.members as Json[]).map((m) => ({
    pool: refName(m.pool_ref),
    ratio: Number(m.ratio),
  }));
  const total = members.reduce((s, m) => s + m.ratio, 0);
  let at = rand * total;
  let pool = members.at(-1)!.pool;
  for (const m of members) {
    if (at < m.ratio) {
      pool = m.pool;
      break;
    }
    at -= m.ratio;
  }
  return {
    status: 200,
    pool,
    upstream: { host, path: `${upPath}${query ? `?${query}` : ''}`, headers: Object.fromEntries(up) },
    response: (responseRule?.hdr_action ?? []) as Json[],
  };
}

/**
 * Where a TLS connection with this server name goes through a passthrough virtual service: its L4
 * DataScript run on the ClientHello (undefined: no server name; null: not TLS), then the pool of
 * the pool group it selected; undefined: the connection is closed.
 */
export function connect(
  objects: AviObjects,
  vsName: string,
  sni: string | undefined | null,
): string | undefined {
  const vs = objects.virtualservice!.get(vsName)!;
  const set = objects.vsdatascriptset!.get(refName((vs.vs_datascripts as Json[])[0]!.vs_datascript_set_ref))!;
  const group = runL4Script(String((set.datascript as Json[])[0]!.script), sni);
  if (group === undefined) return undefined;
  const pg = objects.poolgroup!.get(group);
  if (!pg) throw new Error(`the script selected pool group ${group}, which the service does not have`);
  return refName((pg.members as Json[])[0]!.pool_ref);
}
