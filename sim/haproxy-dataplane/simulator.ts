/**
 * `npl-lb sim dataplane`: the subset of the HAProxy Data Plane API that npl-lb uses, v2 (`/v2`) and
 * v3 (`/v3`) side by side, in front of a real HAProxy in master-worker mode. Basic auth; a
 * configuration version counter (writes need `?version=N`, 409 when stale, or
 * `?transaction_id=`); transactions (create on a version, commit with 406 when outdated, delete);
 * `{code, message}` errors; v2 reads wrapped as `{_version, data}`. A commit or direct write that
 * only moves servers goes through the runtime socket (200/201/204); anything else re-renders
 * haproxy.cfg, checks it with `haproxy -c` and reloads (202 + Reload-ID, `GET /reloads/{id}`).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Logger } from '../../src/runtime/logger.ts';
import { SimServer, sendJson } from '../shared/server.ts';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import {
  adminSocket,
  checkConfig,
  configPath,
  HaproxyProcess,
  socketCommand,
} from '../../adapters/haproxy/process.ts';
import { DpError, readItems, resolveTarget, writeItems } from './config-crud.ts';
import { readGlobal, writeGlobal } from './global-section.ts';
import { runtimeServersRoute } from './runtime-servers.ts';
import { ReloadAgent } from './reload-agent.ts';
import { parseBody } from './request-body.ts';
import { SimStorage, type Upload } from './storage.ts';
import { cloneConfig, type DpConfig, emptyConfig, renderConfig, runtimePlan } from './config-store.ts';

export interface DataplaneSimOptions {
  haproxyBin: string;
  workDir: string;
  username?: string;
  password?: string;
  logger?: Logger;
  /** Runs before each request is handled (tests use it to race a request with another). */
  beforeRequest?: (method: string, path: string, query: Record<string, string>) => Promise<void>;
  /** Every request and its answer, for tests that hold them to the specs. */
  onExchange?: (x: Exchange) => void;
}

export interface Exchange {
  method: string;
  /** The path without the query, with its /v2 or /v3 base. */
  path: string;
  query: Record<string, string>;
  requestBody: unknown;
  /** A multipart upload's parts: field name -> file name. */
  form?: Record<string, string>;
  status: number;
  responseBody: unknown;
  headers: Record<string, string>;
}

interface Transaction {
  id: string;
  version: number;
  status: 'in_progress' | 'success' | 'failed' | 'outdated';
  config: DpConfig;
}

interface Reply {
  status: number;
  body?: unknown;
  /** Sent as it is (a stored file's contents). */
  raw?: string;
  headers?: Record<string, string>;
}

export class DataplaneSimulator {
  readonly proc: HaproxyProcess;
  private readonly http = new SimServer(undefined);
  private config = emptyConfig();
  private version = 1;
  private readonly transactions = new Map<string, Transaction>();
  private txSeq = 0;
  private commits = 0;
  readonly storage: SimStorage;
  private readonly agent: ReloadAgent;

  constructor(private readonly opts: DataplaneSimOptions) {
    this.proc = new HaproxyProcess({ bin: opts.haproxyBin, workDir: opts.workDir });
    this.agent = new ReloadAgent(this.proc, opts.workDir, opts.logger);
    this.storage = new SimStorage(join(opts.workDir, 'storage'), {
      runtime: (line) => {
        this.agent.stats.runtimeCommands++;
        return this.proc.runtime(line);
      },
      reload: () => this.agent.schedule([], true),
      forceReload: async () => {
        this.agent.schedule([], true);
        await this.agent.idle();
      },
      configText: () => readFileSync(this.configFile, 'utf8'),
    });
  }

  /** Reloads HAProxy made, runtime commands sent, transactions committed. */
  get stats(): { reloads: number; runtimeCommands: number; commits: number } {
    return { ...this.agent.stats, commits: this.commits };
  }

  get url(): string {
    return this.http.url;
  }

