/**
 * An Avi Controller simulator for the API npl-lb uses, strict where the controller is: login with
 * session and CSRF cookies (401 without a session, 403 for a write without the CSRF token or
 * Referer; without X-Avi-Version, the oldest object model), tenants, an object store with uuid, url
 * and `_last_modified`, defaults filled in on create and returned on read (defaults.ts),
 * references as full urls (`#name` appended with `include_name=true`), names unique per type and tenant (409), references by name or url resolved
 * (400 for an unknown one), unknown types, models and fields and missing required fields rejected per the bundled Avi
 * field model, by the simulator's own check (model-check.ts; 400), paging with `next`, `name` and `created_by` filters, System-* objects pre-seeded, 412 for a
 * stale `_last_modified`, and deletes of referenced objects refused naming the referrer. Fault
 * knobs (`faults`) add latency, failures and session expiry.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { MemberProber } from '../../src/runtime/member-prober.ts';
import { SimServer, sendJson } from '../shared/server.ts';
import { poolServerTargets, runtimeServersAnswer } from './runtime-servers.ts';
import { SIM_MODELS as MODEL_OF } from './model-check.ts';
import { OLDEST_VERSION, olderThan } from './defaults.ts';
import { AviObjectStore, HttpError, SYSTEM_ONLY } from './store.ts';

type Json = Record<string, unknown>;

export interface AviSimOptions {
  username?: string;
  password?: string;
  tls?: { cert: string; key: string };
  /** The controller version reported at login. */
  version?: string;
  /** Networks its IPAM allocates VIPs from (default: VIP-Network, 198.51.100.0/24). */
  networks?: { name: string; cidr: string; cidr6?: string }[];
  /** Service Engine groups beyond Default-Group. */
  serviceEngineGroups?: string[];
}

export interface AviFaults {
  /**
   * The time every authenticated /api call takes in all: the simulator does its work at once and
   * answers when this much has passed since the request arrived (a real controller's time per
   * call includes its own work; only what goes beyond it adds).
   */
  latencyMs: number;
  /** The next this-many writes answer 503. */
  failWrites: number;
  /** The next this-many calls answer 419 (session refreshed) with new cookies. */
  refresh: number;
  /** Writes of objects with these names answer 503. */
  failNames: Set<string>;
  /** The status of a refused delete of an object still referred to (controllers answer 400 or 403). */
  referencedDeleteStatus: 400 | 403;
}

export class AviSimulator {
  readonly faults: AviFaults = {
    latencyMs: 0,
    failWrites: 0,
    refresh: 0,
    failNames: new Set(),
    referencedDeleteStatus: 400,
  };
  /** The simulated health monitor (TCP connects to loopback servers). */
  private readonly prober = new MemberProber({ intervalMs: 500 });
  readonly stats = {
    logins: 0,
    calls: 0,
    /** Calls without X-Avi-Version (served in the oldest object model). */
    unversioned: 0,
    reads: 0,
    writes: 0,
    /** The most requests handled at once (how much the client overlaps). */
    maxInflight: 0,
    byMethod: {} as Record<string, number>,
  };
  private inflight = 0;
  /** The last 100,000 successful writes, for tests and benchmarks. */
  readonly writeLog: { method: string; type: string; name: string; at: number }[] = [];
  private readonly objectStore = new AviObjectStore(() => this.url);
  /** type -> uuid -> object (as stored, refs as urls). */
  readonly store = this.objectStore.store;
  private readonly sessions = new Map<string, { csrf: string }>();
  private readonly http: SimServer;

  constructor(private readonly opts: AviSimOptions = {}) {
    this.http = new SimServer(opts.tls);
    for (const n of opts.networks ?? [{ name: 'VIP-Network', cidr: '198.51.100.0/24' }])
      this.objectStore.addNetwork(n.name, n.cidr, n.cidr6);
    for (const g of opts.serviceEngineGroups ?? []) this.objectStore.addServiceEngineGroup(g);
  }

  get url(): string {
    return this.http.url;
  }

