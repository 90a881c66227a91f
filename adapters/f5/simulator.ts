/**
 * A BIG-IP simulator for the part of iControl REST and AS3 that npl-lb uses, strict where the real
 * one is: token login (`X-F5-Auth-Token`, 1200 s lifetime by default, 401 on a bad or expired
 * token), `/mgmt/shared/appsvcs/info`, declarations validated against the AS3 schema (422 with
 * AS3-style `errors[]`) and their pointers checked, selective tenant updates with "no change"
 * results, tenant removal, one declaration at a time (503 while busy), 202 and task polling past a
 * threshold, and a read-only iControl view of the pools and members the declarations built.
 * Fault knobs (`faults`) let tests make it busy, reject objects or expire tokens.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimServer, sendJson } from '../sim-server.ts';
import { MemberProber } from '../sim-health.ts';
import { icontrolPools } from './icontrol-view.ts';
import { isDeepStrictEqual } from 'node:util';
import { AS3_SCHEMA_VERSION, validateAs3 } from './as3-validate.ts';

type Json = Record<string, unknown>;

export interface BigIpSimOptions {
  /** username -> password (default admin/admin). */
  users?: Record<string, string>;
  tokenLifetimeSec?: number;
  /** Time each declaration takes to deploy. */
  latencyMs?: number;
  /** Declarations that take longer than this answer 202 with a task to poll (AS3: 45 s). */
  asyncThresholdMs?: number;
  /** The AS3 version installed; null: AS3 is not installed (info answers 404). */
  as3Version?: string | null;
  tls?: { cert: string; key: string };
  now?: () => number;
}

export interface BigIpFaults {
  /** Answer this many declarations with 503 busy. */
  busy: number;
  /** Declarations with an object of one of these names are rejected (422) naming its path. */
  rejectObjects: Set<string>;
}

interface Task {
  done: boolean;
  results: Json[];
}

export class BigIpSimulator {
  readonly faults: BigIpFaults = { busy: 0, rejectObjects: new Set() };
  /** The tenants as deployed. */
  readonly tenants = new Map<string, Json>();
  private readonly prober = new MemberProber({ intervalMs: 500 });
  readonly stats = { declarations: 0, deployed: 0, logins: 0, rejected: 0, busy: 0 };
  private readonly tokens = new Map<string, { user: string; expiresAt: number; lifetimeSec: number }>();
  private readonly tasks = new Map<string, Task>();
  private working = false;
  private readonly http: SimServer;
  private readonly now: () => number;

  constructor(private readonly opts: BigIpSimOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.http = new SimServer(opts.tls);
  }

  get url(): string {
    return this.http.url;
  }

  start(port = 0, host = '127.0.0.1'): Promise<string> {
    return this.http.listen(
      (req, res) => this.handle(req, res),
      (res, err) => send(res, 500, { code: 500, message: String(err) }),
      port,
      host,
    );
  }

  close(): Promise<void> {
    return this.http.close();
  }

  /** Ends every token now, as a BIG-IP restart or an admin would. */
  expireTokens(): void {
    this.tokens.clear();
  }

