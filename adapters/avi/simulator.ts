/**
 * An Avi Controller simulator for the API npl-lb uses, strict where the controller is: login with
 * session and CSRF cookies (401 without a session, 403 for a write without the CSRF token or
 * Referer, 400 without X-Avi-Version), tenants, an object store with uuid, url and
 * `_last_modified`, names unique per type and tenant (409), references by name or url resolved
 * (400 for an unknown one), unknown and missing required fields rejected per the Avi field model
 * (400), paging with `next`, `name` and `created_by` filters, System-* objects pre-seeded, 412 for a
 * stale `_last_modified`, and deletes of referenced objects refused naming the referrer. Fault
 * knobs (`faults`) add latency, failures and session expiry.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MemberProber } from '../sim-health.ts';
import { SimServer, sendJson } from '../sim-server.ts';
import { knownModel, MODEL_OF, validateAviObject } from './object-models.ts';

type Json = Record<string, unknown>;

export interface AviSimOptions {
  username?: string;
  password?: string;
  tls?: { cert: string; key: string };
  /** The controller version reported at login. */
  version?: string;
}

export interface AviFaults {
  /** Added to every /api call. */
  latencyMs: number;
  /** The next this-many writes answer 503. */
  failWrites: number;
  /** The next this-many calls answer 419 (session refreshed) with new cookies. */
  refresh: number;
  /** Writes of objects with these names answer 503. */
  failNames: Set<string>;
}

/** Ref field -> the object type it must point to. */
const REF_TYPES: Record<string, string> = {
  cloud_ref: 'cloud',
  vrf_ref: 'vrfcontext',
  vrf_context_ref: 'vrfcontext',
  se_group_ref: 'serviceenginegroup',
  tenant_ref: 'tenant',
  pool_ref: 'pool',
  pool_group_ref: 'poolgroup',
  vsvip_ref: 'vsvip',
  health_monitor_refs: 'healthmonitor',
  http_policy_set_ref: 'httppolicyset',
  application_profile_ref: 'applicationprofile',
  network_profile_ref: 'networkprofile',
};