  get configFile(): string {
    return configPath(this.proc.paths);
  }

  async start(port = 0, host = '127.0.0.1'): Promise<string> {
    mkdirSync(this.opts.workDir, { recursive: true });
    writeFileSync(this.configFile, this.render(this.config));
    await this.proc.start();
    return this.http.listen(
      (req, res) => this.handle(req, res),
      (res, err) => this.fail(res, err),
      port,
      host,
    );
  }

  private render(c: DpConfig): string {
    return renderConfig(c, {
      adminSocket: adminSocket(this.proc.paths),
      serverStateFile: join(this.opts.workDir, 'server-state'),
    });
  }

  private fail(res: ServerResponse, err: unknown): void {
    const status = err instanceof DpError ? err.status : 500;
    const message = err instanceof Error ? err.message : String(err);
    if (status >= 500) this.opts.logger?.error({ err }, 'dataplane simulator error');
    if (!res.headersSent) sendJson(res, status, { code: status, message });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim');
    const query = Object.fromEntries(url.searchParams);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: unknown = undefined;
    let form: Record<string, string> | undefined;
    let reply: Reply;
    try {
      await this.opts.beforeRequest?.(req.method ?? 'GET', url.pathname, query);
      const parsed = await parseBody(req.headers['content-type'] ?? '', Buffer.concat(chunks));
      ({ body, form } = parsed);
      reply = await this.route(req, url.pathname, query, body, parsed.upload);
    } catch (err) {
      const status = err instanceof DpError ? err.status : 500;
      if (status >= 500) this.opts.logger?.error({ err }, 'dataplane simulator error');
      reply = { status, body: { code: status, message: (err as Error).message } };
    }
    const headers = { ...reply.headers };
    if (reply.status === 401) headers['www-authenticate'] = 'Basic realm="dataplaneapi"';
    this.opts.onExchange?.({
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      requestBody: body,
      ...(form ? { form } : {}),
      status: reply.status,
      responseBody: reply.raw ?? reply.body,
      headers,
    });
    for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
    if (reply.raw !== undefined) {
      res.writeHead(reply.status, { 'content-type': 'application/octet-stream' });
      res.end(reply.raw);
    } else if (reply.body === undefined) {
      res.writeHead(reply.status);
      res.end();
    } else sendJson(res, reply.status, reply.body);
  }

  private authorized(req: IncomingMessage): boolean {
    const want = `Basic ${Buffer.from(`${this.opts.username ?? 'admin'}:${this.opts.password ?? 'admin'}`).toString('base64')}`;
    return req.headers.authorization === want;
  }