  private authorized(req: IncomingMessage): boolean {
    const t = this.tokens.get(String(req.headers['x-f5-auth-token'] ?? ''));
    return t !== undefined && this.now() < t.expiresAt;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    const body = await readJson(req);
    if (body === INVALID) return send(res, 400, { code: 400, message: 'Invalid JSON in the request body' });

    if (method === 'POST' && path === '/mgmt/shared/authn/login') return this.login(body as Json, res);
    if (!this.authorized(req)) {
      return send(res, 401, {
        code: 401,
        message: 'Authorization failed: no user authentication header or token detected.',
      });
    }
    const tokenPath = /^\/mgmt\/shared\/authz\/tokens\/([^/]+)$/.exec(path);
    if (tokenPath && method === 'PATCH')
      return this.renew(decodeURIComponent(tokenPath[1]!), body as Json, res);
    if (path === '/mgmt/shared/appsvcs/info' && method === 'GET') {
      if (this.opts.as3Version === null)
        return send(res, 404, { code: 404, message: 'Public URI path not registered' });
      const version = this.opts.as3Version ?? AS3_SCHEMA_VERSION;
      return send(res, 200, { version, release: '5', schemaCurrent: version, schemaMinimum: '3.0.0' });
    }
    if (this.opts.as3Version === null && path.startsWith('/mgmt/shared/appsvcs')) {
      return send(res, 404, { code: 404, message: 'Public URI path not registered' });
    }
    const declare = /^\/mgmt\/shared\/appsvcs\/declare(?:\/([^/]+))?$/.exec(path);
    if (declare && method === 'GET') return this.getDeclaration(declare[1], res);
    if (declare && method === 'POST' && !declare[1]) return this.post(body, url, res);
    if (declare && method === 'DELETE' && declare[1]) {
      return this.post(
        {
          class: 'ADC',
          schemaVersion: AS3_SCHEMA_VERSION,
          ...Object.fromEntries(declare[1].split(',').map((t) => [t, { class: 'Tenant' }])),
        },
        url,
        res,
      );
    }
    const task = /^\/mgmt\/shared\/appsvcs\/task\/([^/]+)$/.exec(path);
    if (task && method === 'GET') {
      const t = this.tasks.get(task[1]!);
      if (!t) return send(res, 404, { code: 404, message: `task ${task[1]} not found` });
      return send(res, 200, {
        id: task[1],
        results: t.done
          ? t.results
          : [{ message: 'in progress', tenant: '', host: 'localhost', runTime: 0, code: 0 }],
        declaration: t.done ? this.document() : {},
      });
    }
    if (path === '/mgmt/tm/ltm/pool' && method === 'GET')
      return send(res, 200, {
        kind: 'tm:ltm:pool:poolcollectionstate',
        items: icontrolPools(this.tenants).map((p) => p.item),
      });
    const members = /^\/mgmt\/tm\/ltm\/pool\/([^/]+)\/members$/.exec(path);
    if (members && method === 'GET') {
      const fullPath = decodeURIComponent(members[1]!).replaceAll('~', '/');
      const found = icontrolPools(this.tenants).find((p) => p.item.fullPath === fullPath);
      if (!found)
        return send(res, 404, {
          code: 404,
          message: `01020036:3: The requested Pool (${fullPath}) was not found.`,
        });
      // The monitor: a TCP connect to each member (loopback only; see sim-health.ts).
      const targets = found.members.map((m) => {
        const [, address = '', port = '0'] = /^(.*):(\d+)$/.exec(String(m.name)) ?? [];
        return { address, port: Number(port) };
      });
      const probed = await this.prober.states(targets);
      const results = new Map(targets.map((t, i) => [`${t.address}:${t.port}`, probed[i]!.health]));
      const pool = icontrolPools(this.tenants, (a, p) => results.get(`${a}:${p}`)).find(
        (p) => p.item.fullPath === fullPath,
      )!;
      return send(res, 200, { kind: 'tm:ltm:pool:members:memberscollectionstate', items: pool.members });
    }
    send(res, 404, { code: 404, message: `Public URI path not registered: ${path}` });
  }

  private login(body: Json, res: ServerResponse): void {
    const users = this.opts.users ?? { admin: 'admin' };
    const user = String(body.username ?? '');
    if (users[user] === undefined || users[user] !== body.password) {
      return send(res, 401, { code: 401, message: 'Authentication failed.' });
    }
    this.stats.logins++;
    const token = randomBytes(16).toString('hex').toUpperCase();
    const lifetimeSec = this.opts.tokenLifetimeSec ?? 1200;
    this.tokens.set(token, { user, expiresAt: this.now() + lifetimeSec * 1000, lifetimeSec });
    send(res, 200, {
      username: user,
      loginProviderName: body.loginProviderName ?? 'tmos',
      token: {
        token,
        name: token,
        userName: user,
        timeout: lifetimeSec,
        startTime: new Date(this.now()).toISOString(),
      },
    });
  }

  private renew(token: string, body: Json, res: ServerResponse): void {
    const t = this.tokens.get(token);
    const timeout = Number(body.timeout);
    if (!t) return send(res, 404, { code: 404, message: `token ${token} not found` });
    if (!Number.isInteger(timeout) || timeout <= 0 || timeout > 36000) {
      return send(res, 400, { code: 400, message: 'timeout must be an integer from 1 to 36000' });
    }
    t.expiresAt = this.now() + timeout * 1000;
    t.lifetimeSec = timeout;
    send(res, 200, { token, timeout, userName: t.user });
  }

  private document(): Json {
    return {
      class: 'ADC',
      schemaVersion: AS3_SCHEMA_VERSION,
      id: 'npl-lb-sim',
      updateMode: 'selective',
      ...Object.fromEntries(this.tenants),
    };
  }

  private getDeclaration(which: string | undefined, res: ServerResponse): void {
    if (this.tenants.size === 0) return send(res, 204, undefined);
    if (!which) return send(res, 200, this.document());
    const names = which.split(',').filter((n) => this.tenants.has(n));
    if (names.length === 0)
      return send(res, 404, { code: 404, message: 'specified Tenant(s) not found in declaration' });
    send(res, 200, {
      class: 'ADC',
      schemaVersion: AS3_SCHEMA_VERSION,
      id: 'npl-lb-sim',
      ...Object.fromEntries(names.map((n) => [n, this.tenants.get(n)])),
    });
  }