  start(port = 0, host = '127.0.0.1'): Promise<string> {
    return this.http.listen(
      async (req, res) => {
        this.inflight++;
        this.stats.maxInflight = Math.max(this.stats.maxInflight, this.inflight);
        // In flight until the answer has gone (it may wait for the call's latency).
        res.once('close', () => this.inflight--);
        await this.handle(req, res, performance.now());
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

  /** Objects of a type in a tenant, by name. */
  objects(type: string, tenant = 'admin'): Map<string, Json> {
    return this.objectStore.objects(type, tenant);
  }

  /** Ends every session, as a controller restart or idle timeout would. */
  expireSessions(): void {
    this.sessions.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse, arrived: number): Promise<void> {
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
    // Without X-Avi-Version a real controller answers in its oldest object model.
    const version = String(req.headers['x-avi-version'] || OLDEST_VERSION);
    if (!req.headers['x-avi-version']) this.stats.unversioned++;
    // An object model newer than the controller's own is one it cannot answer in: refused.
    const own = this.opts.version ?? '22.1.3';
    if (olderThan(own, version))
      throw new HttpError(400, `X-Avi-Version ${version} is newer than this controller's version ${own}`);
    const write = method !== 'GET';
    if (write) {
      if (req.headers['x-csrftoken'] !== session.csrf)
        throw new HttpError(403, 'CSRF Failed: CSRF token missing or incorrect.');
      if (!req.headers.referer)
        throw new HttpError(403, 'CSRF Failed: Referer checking failed - no Referer.');
    }
    const due = arrived + this.faults.latencyMs;
    if (this.faults.latencyMs > 0) answerNoEarlierThan(res, due);
    if (write && this.faults.failWrites > 0) {
      this.faults.failWrites--;
      throw new HttpError(503, 'Service Unavailable (injected)');
    }
    if (write && this.faults.failNames.has(String((body as Json | undefined)?.name))) {
      throw new HttpError(503, `Service Unavailable (injected for ${String((body as Json).name)})`);
    }
    const tenantName = String(req.headers['x-avi-tenant'] ?? 'admin');
    const tenant = this.objectStore.tenantUuid(tenantName);
    if (!tenant) throw new HttpError(404, `Tenant ${tenantName} not found`);
    const [, , type, uuid, ...sub] = url.pathname.replace(/\/+$/, '').split('/');
    if (type === 'pool' && uuid && sub.join('/') === 'runtime/server' && method === 'GET') {
      this.stats.reads++;
      // The servers' oper_status from the simulator's monitor (TCP connects, loopback only).
      const targets = poolServerTargets(this.objectStore.get('pool', uuid, tenant));
      return send(res, 200, runtimeServersAnswer(targets, await this.prober.states(targets)));
    }
    if (sub.length > 0) throw new HttpError(404, `no such path ${url.pathname}`);
    if (!type || (!MODEL_OF[type] && !SYSTEM_ONLY.has(type)))
      throw new HttpError(404, `unknown object type ${type}`);
    if (write) this.stats.writes++;
    else this.stats.reads++;
    const named = url.searchParams.get('include_name') === 'true';
    if (method === 'GET' && !uuid) return send(res, 200, this.objectStore.list(type, tenant, url, named));
    if (method === 'GET')
      return send(res, 200, this.objectStore.externalize(this.objectStore.get(type, uuid!, tenant), named));
    if (SYSTEM_ONLY.has(type)) throw new HttpError(405, `${type} objects are read-only here`);
    const logged = (name: unknown) => {
      if (this.writeLog.length >= 100_000) this.writeLog.shift();
      // Logged as answered: at the end of the call's latency.
      this.writeLog.push({ method, type, name: String(name), at: Math.max(due, performance.now()) });
    };
    if (method === 'POST' && !uuid) {
      const o = this.objectStore.create(type, body, tenant, version);
      logged(o.name);
      return send(res, 201, this.objectStore.externalize(o));
    }
    if (method === 'PUT' && uuid) {
      const o = this.objectStore.update(type, uuid, body, tenant, version);
      logged(o.name);
      return send(res, 200, this.objectStore.externalize(o));
    }
    if (method === 'DELETE' && uuid) {
      const name = this.store.get(type)?.get(uuid)?.name;
      this.objectStore.remove(type, uuid, tenant, this.faults.referencedDeleteStatus);
      logged(name);
      res.writeHead(204).end();
      return;
    }
    throw new HttpError(405, `${method} not allowed here`);
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
}

/** Holds the answer (whatever ends it: a result or an error) until `due` (performance.now()). */
function answerNoEarlierThan(res: ServerResponse, due: number): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    const wait = due - performance.now();
    if (wait <= 0) return end(...args);
    setTimeout(() => end(...args), wait);
    return res;
  }) as ServerResponse['end'];
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
