/**
 * Request mirrors (HttpRoute.mirrors) on HAProxy, both transports. HAProxy has no mirror of its
 * own; its Lua runtime does it in a few lines: an `http-request lua.npl_mirror <socket>` action
 * on the route's requests (after the route's header changes; a share by `rand`) copies the
 * request as it then is and hands the copy to a Lua task, so the client's request never waits for
 * it, and HAProxy's own HTTP client sends it to a frontend of ours on an abstract socket whose
 * default backend is the mirror's pool: the pool's balancing, health checks and TLS to members
 * apply to the copies too, and their answers are thrown away. What is not copied: a method
 * HAProxy 2.6's HTTP client cannot send (GET, HEAD, POST, PUT and DELETE are), a body not whole
 * in the buffer after a 1 s wait, a chunked body, and any copy past 256 in flight (a mirror that
 * does not answer never holds HAProxy's memory). Pure but for writeMirrorScript and
 * removeMirrorScript.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HttpRoute, L7VirtualService, VirtualService } from '../../src/model/types.ts';
import type { HttpRule } from './frontend-rules.ts';

/** The Lua action's name (`http-request lua.<name>`). */
export const MIRROR_ACTION = 'npl_mirror';
/** The script's file name, beside the certificates (runtime) or in the Data Plane's storage. */
export const MIRROR_LUA_FILE = 'npl-mirror.lua';

/** The most copies one route makes; what the capability declares. */
export const MAX_MIRRORS = 4;

/**
 * The script HAProxy loads (`lua-load`) where a route mirrors. The action reads the request (the
 * route's changes made) and registers a task that sends it; the task's failure is only logged at
 * debug level (a mirror's answer, or its absence, never touches the client's).
 */
export const MIRROR_LUA = `-- npl-lb request mirrors (adapters/haproxy/mirrors.ts)
local inflight = 0
local LIMIT = 256
local SEND = { GET = 'get', HEAD = 'head', POST = 'post', PUT = 'put', DELETE = 'delete' }

local function send(dst, method, path, headers, body)
  local ok, err = pcall(function()
    local hc = core.httpclient()
    hc[SEND[method]](hc, { url = 'http://mirror' .. path, dst = dst, headers = headers, body = body, timeout = 10000 })
  end)
  inflight = inflight - 1
  if not ok then core.Debug('npl-lb mirror to ' .. dst .. ': ' .. tostring(err)) end
end

core.register_action('${MIRROR_ACTION}', { 'http-req' }, function(txn, dst)
  local method = txn.f:method()
  if SEND[method] == nil or inflight >= LIMIT then return end
  local all = txn.http:req_get_headers()
  if all['transfer-encoding'] ~= nil then return end
  local size = tonumber(txn.f:req_hdr('content-length') or '0') or 0
  local body = txn.f:req_body()
  if size > 0 and (body == nil or #body ~= size) then return end
  local headers = {}
  for name, values in pairs(all) do
    if name ~= 'content-length' then
      local list = {}
      for i = 0, #values do
        if values[i] ~= nil then list[#list + 1] = values[i] end
      end
      headers[name] = list
    end
  end
  local path = txn.f:pathq()
  if size == 0 then body = nil end
  inflight = inflight + 1
  core.register_task(function() send(dst, method, path, headers, body) end)
end, 1)
`;

/** The script in `dir` (the runtime transport's certificate directory), written when it differs. */
export function writeMirrorScript(dir: string): void {
  const file = join(dir, MIRROR_LUA_FILE);
  let now: string | undefined;
  try {
    now = readFileSync(file, 'utf8');
  } catch {
    now = undefined;
  }
  if (now === MIRROR_LUA) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(file, MIRROR_LUA, { mode: 0o600 });
}

/** The script taken away once no route mirrors (after a configuration without it is running). */
export function removeMirrorScript(dir: string): void {
  rmSync(join(dir, MIRROR_LUA_FILE), { force: true });
}

/** The pools a virtual service's routes copy requests to, in a stable order. */
export const mirrorPools = (v: L7VirtualService): string[] =>
  [...new Set(v.routes.flatMap((r) => (r.mirrors ?? []).map((m) => m.pool)))].sort();

export const hasMirrors = (vss: Iterable<VirtualService>): boolean =>
  [...vss].some((v) => v.kind === 'l7' && v.routes.some((r) => (r.mirrors?.length ?? 0) > 0));

/**
 * Whether the script is wanted in a configuration file: a route of ours mirrors, or sections not
 * ours (another cluster's on the same HAProxy) use the mirrors' action.
 */
export const mirrorScriptWanted = (
  vss: Iterable<VirtualService>,
  foreign: readonly { lines: readonly string[] }[],
): boolean =>
  hasMirrors(vss) || foreign.some((s) => s.lines.some((l) => l.includes(` lua.${MIRROR_ACTION} `)));

/**
 * A virtual service's routes' mirrors as the device serves them (`served`: the pools whose mirror
 * frontend is there as written): one whose frontend is gone (deleted by hand) is not read back, so
 * the next pass writes it again. In place.
 */
export function keepServedMirrors(vs: L7VirtualService, served: ReadonlySet<string>): void {
  for (const r of vs.routes) {
    if (!r.mirrors) continue;
    const kept = r.mirrors.filter((m) => served.has(m.pool));
    if (kept.length > 0) r.mirrors = kept;
    else delete r.mirrors;
  }
}

/** A mirror's frontend: the virtual service's name, `_m` and the pool's place ('_' is in no Kubernetes name). */
export const mirrorFrontend = (vs: string, k: number): string => `${vs}_m${k}`;

/**
 * A mirror's socket: abstract, named by this HAProxy (`instance`: its admin socket, or its Data
 * Plane API's address), the virtual service and the pool, hashed to stay within a socket name's
 * length; like the TLS loop's (tls-mixed.ts), a process in HAProxy's network namespace could
 * connect to it and reach the pool, as it could reach the members directly.
 */
export function mirrorSocket(vs: string, pool: string, instance: string): string {
  const tag = createHash('sha256').update(`${instance}\n${vs}\n${pool}`).digest('hex').slice(0, 24);
  return `abns@npl-m-${tag}`;
}

/** How long a mirrored route waits for a request's body (to copy it whole), at most (ms). */
export const BODY_WAIT_MS = 1000;

/**
 * A route's mirror rules, on its requests (`at`): wait for the body, then one action per mirror,
 * a share picked by `rand` each on its own.
 */
export function mirrorRules(v: L7VirtualService, r: HttpRoute, at: string, instance: string): HttpRule[] {
  if (!r.mirrors?.length) return [];
  return [
    { action: { type: 'wait-for-body', ms: BODY_WAIT_MS }, cond: at },
    ...r.mirrors.map((m): HttpRule => ({
      action: { type: 'lua', name: MIRROR_ACTION, params: mirrorSocket(v.name, m.pool, instance) },
      cond: m.share ? `${at} { rand(${m.share.denominator}) -m int lt ${m.share.numerator} }` : at,
    })),
  ];
}