  private async post(body: unknown, url: URL, res: ServerResponse): Promise<void> {
    this.stats.declarations++;
    if (this.working || this.faults.busy > 0) {
      if (!this.working) this.faults.busy--;
      this.stats.busy++;
      return send(res, 503, {
        code: 503,
        message: 'Configuration operation in progress on device, please try again in 2 minutes',
      });
    }
    const problems = validateAs3(body).map(
      (p) => `${p.path.replace(/^\/declaration/, '') || '/'}: ${p.message}`,
    );
    const adc = ((body as Json)?.class === 'AS3' ? (body as Json).declaration : body) as Json;
    if (problems.length === 0) problems.push(...this.semanticProblems(adc));
    if (problems.length > 0) {
      this.stats.rejected++;
      return send(res, 422, {
        code: 422,
        message: 'declaration is invalid',
        errors: problems,
        declarationFullId: '',
      });
    }
    const action = (body as Json).class === 'AS3' ? String((body as Json).action ?? 'deploy') : 'deploy';
    const latency = this.opts.latencyMs ?? 0;
    const asyncReply =
      url.searchParams.get('async') === 'true' || latency > (this.opts.asyncThresholdMs ?? 45_000);
    this.working = true;
    const run = async (): Promise<Json[]> => {
      try {
        if (latency > 0) await new Promise((r) => setTimeout(r, latency));
        return this.deploy(adc, action === 'dry-run');
      } finally {
        this.working = false;
      }
    };
    if (!asyncReply) {
      const results = await run();
      return send(res, 200, { results, declaration: this.document() });
    }
    const id = randomBytes(8).toString('hex');
    const task: Task = { done: false, results: [] };
    this.tasks.set(id, task);
    void run().then((results) => {
      task.results = results;
      task.done = true;
    });
    send(res, 202, {
      id,
      results: [
        { message: 'Declaration successfully submitted', tenant: '', host: 'localhost', runTime: 0, code: 0 },
      ],
      declaration: {},
    });
  }

  /** What AS3 finds after the schema: pointers to objects that are not declared, injected faults. */
  private semanticProblems(adc: Json): string[] {
    const out: string[] = [];
    for (const [tName, t] of Object.entries(adc)) {
      if ((t as Json | null)?.class !== 'Tenant') continue;
      for (const [aName, a] of Object.entries(t as Json)) {
        const app = a as Json | null;
        if (app?.class !== 'Application') continue;
        const has = (name: unknown, cls: string) =>
          typeof name === 'string' && (app[name] as Json | undefined)?.class === cls;
        const ref = (p: unknown) => (typeof p === 'string' ? p : (p as { use?: unknown } | undefined)?.use);
        for (const [name, raw] of Object.entries(app)) {
          const o = raw as Json | null;
          if (!o || typeof o !== 'object') continue;
          const at = `/${tName}/${aName}/${name}`;
          if (this.faults.rejectObjects.has(name)) out.push(`${at}: injected fault`);
          if (String(o.class).startsWith('Service_') && o.pool !== undefined && !has(ref(o.pool), 'Pool')) {
            out.push(`${at}/pool: contains path to non-existing object "${String(ref(o.pool))}"`);
          }
          if (o.policyEndpoint !== undefined && !has(ref(o.policyEndpoint), 'Endpoint_Policy')) {
            out.push(
              `${at}/policyEndpoint: contains path to non-existing object "${String(ref(o.policyEndpoint))}"`,
            );
          }
          if (o.class === 'Endpoint_Policy') {
            ((o.rules ?? []) as Json[]).forEach((rule, i) =>
              ((rule.actions ?? []) as Json[]).forEach((act, j) => {
                const pool = ref((act.select as Json | undefined)?.pool);
                if (pool !== undefined && !has(pool, 'Pool')) {
                  out.push(
                    `${at}/rules/${i}/actions/${j}/select/pool: contains path to non-existing object "${String(pool)}"`,
                  );
                }
              }),
            );
          }
        }
      }
    }
    return out;
  }

  /** Applies each tenant of the declaration (selective): stored, removed, or "no change". */
  private deploy(adc: Json, dryRun: boolean): Json[] {
    const results: Json[] = [];
    const named = new Set<string>();
    for (const [tName, t] of Object.entries(adc)) {
      if ((t as Json | null)?.class !== 'Tenant') continue;
      named.add(tName);
      const hasApps = Object.values(t as Json).some((a) => (a as Json | null)?.class === 'Application');
      const before = this.tenants.get(tName);
      let message = 'success';
      if (!hasApps) {
        if (!before) message = 'no change';
        else if (!dryRun) this.tenants.delete(tName);
      } else if (before && isDeepStrictEqual(before, t)) message = 'no change';
      else if (!dryRun) this.tenants.set(tName, structuredClone(t as Json));
      if (message === 'success' && !dryRun) this.stats.deployed++;
      results.push({
        code: 200,
        message,
        lineCount: JSON.stringify(t).length,
        host: 'localhost',
        tenant: tName,
        runTime: this.opts.latencyMs ?? 0,
      });
    }
    if (adc.updateMode === 'complete' && !dryRun) {
      for (const tName of [...this.tenants.keys()]) if (!named.has(tName)) this.tenants.delete(tName);
    }
    return results;
  }
}

const INVALID = Symbol('invalid');
const MAX_BODY = 64 * 1024 * 1024;

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return INVALID;
    chunks.push(c as Buffer);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return INVALID;
  }
}

const send = (res: ServerResponse, status: number, body: unknown): void =>
  sendJson(res, status, body, 'application/json; charset=UTF-8');