/** Types the controller ships with and the simulator serves read-only beyond the field model. */
const SYSTEM_ONLY = new Set(['applicationprofile', 'networkprofile']);
const SERVER_FIELDS = new Set(['uuid', 'url', '_last_modified', 'tenant_ref']);

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class AviSimulator {
  readonly faults: AviFaults = { latencyMs: 0, failWrites: 0, refresh: 0, failNames: new Set() };
  /** The simulated health monitor (TCP connects to loopback servers). */
  private readonly prober = new MemberProber({ intervalMs: 500 });
  readonly stats = {
    logins: 0,
    calls: 0,
    reads: 0,
    writes: 0,
    /** The most requests handled at once (how much the client overlaps). */
    maxInflight: 0,
    byMethod: {} as Record<string, number>,
  };
  private inflight = 0;
  /** The last 100,000 successful writes, for tests and benchmarks. */
  readonly writeLog: { method: string; type: string; name: string; at: number }[] = [];
  /** type -> uuid -> object (as stored, refs as urls). */
  readonly store = new Map<string, Map<string, Json>>();
  private readonly sessions = new Map<string, { csrf: string }>();
  private readonly http: SimServer;
  private clock = 0;

  constructor(private readonly opts: AviSimOptions = {}) {
    this.http = new SimServer(opts.tls);
    this.seed();
  }

  get url(): string {
    return this.http.url;
  }

  start(port = 0, host = '127.0.0.1'): Promise<string> {
    return this.http.listen(
      async (req, res) => {
        this.inflight++;
        this.stats.maxInflight = Math.max(this.stats.maxInflight, this.inflight);
        try {
          await this.handle(req, res);
        } finally {
          this.inflight--;
        }
      },
      (res, err) =>
        err instanceof HttpError
          ? send(res, err.status, { error: err.message })
          : send(res, 500, { error: String(err) }),
      port,
      host,
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** Ends every session, as a controller restart or idle timeout would. */
  expireSessions(): void {
    this.sessions.clear();
  }

  /** Objects of a type in a tenant, by name. */
  objects(type: string, tenant = 'admin'): Map<string, Json> {
    const out = new Map<string, Json>();
    for (const o of this.store.get(type)?.values() ?? []) {
      if (o.tenant_ref === `/api/tenant/${this.tenantUuid(tenant) ?? ''}`) out.set(String(o.name), o);
    }
    return out;
  }

  private tenantUuid(name: string): string | undefined {
    for (const [uuid, o] of this.store.get('tenant') ?? []) if (o.name === name) return uuid;
    return undefined;
  }

  private put(type: string, o: Json, tenantUuid: string): Json {
    const uuid = String(o.uuid ?? `${type}-${randomUUID()}`);
    const stored: Json = {
      ...o,
      uuid,
      url: `/api/${type}/${uuid}`,
      tenant_ref: `/api/tenant/${tenantUuid}`,
      _last_modified: String(Date.now() * 1000 + (this.clock++ % 1000)),
    };
    let bucket = this.store.get(type);
    if (!bucket) this.store.set(type, (bucket = new Map()));
    bucket.set(uuid, stored);
    return stored;
  }

  private seed(): void {
    const admin = 'tenant-admin';
    this.put('tenant', { name: 'admin', uuid: admin }, admin);
    const system: [string, Json][] = [
      ['cloud', { name: 'Default-Cloud' }],
      ['serviceenginegroup', { name: 'Default-Group' }],
      ['vrfcontext', { name: 'global' }],
      ['healthmonitor', { name: 'System-TCP', type: 'HEALTH_MONITOR_TCP' }],
      ['healthmonitor', { name: 'System-UDP', type: 'HEALTH_MONITOR_UDP' }],
      ['healthmonitor', { name: 'System-HTTP', type: 'HEALTH_MONITOR_HTTP' }],
      ['healthmonitor', { name: 'System-Ping', type: 'HEALTH_MONITOR_PING' }],
      ['applicationprofile', { name: 'System-L4-Application', type: 'APPLICATION_PROFILE_TYPE_L4' }],
      ['applicationprofile', { name: 'System-HTTP', type: 'APPLICATION_PROFILE_TYPE_HTTP' }],
      ['networkprofile', { name: 'System-TCP-Proxy' }],
      ['networkprofile', { name: 'System-UDP-Fast-Path' }],
    ];
    for (const [type, o] of system) this.put(type, o, admin);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.calls++;
    const method = req.method ?? 'GET';
    this.stats.byMethod[method] = (this.stats.byMethod[method] ?? 0) + 1;
    const url = new URL(req.url ?? '/', 'http://sim');
    const body = await readJson(req);
    if (url.pathname === '/login' && method === 'POST') return this.login(body, res);
    const cookies = parseCookies(String(req.headers.cookie ?? ''));
    const sid = cookies['avi-sessionid'] ?? cookies.sessionid;
    const session = sid ? this.sessions.get(sid) : undefined;
    if (url.pathname === '/logout' && method === 'POST') {
      if (sid) this.sessions.delete(sid);
      return send(res, 200, {});
    }
    if (!url.pathname.startsWith('/api/')) throw new HttpError(404, `no such path ${url.pathname}`);
    if (!session) throw new HttpError(401, 'Authentication credentials were not provided.');
    if (this.faults.refresh > 0) {
      this.faults.refresh--;
      this.sessions.delete(sid!);
      const next = this.newSession();
      res.setHeader('set-cookie', next.cookies);
      throw new HttpError(419, 'Session refreshed; retry with the new session');
    }
    if (!req.headers['x-avi-version']) throw new HttpError(400, 'X-Avi-Version header is required');
    const write = method !== 'GET';
    if (write) {
      if (req.headers['x-csrftoken'] !== session.csrf)
        throw new HttpError(403, 'CSRF Failed: CSRF token missing or incorrect.');
      if (!req.headers.referer)
        throw new HttpError(403, 'CSRF Failed: Referer checking failed - no Referer.');
    }
    if (this.faults.latencyMs > 0) await new Promise((r) => setTimeout(r, this.faults.latencyMs));
    if (write && this.faults.failWrites > 0) {
      this.faults.failWrites--;
      throw new HttpError(503, 'Service Unavailable (injected)');
    }
    if (write && this.faults.failNames.has(String((body as Json | undefined)?.name))) {
      throw new HttpError(503, `Service Unavailable (injected for ${String((body as Json).name)})`);
    }
    const tenantName = String(req.headers['x-avi-tenant'] ?? 'admin');
    const tenant = this.tenantUuid(tenantName);
    if (!tenant) throw new HttpError(404, `Tenant ${tenantName} not found`);
    const [, , type, uuid, ...sub] = url.pathname.replace(/\/+$/, '').split('/');
    if (type === 'pool' && uuid && sub.join('/') === 'runtime/server' && method === 'GET') {
      this.stats.reads++;
      return send(res, 200, await this.poolRuntimeServers(this.get('pool', uuid, tenant)));
    }
    if (sub.length > 0) throw new HttpError(404, `no such path ${url.pathname}`);
    if (!type || (!MODEL_OF[type] && !SYSTEM_ONLY.has(type)))
      throw new HttpError(404, `unknown object type ${type}`);
    if (write) this.stats.writes++;
    else this.stats.reads++;
    if (method === 'GET' && !uuid) return send(res, 200, this.list(type, tenant, url));
    if (method === 'GET') return send(res, 200, this.externalize(this.get(type, uuid!, tenant)));
    if (SYSTEM_ONLY.has(type)) throw new HttpError(405, `${type} objects are read-only here`);
    const logged = (name: unknown) => {
      if (this.writeLog.length >= 100_000) this.writeLog.shift();
      this.writeLog.push({ method, type, name: String(name), at: performance.now() });
    };
    if (method === 'POST' && !uuid) {
      const o = this.create(type, body, tenant);
      logged(o.name);
      return send(res, 201, this.externalize(o));
    }
    if (method === 'PUT' && uuid) {
      const o = this.update(type, uuid, body, tenant);
      logged(o.name);
      return send(res, 200, this.externalize(o));
    }
    if (method === 'DELETE' && uuid) {
      const name = this.store.get(type)?.get(uuid)?.name;
      this.remove(type, uuid, tenant);
      logged(name);
      res.writeHead(204).end();
      return;
    }
    throw new HttpError(405, `${method} not allowed here`);
  }

  /**
   * GET /api/pool/{uuid}/runtime/server: each server's oper_status from the simulator's health
   * monitor (a TCP connect; loopback servers only, others OPER_UNAVAIL), OPER_DISABLED when the
   * server is disabled.
   */
  private async poolRuntimeServers(pool: Json): Promise<Json[]> {
    const servers = ((pool.servers ?? []) as Json[]).map((s) => ({
      address: String((s.ip as Json | undefined)?.addr ?? ''),
      port: Number(s.port ?? pool.default_server_port ?? 80),
      s,
    }));
    const probed = await this.prober.states(servers);
    return servers.map(({ address, port, s }, i) => {
      const p = probed[i]!;
      const state =
        s.enabled === false
          ? 'OPER_DISABLED'
          : p.health === 'up'
            ? 'OPER_UP'
            : p.health === 'down'
              ? 'OPER_DOWN'
              : 'OPER_UNAVAIL';
      return {
        server_ip: { addr: address, type: address.includes(':') ? 'V6' : 'V4' },
        port,
        hostname: s.hostname ?? address,
        oper_status: {
          state,
          reason: [p.reason],
          last_changed_time: { secs: Math.floor(p.at / 1000), usecs: 0 },
        },
      };
    });
  }

  private newSession(): { sid: string; csrf: string; cookies: string[] } {
    const sid = randomBytes(16).toString('hex');
    const csrf = randomBytes(16).toString('hex');
    this.sessions.set(sid, { csrf });
    return { sid, csrf, cookies: [`csrftoken=${csrf}; Path=/`, `avi-sessionid=${sid}; Path=/; HttpOnly`] };
  }

  private login(body: unknown, res: ServerResponse): void {
    const b = (body ?? {}) as Json;
    if (b.username !== (this.opts.username ?? 'admin') || b.password !== (this.opts.password ?? 'admin')) {
      throw new HttpError(401, 'Invalid credentials');
    }
    this.stats.logins++;
    const s = this.newSession();
    res.setHeader('set-cookie', s.cookies);
    send(res, 200, { user: { username: b.username }, version: { Version: this.opts.version ?? '22.1.3' } });
  }

  private visible(o: Json, tenant: string): boolean {
    return o.tenant_ref === `/api/tenant/${tenant}`;
  }

  private get(type: string, uuid: string, tenant: string): Json {
    const o = this.store.get(type)?.get(uuid);
    if (!o || (!this.visible(o, tenant) && !this.visible(o, 'tenant-admin'))) {
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    }
    return o;
  }

  private list(type: string, tenant: string, url: URL): Json {
    const name = url.searchParams.get('name');
    const createdBy = url.searchParams.get('created_by');
    const pageSize = Math.min(Math.max(Number(url.searchParams.get('page_size') ?? 25) || 25, 1), 200);
    const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
    const all = [...(this.store.get(type)?.values() ?? [])]
      .filter(
        (o) =>
          this.visible(o, tenant) ||
          (tenant !== 'tenant-admin' && this.visible(o, 'tenant-admin') && !o.created_by),
      )
      .filter((o) => name === null || o.name === name)
      .filter((o) => createdBy === null || o.created_by === createdBy)
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const results = all.slice((page - 1) * pageSize, page * pageSize).map((o) => this.externalize(o));
    const out: Json = { count: all.length, results };
    if (page * pageSize < all.length) {
      const next = new URL(`${this.url}/api/${type}`);
      url.searchParams.forEach((v, k) => next.searchParams.set(k, v));
      next.searchParams.set('page', String(page + 1));
      next.searchParams.set('page_size', String(pageSize));
      out.next = next.toString();
    }
    return out;
  }

  /** Refs and urls as the controller shows them: absolute. */
  private externalize(o: Json): Json {
    const abs = (v: unknown): unknown =>
      typeof v === 'string' && v.startsWith('/api/') ? `${this.url}${v}` : Array.isArray(v) ? v.map(abs) : v;
    const walk = (x: unknown): unknown => {
      if (Array.isArray(x)) return x.map(walk);
      if (!x || typeof x !== 'object') return x;
      return Object.fromEntries(
        Object.entries(x as Json).map(([k, v]) => [
          k,
          k === 'url' || k.endsWith('_ref') || k.endsWith('_refs') ? abs(v) : walk(v),
        ]),
      );
    };
    return walk(o) as Json;
  }

  /** Resolves one ref (by name or url) to `/api/<type>/<uuid>`, or fails with 400. */
  private resolve(field: string, value: unknown, tenant: string): string {
    if (typeof value !== 'string') throw new HttpError(400, `${field}: a reference must be a string`);
    const m = /^(?:https?:\/\/[^/]+)?\/api\/([a-z]+)\/?(?:\?name=([^&#]+)|([^/?#]+))?(?:#.*)?$/.exec(value);
    if (!m || (!m[2] && !m[3])) throw new HttpError(400, `${field}: cannot parse reference ${value}`);
    const [, type, name, uuid] = m;
    const want = REF_TYPES[field];
    if (want && want !== type) throw new HttpError(400, `${field}: must refer to a ${want}, not ${value}`);
    const bucket = this.store.get(type!) ?? new Map<string, Json>();
    let found: Json | undefined;
    if (uuid) found = bucket.get(uuid);
    else {
      const n = decodeURIComponent(name!);
      const candidates = [...bucket.values()].filter((o) => o.name === n);
      found =
        candidates.find((o) => this.visible(o, tenant)) ??
        candidates.find((o) => this.visible(o, 'tenant-admin'));
    }
    if (!found || (!this.visible(found, tenant) && !this.visible(found, 'tenant-admin'))) {
      throw new HttpError(400, `${field}: Cannot find object: ${value}`);
    }
    return `/api/${type}/${String(found.uuid)}`;
  }

  private resolveRefs(x: unknown, tenant: string, field = ''): unknown {
    if (field.endsWith('_refs')) {
      if (!Array.isArray(x)) throw new HttpError(400, `${field}: expected an array of references`);
      return x.map((v) => this.resolve(field, v, tenant));
    }
    if (field.endsWith('_ref')) return this.resolve(field, x, tenant);
    if (Array.isArray(x)) return x.map((v) => this.resolveRefs(v, tenant, ''));
    if (!x || typeof x !== 'object') return x;
    return Object.fromEntries(Object.entries(x as Json).map(([k, v]) => [k, this.resolveRefs(v, tenant, k)]));
  }

  private validate(type: string, body: unknown, tenant: string): Json {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new HttpError(400, 'the body must be a JSON object');
    const model = MODEL_OF[type]!;
    const clean = Object.fromEntries(Object.entries(body as Json).filter(([k]) => !SERVER_FIELDS.has(k)));
    if (knownModel(model)) {
      const problems = validateAviObject(model, clean);
      if (problems.length > 0) throw new HttpError(400, problems.join('; '));
    }
    return this.resolveRefs(clean, tenant) as Json;
  }

  private nameTaken(type: string, name: unknown, tenant: string, except?: string): boolean {
    for (const o of this.store.get(type)?.values() ?? []) {
      if (o.name === name && this.visible(o, tenant) && o.uuid !== except) return true;
    }
    return false;
  }

  private create(type: string, body: unknown, tenant: string): Json {
    const o = this.validate(type, body, tenant);
    if (this.nameTaken(type, o.name, tenant)) {
      throw new HttpError(409, `${MODEL_OF[type]} object with this Name and Tenant already exists`);
    }
    return this.put(type, o, tenant);
  }

  private update(type: string, uuid: string, body: unknown, tenant: string): Json {
    const current = this.store.get(type)?.get(uuid);
    if (!current || !this.visible(current, tenant))
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    const stale = (body as Json | null)?._last_modified;
    if (stale !== undefined && stale !== current._last_modified) {
      throw new HttpError(412, 'Concurrent Update Error: the object changed since it was read');
    }
    const o = this.validate(type, body, tenant);
    if (this.nameTaken(type, o.name, tenant, uuid)) {
      throw new HttpError(409, `${MODEL_OF[type]} object with this Name and Tenant already exists`);
    }
    return this.put(type, { ...o, uuid }, tenant);
  }

  private remove(type: string, uuid: string, tenant: string): void {
    const current = this.store.get(type)?.get(uuid);
    if (!current || !this.visible(current, tenant))
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    const target = `/api/${type}/${uuid}`;
    const referrers: string[] = [];
    const refersTo = (x: unknown): boolean =>
      x === target ||
      (Array.isArray(x) ? x.some(refersTo) : !!x && typeof x === 'object' && Object.values(x).some(refersTo));
    for (const [t, bucket] of this.store) {
      for (const o of bucket.values())
        if (o !== current && refersTo(o)) referrers.push(`${MODEL_OF[t] ?? t} ${String(o.name)}`);
    }
    if (referrers.length > 0) {
      throw new HttpError(
        409,
        `Cannot delete, object is referred by: [${referrers.map((r) => `'${r}'`).join(', ')}]`,
      );
    }
    this.store.get(type)!.delete(uuid);
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'Invalid JSON in the request body');
  }
}

function parseCookies(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

const send = (res: ServerResponse, status: number, body: unknown): void => sendJson(res, status, body);