  private async route(
    req: IncomingMessage,
    pathname: string,
    query: Record<string, string>,
    body: unknown,
    upload: Upload,
  ): Promise<Reply> {
    const m = /^\/(v2|v3)(\/.*)$/.exec(pathname);
    if (!m) throw new DpError(404, `${pathname}: not found (the API is under /v2 and /v3)`);
    if (!this.authorized(req)) return { status: 401, body: { code: 401, message: 'unauthorized' } };
    const v = m[1] as ApiVersion;
    const path = m[2]!.replace(/\/$/, '');
    const method = req.method ?? 'GET';
    const seg = path.split('/').slice(1).map(decodeURIComponent);
    if (path === '/info' && method === 'GET') {
      return {
        status: 200,
        body: { api: { version: v === 'v2' ? '2.9.0 npl-lb-sim' : '3.0.0 npl-lb-sim' }, system: {} },
      };
    }
    if (path === '/services/haproxy/configuration/version' && method === 'GET') {
      return { status: 200, body: this.version };
    }
    if (seg[0] === 'services' && seg[1] === 'haproxy' && seg[2] === 'transactions') {
      return this.transactionRoute(v, method, seg[3], query);
    }
    if (seg[0] === 'services' && seg[1] === 'haproxy' && seg[2] === 'reloads' && method === 'GET') {
      if (seg[3] === undefined) return { status: 200, body: [...this.agent.reloads.values()] };
      const r = this.agent.reloads.get(seg[3]);
      if (!r) throw new DpError(404, `reload ${seg[3]} not found`);
      return { status: 200, body: r };
    }
    if (seg[0] === 'services' && seg[1] === 'haproxy' && seg[2] === 'storage') {
      return this.storage.route(v, method, seg.slice(3), query, upload, body);
    }
    if (path === '/services/haproxy/runtime/ssl_crt_lists/entries') {
      return this.storage.route(v, method, ['runtime_crt_list_entries'], query, upload, body);
    }
    if (seg[0] === 'services' && seg[1] === 'haproxy' && seg[2] === 'runtime' && method === 'GET') {
      return runtimeServersRoute(v, seg.slice(3), query, {
        hasBackend: (name) => this.config.backends.has(name),
        serversState: (backend) =>
          socketCommand(adminSocket(this.proc.paths), `show servers state ${backend}`),
      });
    }
    if (seg[0] !== 'services' || seg[1] !== 'haproxy' || seg[2] !== 'configuration') {
      throw new DpError(404, `${path}: not found in this simulator`);
    }
    if (seg[3] === 'global' && seg[4] === undefined) {
      if (method !== 'GET' && method !== 'PUT') throw new DpError(405, `${method} not allowed`);
      return this.configRoute(v, method, query, {
        read: (c) => readGlobal(v, c.global ?? {}),
        write: (c) => {
          c.global = writeGlobal(v, body);
          return readGlobal(v, c.global);
        },
      });
    }
    const target = resolveTarget(v, seg.slice(3), query);
    return this.configRoute(v, method, query, {
      read: (c) => readItems(v, c, target),
      write: (c) => writeItems(v, c, method, target, body).body,
    });
  }

  private transactionRoute(
    v: ApiVersion,
    method: string,
    id: string | undefined,
    query: Record<string, string>,
  ): Promise<Reply> | Reply {
    const show = (t: Transaction) => ({ _version: t.version, id: t.id, status: t.status });
    const vh = { 'configuration-version': String(this.version) };
    if (id === undefined) {
      if (method === 'GET') {
        const list = [...this.transactions.values()].filter(
          (t) => !query.status || t.status === query.status,
        );
        return { status: 200, body: list.map(show) };
      }
      if (method !== 'POST') throw new DpError(405, `${method} not allowed`);
      const version = Number(query.version);
      if (!Number.isInteger(version)) throw new DpError(400, 'version is required');
      if (version !== this.version) {
        throw new DpError(409, `version mismatch: given ${version}, the configuration is at ${this.version}`);
      }
      if ([...this.transactions.values()].filter((t) => t.status === 'in_progress').length >= 20) {
        return {
          status: 429,
          body: {
            code: 429,
            message:
              'cannot start a new transaction, reached the maximum amount of 20 active transactions available',
          },
        };
      }
      const t: Transaction = {
        id: `npl-sim-${++this.txSeq}-${Date.now().toString(36)}`,
        version,
        status: 'in_progress',
        config: cloneConfig(this.config),
      };
      this.transactions.set(t.id, t);
      return { status: 201, body: show(t), ...(v === 'v3' ? { headers: vh } : {}) };
    }
    const t = this.transactions.get(id);
    if (!t) throw new DpError(404, `transaction ${id} not found`);
    if (method === 'GET') return { status: 200, body: show(t), ...(v === 'v3' ? { headers: vh } : {}) };
    if (method === 'DELETE') {
      this.transactions.delete(id);
      return { status: 204 };
    }
    if (method !== 'PUT') throw new DpError(405, `${method} not allowed`);
    return this.commit(v, t);
  }

