/**
 * A BIG-IP simulator for the part of iControl REST and AS3 that npl-lb uses, strict where the real
 * one is: token login (tokens.ts), `/mgmt/shared/appsvcs/info`, declarations validated against
 * the AS3 schema by a validator of its own (schema-check.ts; 422 with AS3-style `errors[]`) and
 * their pointers checked (semantics.ts),
 * AS3's handling of them (tenants.ts: selective updates, "no change", `updateMode: complete`,
 * `controls.dryRun`, `optimisticLockKey` with `showHash=true`, the per-application endpoints of
 * AS3 3.47), one declaration at a time (503 while busy, reads still answered), device time that
 * grows with the size of what a declaration changes, 202 and task polling past 45 s, and a
 * read-only iControl view of the pools and members the declarations built. Fault knobs (`faults`)
 * let tests make it busy, reject objects or expire tokens.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SimServer, sendJson } from '../shared/server.ts';
import { MemberProber } from '../../src/runtime/member-prober.ts';
import { icontrolPools } from './icontrol.ts';
import { schemaProblems, SIM_AS3_VERSION as AS3_SCHEMA_VERSION } from './schema-check.ts';
import { semanticProblems } from './semantics.ts';
import { As3Tenants, olderThan } from './tenants.ts';
import { SimTokens } from './tokens.ts';

type Json = Record<string, unknown>;

export interface BigIpSimOptions {
  /** username -> password (default admin/admin). */
  users?: Record<string, string>;
  tokenLifetimeSec?: number;
  /** Time each declaration takes to deploy. */
  latencyMs?: number;
  /**
   * Time added per KiB of what a declaration changes (the tenants declared; for a per-application
   * declaration, its applications): a real BIG-IP takes longer the bigger the tenant.
   */
  latencyPerKiBMs?: number;
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
  /**
   * Reset this many reads (GET) that come on a kept-alive connection while a declaration runs,
   * as a busy BIG-IP's front end drops a reused connection: the socket closes, no answer.
   */
  resetReusedReads?: number;
}

interface Task {
  done: boolean;
  results: Json[];
}

export class BigIpSimulator {
  readonly faults: BigIpFaults = { busy: 0, rejectObjects: new Set() };
  /** AS3's state: the tenants as deployed. */
  private readonly as3 = new As3Tenants();
  private readonly prober = new MemberProber({ intervalMs: 500 });
  readonly stats = {
    declarations: 0,
    /** Of them, per-application POSTs and DELETEs (AS3 3.47 and later). */
    appDeclarations: 0,
    /** Applications posted per application, over all per-application declarations. */
    appsPosted: 0,
    /** Bytes of every declaration body posted. */
    bytesPosted: 0,
    deployed: 0,
    logins: 0,
    rejected: 0,
    busy: 0,
    /** Reused connections reset (faults.resetReusedReads). */
    resets: 0,
    /** Whole declarations posted to `/declare/<tenants>` (only those tenants deployed). */
    scopedDeclarations: 0,
  };
  private readonly tokens: SimTokens;
  private readonly tasks = new Map<string, Task>();
  private working = false;
  private readonly http: SimServer;
  private readonly now: () => number;

  constructor(private readonly opts: BigIpSimOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.tokens = new SimTokens(opts, this.now, () => this.stats.logins++);
    this.http = new SimServer(opts.tls);
  }

  get url(): string {
    return this.http.url;
  }

  /** The tenants as deployed. */
  get tenants(): Map<string, Json> {
    return this.as3.tenants;
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
    return this.tokens.valid(String(req.headers['x-f5-auth-token'] ?? ''));
  }