  private async commit(v: ApiVersion, t: Transaction): Promise<Reply> {
    if (t.status !== 'in_progress') throw new DpError(406, `transaction ${t.id} is ${t.status}`);
    if (t.version !== this.version) {
      t.status = 'outdated';
      throw new DpError(
        406,
        `transaction ${t.id} is outdated: started on version ${t.version}, the configuration is at ${this.version}`,
      );
    }
    let applied: { reloadId: string | undefined };
    try {
      applied = await this.install(t.config);
    } catch (err) {
      t.status = 'failed';
      throw err;
    }
    t.status = 'success';
    t.version = this.version;
    this.transactions.delete(t.id);
    this.commits++;
    const body = { _version: this.version, id: t.id, status: t.status };
    const vh: Record<string, string> = v === 'v3' ? { 'configuration-version': String(this.version) } : {};
    return applied.reloadId
      ? { status: 202, body, headers: { ...vh, 'reload-id': applied.reloadId } }
      : { status: 200, body, headers: vh };
  }

  /** Makes `next` the running configuration: runtime commands when they suffice, else a reload. */
  private async install(next: DpConfig): Promise<{ reloadId: string | undefined }> {
    const plan = runtimePlan(this.config, next);
    const text = this.render(next);
    const tmp = `${this.configFile}.next`;
    writeFileSync(tmp, text);
    if (plan.reload) {
      try {
        await checkConfig(this.opts.haproxyBin, tmp);
      } catch (err) {
        throw new DpError(400, (err as Error).message);
      }
    }
    renameSync(tmp, this.configFile);
    this.config = next;
    this.version++;
    if (!plan.reload) {
      // After any reload in flight, so that the commands reach the worker that stays.
      await this.agent.idle();
      if (await this.agent.runtime(plan.commands)) return { reloadId: undefined };
      // HAProxy refused a command: the file is in step, so a reload without the saved state
      // (which still holds what was refused) brings HAProxy to it.
      return { reloadId: this.agent.schedule([], false) };
    }
    // Checked above: the reload does not check the same text again.
    return { reloadId: this.agent.schedule(plan.commands, true, text) };
  }

  /** GET/POST/PUT/DELETE on a configuration collection or item. */
  private async configRoute(
    v: ApiVersion,
    method: string,
    query: Record<string, string>,
    op: { read: (c: DpConfig) => unknown; write: (c: DpConfig) => unknown },
  ): Promise<Reply> {
    const tx = query.transaction_id;
    const t = tx !== undefined ? this.transactions.get(tx) : undefined;
    if (tx !== undefined && (!t || t.status !== 'in_progress')) {
      throw new DpError(404, `transaction ${tx} not found or not in progress`);
    }
    const config = t ? t.config : this.config;
    const vh = { 'configuration-version': String(t ? t.version : this.version) };
    if (method === 'GET') {
      const data = op.read(config);
      return v === 'v2'
        ? { status: 200, body: { _version: t ? t.version : this.version, data }, headers: vh }
        : { status: 200, body: data, headers: vh };
    }
    if (!t) {
      if (query.version === undefined) throw new DpError(400, 'version or transaction_id is required');
      if (Number(query.version) !== this.version) {
        throw new DpError(
          409,
          `version mismatch: given ${query.version}, the configuration is at ${this.version}`,
        );
      }
    }
    const work = t ? config : cloneConfig(config);
    const out = { body: op.write(work) };
    if (t) return { status: 202, body: out.body };
    const applied = await this.install(work);
    const created = method === 'POST';
    if (applied.reloadId) return { status: 202, body: out.body, headers: { 'reload-id': applied.reloadId } };
    return {
      status: method === 'DELETE' ? 204 : created ? 201 : 200,
      body: method === 'DELETE' ? undefined : out.body,
    };
  }

  /** Resolves once no reload is queued or running. */
  async idle(): Promise<void> {
    await this.agent.idle();
  }

  async close(): Promise<void> {
    await this.http.close();
    await this.agent.idle();
    await this.proc.stop();
  }
}