  /** Requests served per connection (a connection that served one is a reused one). */
  private readonly served = new WeakMap<object, number>();

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const before = this.served.get(req.socket) ?? 0;
    this.served.set(req.socket, before + 1);
    if (req.method === 'GET' && before > 0 && this.working && (this.faults.resetReusedReads ?? 0) > 0) {
      this.faults.resetReusedReads!--;
      this.stats.resets++;
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://sim');
    const path = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    const body = await readJson(req);
    if (body === INVALID) return send(res, 400, { code: 400, message: 'Invalid JSON in the request body' });

    if (method === 'POST' && path === '/mgmt/shared/authn/login') return this.tokens.login(body as Json, res);
    if (!this.authorized(req)) {
      return send(res, 401, {
        code: 401,
        message: 'Authorization failed: no user authentication header or token detected.',
      });
    }
    const tokenPath = /^\/mgmt\/shared\/authz\/tokens\/([^/]+)$/.exec(path);
    if (tokenPath && method === 'PATCH')
      return this.tokens.renew(decodeURIComponent(tokenPath[1]!), body as Json, res);
    if (path === '/mgmt/shared/appsvcs/info' && method === 'GET') {
      if (this.opts.as3Version === null)
        return send(res, 404, { code: 404, message: 'Public URI path not registered' });
      const version = this.opts.as3Version ?? AS3_SCHEMA_VERSION;
      return send(res, 200, { version, release: '5', schemaCurrent: version, schemaMinimum: '3.0.0' });
    }
    if (this.opts.as3Version === null && path.startsWith('/mgmt/shared/appsvcs')) {
      return send(res, 404, { code: 404, message: 'Public URI path not registered' });
    }
    const perApp = /^\/mgmt\/shared\/appsvcs\/declare\/([^/,]+)\/applications(?:\/([^/]+))?$/.exec(path);
    if (perApp) return this.application(method, perApp[1]!, perApp[2], body, url, res);
    const declare = /^\/mgmt\/shared\/appsvcs\/declare(?:\/([^/]+))?$/.exec(path);
    if (declare && method === 'GET')
      return this.getDeclaration(declare[1], url.searchParams.get('showHash') === 'true', res);
    if (declare && method === 'POST') return this.post(body, url, res, declare[1]?.split(','));
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
    // Every task AS3 remembers (`items`), or one by its id.
    if (path === '/mgmt/shared/appsvcs/task' && method === 'GET')
      return send(res, 200, { items: [...this.tasks.keys()].map((id) => this.taskView(id)) });
    const task = /^\/mgmt\/shared\/appsvcs\/task\/([^/]+)$/.exec(path);
    if (task && method === 'GET') {
      if (!this.tasks.has(task[1]!))
        return send(res, 404, { code: 404, message: `task ${task[1]} not found` });
      return send(res, 200, this.taskView(task[1]!));
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
      // The monitor: a TCP connect to each member (loopback only; see src/runtime/member-prober.ts).
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

  /** The declaration as deployed, every tenant (`showHash`: with the per-object hashes). */
  document(showHash = false): Json {
    return {
      class: 'ADC',
      schemaVersion: AS3_SCHEMA_VERSION,
      id: 'npl-lb-sim',
      updateMode: 'selective',
      ...Object.fromEntries([...this.tenants.keys()].map((n) => [n, this.as3.show(n, showHash)])),
    };
  }

  private getDeclaration(which: string | undefined, showHash: boolean, res: ServerResponse): void {
    if (this.tenants.size === 0) return send(res, 204, undefined);
    if (!which) return send(res, 200, this.document(showHash));
    const names = which.split(',').filter((n) => this.tenants.has(n));
    if (names.length === 0)
      return send(res, 404, { code: 404, message: 'specified Tenant(s) not found in declaration' });
    send(res, 200, {
      class: 'ADC',
      schemaVersion: AS3_SCHEMA_VERSION,
      id: 'npl-lb-sim',
      ...Object.fromEntries(names.map((n) => [n, this.as3.show(n, showHash)])),
    });
  }

  /** The device time of a declaration changing this much. */
  private latencyFor(changed: unknown): number {
    const perKiB = this.opts.latencyPerKiBMs ?? 0;
    return (this.opts.latencyMs ?? 0) + (perKiB * As3Tenants.size(changed)) / 1024;
  }

  /** 503 while a declaration runs (one at a time); reads are answered meanwhile. */
  private refuseBusy(res: ServerResponse): boolean {
    if (!this.working && this.faults.busy <= 0) return false;
    if (!this.working) this.faults.busy--;
    this.stats.busy++;
    send(res, 503, {
      code: 503,
      message: 'Configuration operation in progress on device, please try again in 2 minutes',
    });
    return true;
  }

  /**
   * Runs a deployment of this device time: answered when done, or past the asynchronous
   * threshold (AS3: 45 s; or `async=true`) at once with 202 and a task to poll.
   */
  private async run(
    latency: number,
    url: URL,
    res: ServerResponse,
    deploy: () => { status: number; results: Json[] },
  ): Promise<void> {
    const asyncReply =
      url.searchParams.get('async') === 'true' || latency > (this.opts.asyncThresholdMs ?? 45_000);
    this.working = true;
    const work = async () => {
      try {
        if (latency > 0) await new Promise((r) => setTimeout(r, latency));
        const out = deploy();
        this.stats.deployed = this.as3.deployed;
        return out;
      } finally {
        this.working = false;
      }
    };
    if (!asyncReply) {
      const out = await work();
      return send(res, out.status, { results: out.results, declaration: this.document() });
    }
    const id = randomBytes(8).toString('hex');
    const task: Task = { done: false, results: [] };
    this.tasks.set(id, task);
    void work().then((out) => {
      task.results = out.results;
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

  private taskView(id: string): Json {
    const t = this.tasks.get(id)!;
    return {
      id,
      results: t.done
        ? t.results
        : [{ message: 'in progress', tenant: '', host: 'localhost', runTime: 0, code: 0 }],
      declaration: t.done ? this.document() : {},
    };
  }

  /** The per-application endpoints of AS3 3.47 and later. */
  private async application(
    method: string,
    tenant: string,
    app: string | undefined,
    body: unknown,
    url: URL,
    res: ServerResponse,
  ): Promise<void> {
    const version = this.opts.as3Version ?? AS3_SCHEMA_VERSION;
    if (olderThan(version, '3.47.0'))
      return send(res, 404, { code: 404, message: 'Public URI path not registered' });
    if (method === 'GET') {
      const apps = this.as3.apps(tenant);
      const found = app === undefined ? apps : apps?.[app];
      if (!found) return send(res, 404, { code: 404, message: `${tenant}${app ? `/${app}` : ''} not found` });
      return send(res, 200, found);
    }
    if (method === 'DELETE' && app) {
      this.stats.declarations++;
      this.stats.appDeclarations++;
      if (this.refuseBusy(res)) return;
      if (!this.as3.apps(tenant)?.[app])
        return send(res, 404, { code: 404, message: `${tenant}/${app} not found` });
      return this.run(this.latencyFor({}), url, res, () => {
        this.as3.removeApp(tenant, app);
        return { status: 200, results: [{ code: 200, message: 'success', tenant, host: 'localhost' }] };
      });
    }
    if (method !== 'POST' || app)
      return send(res, 405, { code: 405, message: `${method} is not allowed here` });
    this.stats.declarations++;
    this.stats.appDeclarations++;
    this.stats.bytesPosted += As3Tenants.size(body);
    if (this.refuseBusy(res)) return;
    const { schemaVersion, id: _id, controls, ...apps } = (body ?? {}) as Json;
    const adc: Json = {
      class: 'ADC',
      schemaVersion: schemaVersion ?? AS3_SCHEMA_VERSION,
      ...(controls ? { controls } : {}),
      [tenant]: { class: 'Tenant', ...apps },
    };
    // The schema checks what was posted; pointers resolve against the tenant it goes into.
    const merged: Json = { ...adc, [tenant]: { class: 'Tenant', ...this.tenants.get(tenant), ...apps } };
    if (this.refuseInvalid(adc, res, merged)) return;
    this.stats.appsPosted += Object.keys(apps).length;
    const dryRun = (controls as Json | undefined)?.dryRun === true;
    return this.run(this.latencyFor(apps), url, res, () => this.as3.deployApps(tenant, apps, dryRun));
  }

  /** 422 with AS3's `errors[]` for a declaration the schema or AS3's own checks refuse. */
  private refuseInvalid(body: unknown, res: ServerResponse, resolved?: Json): boolean {
    const problems = schemaProblems(body);
    const adc = ((body as Json)?.class === 'AS3' ? (body as Json).declaration : body) as Json;
    if (problems.length === 0)
      problems.push(...semanticProblems(adc, this.faults.rejectObjects, resolved ?? adc));
    if (problems.length === 0) return false;
    this.stats.rejected++;
    send(res, 422, { code: 422, message: 'declaration is invalid', errors: problems, declarationFullId: '' });
    return true;
  }

  /**
   * A declaration; posted to `/declare/<tenant>[,<tenant>]`, only the URL's tenants of it are
   * deployed (the others in the body are left as they are on the device), and none of them in
   * the body is "no change" for each.
   */
  private async post(body: unknown, url: URL, res: ServerResponse, only?: string[]): Promise<void> {
    this.stats.declarations++;
    this.stats.bytesPosted += As3Tenants.size(body);
    if (this.refuseBusy(res)) return;
    if (this.refuseInvalid(body, res)) return;
    let adc = ((body as Json)?.class === 'AS3' ? (body as Json).declaration : body) as Json;
    if (only) {
      this.stats.scopedDeclarations++;
      const listed = new Set(only);
      adc = Object.fromEntries(
        Object.entries(adc).filter(([k, t]) => (t as Json | null)?.class !== 'Tenant' || listed.has(k)),
      );
      if (!Object.values(adc).some((t) => (t as Json | null)?.class === 'Tenant'))
        return send(res, 200, {
          results: only.map((tenant) => ({
            code: 200,
            message: 'no change',
            tenant,
            host: 'localhost',
            runTime: 0,
          })),
          declaration: this.document(),
        });
    }
    const action = (body as Json).class === 'AS3' ? String((body as Json).action ?? 'deploy') : 'deploy';
    const dryRun = action === 'dry-run' || (adc.controls as Json | undefined)?.dryRun === true;
    const declared = Object.fromEntries(
      Object.entries(adc).filter(([, t]) => (t as Json | null)?.class === 'Tenant'),
    );
    return this.run(this.latencyFor(declared), url, res, () => this.as3.deploy(adc, dryRun));
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
