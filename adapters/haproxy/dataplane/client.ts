/**
 * HAProxy Data Plane API client for v2 and v3: basic auth, JSON bodies checked with zod, and the
 * version differences hidden behind one set of calls (v2 wraps reads as `{_version, data}` and
 * names a parent with query parameters; v3 nests children under their parent's path and replaces
 * ACL and switching-rule lists whole). Writes go into a transaction. The dispatcher is injected.
 */
import { type Dispatcher, FormData } from 'undici';
import { type DeviceBody, DeviceHttp } from '../../../src/adapter/device-http.ts';
import { AdapterError, codeForStatus } from '../../../src/adapter/errors.ts';
import { z } from 'zod';
import {
  type ApiVersion,
  type DpBackend,
  dpBackendSchema,
  type DpBind,
  dpBindSchema,
  dpErrorSchema,
  type DpFrontend,
  dpFrontendSchema,
  type DpGlobal,
  dpGlobalSchema,
  type DpReload,
  dpReloadSchema,
  type DpRuntimeServer,
  dpRuntimeServerSchema,
  type DpServer,
  dpServerSchema,
  dpTransactionSchema,
  wrapped,
} from './models.ts';

export class DataplaneError extends AdapterError {
  constructor(
    /** HTTP status (0: no answer). */
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(codeForStatus(status), message, options);
    this.name = 'DataplaneError';
  }
}

export interface DataplaneClientOptions {
  /** http(s)://host:port of the Data Plane API, without the /v2 or /v3 base path. */
  url: string;
  apiVersion: ApiVersion;
  username: string;
  password: string;
  insecureSkipVerify?: boolean;
  /** PEM CAs trusted beside the system's (a private CA). */
  ca?: string;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}

export type Query = Record<string, string | number | boolean | undefined>;
/** A request body: JSON (the default), text/plain, or a multipart upload of one file. */
export type Body =
  { json: unknown } | { text: string } | { form: { field: string; filename: string; content: string } };
export type ListKind =
  | 'acls'
  | 'backend_switching_rules'
  | 'http_request_rules'
  | 'http_response_rules'
  | 'tcp_request_rules'
  /** A backend's lists: its `http-check` and `stick` rules. */
  | 'http_checks'
  | 'stick_rules';
export interface Answer {
  status: number;
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}
const seg = encodeURIComponent;
const CONF = '/services/haproxy/configuration';

export interface Commit {
  /** 202: HAProxy reloads; poll the reload. 200: committed without a reload. */
  reloadId: string | undefined;
}

export class DataplaneClient {
  private readonly http: DeviceHttp;
  private readonly auth: string;
  readonly stats = { calls: 0, writes: 0 };

  constructor(private readonly opts: DataplaneClientOptions) {
    this.http = new DeviceHttp({
      url: opts.url,
      insecureSkipVerify: opts.insecureSkipVerify,
      ca: opts.ca,
      dispatcher: opts.dispatcher,
      timeoutMs: opts.timeoutMs ?? 30_000,
      unreachable: (message, cause) => new DataplaneError(0, message, { cause }),
    });
    this.auth = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
  }

  get apiVersion(): ApiVersion {
    return this.opts.apiVersion;
  }

  private call(
    method: Dispatcher.HttpMethod,
    path: string,
    query: Query = {},
    body?: unknown,
  ): Promise<Answer> {
    return this.send(method, path, query, body === undefined ? undefined : { json: body });
  }

  /** One request to the API (path below the /v2 or /v3 base); a status >= 400 throws DataplaneError. */
  async send(method: Dispatcher.HttpMethod, path: string, query: Query = {}, body?: Body): Promise<Answer> {
    const q = Object.entries(query)
      .filter((e): e is [string, string | number | boolean] => e[1] !== undefined)
      .map(([k, v]) => `${k}=${seg(String(v))}`)
      .join('&');
    const url = `${this.opts.url.replace(/\/$/, '')}/${this.opts.apiVersion}${path}${q ? `?${q}` : ''}`;
    this.stats.calls++;
    if (method !== 'GET') this.stats.writes++;
    let payload: DeviceBody | undefined = body && 'form' in body ? undefined : body;
    if (body && 'form' in body) {
      const form = new FormData();
      form.append(body.form.field, new Blob([body.form.content]), body.form.filename);
      payload = { form };
    }
    const r = await this.http.send(method, url, payload, { authorization: this.auth });
    if (r.status >= 400) {
      const e = dpErrorSchema.safeParse(r.body);
      const why = e.success ? e.data.message : r.text.slice(0, 300);
      throw new DataplaneError(r.status, `${method} ${path}: ${r.status} ${why}`);
    }
    return { status: r.status, body: r.body, headers: r.headers };
  }

  /** A read of a configuration list or object; v2 unwraps `{_version, data}`. */
  private async read<T extends z.ZodType>(schema: T, path: string, query: Query): Promise<z.infer<T>> {
    const r = await this.call('GET', path, query);
    const s = this.opts.apiVersion === 'v2' ? wrapped(schema) : schema;
    const p = s.safeParse(r.body);
    if (!p.success) {
      throw new DataplaneError(r.status, `GET ${path}: unexpected answer: ${p.error.issues[0]?.message}`);
    }
    return (this.opts.apiVersion === 'v2' ? (p.data as { data: unknown }).data : p.data) as z.infer<T>;
  }

  async configVersion(): Promise<number> {
    const r = await this.call('GET', `${CONF}/version`);
    const v = z.number().int().safeParse(r.body);
    if (!v.success) throw new DataplaneError(r.status, 'GET version: not an integer');
    return v.data;
  }

  async startTransaction(version: number): Promise<string> {
    const r = await this.call('POST', '/services/haproxy/transactions', { version });
    return dpTransactionSchema.parse(r.body).id;
  }

  async commit(id: string): Promise<Commit> {
    const r = await this.call('PUT', `/services/haproxy/transactions/${seg(id)}`);
    const reload = r.headers['reload-id'];
    return { reloadId: r.status === 202 ? (Array.isArray(reload) ? reload[0] : reload) : undefined };
  }

  async abort(id: string): Promise<void> {
    await this.call('DELETE', `/services/haproxy/transactions/${seg(id)}`).catch((err: unknown) => {
      if (!(err instanceof DataplaneError && err.status === 404)) throw err;
    });
  }

  async reload(id: string): Promise<DpReload> {
    const r = await this.call('GET', `/services/haproxy/reloads/${seg(id)}`);
    return dpReloadSchema.parse(r.body);
  }

  backends(tx?: string): Promise<DpBackend[]> {
    return this.read(z.array(dpBackendSchema), `${CONF}/backends`, { transaction_id: tx });
  }

  frontends(tx?: string): Promise<DpFrontend[]> {
    return this.read(z.array(dpFrontendSchema), `${CONF}/frontends`, { transaction_id: tx });
  }

  /** Where a child list lives: v2 names the parent in the query, v3 in the path. */
  private child(kind: 'servers' | 'binds' | ListKind, parent: string, of?: 'backend') {
    const parentKind =
      of === 'backend' || kind === 'servers' || kind === 'http_checks' || kind === 'stick_rules'
        ? 'backends'
        : 'frontends';
    if (this.opts.apiVersion === 'v3') {
      return { path: `${CONF}/${parentKind}/${seg(parent)}/${kind}`, query: {} as Query };
    }
    const query: Query =
      kind === 'servers' || kind === 'stick_rules'
        ? { backend: parent }
        : kind === 'binds' || kind === 'backend_switching_rules'
          ? { frontend: parent }
          : { parent_type: parentKind === 'backends' ? 'backend' : 'frontend', parent_name: parent };
    return { path: `${CONF}/${kind}`, query };
  }

  servers(backend: string, tx?: string): Promise<DpServer[]> {
    const c = this.child('servers', backend);
    return this.read(z.array(dpServerSchema), c.path, { ...c.query, transaction_id: tx });
  }

  /** A backend's servers as the running HAProxy has them (runtime endpoints are not wrapped in v2). */
  async runtimeServers(backend: string): Promise<DpRuntimeServer[]> {
    const v3 = this.opts.apiVersion === 'v3';
    const path = v3
      ? `/services/haproxy/runtime/backends/${seg(backend)}/servers`
      : '/services/haproxy/runtime/servers';
    const r = await this.call('GET', path, v3 ? {} : { backend });
    const p = z.array(dpRuntimeServerSchema).safeParse(r.body);
    if (!p.success) {
      throw new DataplaneError(r.status, `GET ${path}: unexpected answer: ${p.error.issues[0]?.message}`);
    }
    return p.data;
  }

  binds(frontend: string, tx?: string): Promise<DpBind[]> {
    const c = this.child('binds', frontend);
    return this.read(z.array(dpBindSchema), c.path, { ...c.query, transaction_id: tx });
  }

  /** A frontend's ordered list of one kind (ACLs, switching rules, http/tcp rules). */
  list(
    kind: ListKind,
    frontend: string,
    tx?: string,
    of?: 'backend',
  ): Promise<{ index?: number | undefined }[]> {
    const c = this.child(kind, frontend, of);
    return this.read(z.array(z.object({ index: z.number().int().optional() }).loose()), c.path, {
      ...c.query,
      transaction_id: tx,
    });
  }

  /** The global section (its fields as the API shows them: Lua loads for mirrors.ts). */
  global(tx?: string): Promise<DpGlobal> {
    return this.read(dpGlobalSchema, `${CONF}/global`, { transaction_id: tx });
  }

  async putGlobal(tx: string, g: DpGlobal): Promise<void> {
    await this.call('PUT', `${CONF}/global`, { transaction_id: tx }, g);
  }

  async putBackend(tx: string, b: DpBackend, exists: boolean): Promise<void> {
    if (exists) await this.call('PUT', `${CONF}/backends/${seg(b.name)}`, { transaction_id: tx }, b);
    else await this.call('POST', `${CONF}/backends`, { transaction_id: tx }, b);
  }

  async deleteBackend(tx: string, name: string): Promise<void> {
    await this.call('DELETE', `${CONF}/backends/${seg(name)}`, { transaction_id: tx });
  }

  async putFrontend(tx: string, f: DpFrontend, exists: boolean): Promise<void> {
    if (exists) await this.call('PUT', `${CONF}/frontends/${seg(f.name)}`, { transaction_id: tx }, f);
    else await this.call('POST', `${CONF}/frontends`, { transaction_id: tx }, f);
  }

  async deleteFrontend(tx: string, name: string): Promise<void> {
    await this.call('DELETE', `${CONF}/frontends/${seg(name)}`, { transaction_id: tx });
  }

  async putServer(tx: string, backend: string, s: DpServer, exists: boolean): Promise<void> {
    const c = this.child('servers', backend);
    if (exists) await this.call('PUT', `${c.path}/${seg(s.name)}`, { ...c.query, transaction_id: tx }, s);
    else await this.call('POST', c.path, { ...c.query, transaction_id: tx }, s);
  }

  async deleteServer(tx: string, backend: string, name: string): Promise<void> {
    const c = this.child('servers', backend);
    await this.call('DELETE', `${c.path}/${seg(name)}`, { ...c.query, transaction_id: tx });
  }

  async putBind(tx: string, frontend: string, b: DpBind, exists: boolean): Promise<void> {
    const c = this.child('binds', frontend);
    if (exists) await this.call('PUT', `${c.path}/${seg(b.name)}`, { ...c.query, transaction_id: tx }, b);
    else await this.call('POST', c.path, { ...c.query, transaction_id: tx }, b);
  }

  async deleteBind(tx: string, frontend: string, name: string): Promise<void> {
    const c = this.child('binds', frontend);
    await this.call('DELETE', `${c.path}/${seg(name)}`, { ...c.query, transaction_id: tx });
  }

  /**
   * Replaces a frontend's (a backend's: http_checks) list of one kind: v3 in one PUT of the list; v2 deletes from the end and
   * adds by index (ACLs and switching rules as they are; http and tcp rules likewise).
   */
  async setList(
    kind: ListKind,
    tx: string,
    frontend: string,
    items: object[],
    of?: 'backend',
  ): Promise<void> {
    const c = this.child(kind, frontend, of);
    const q = { ...c.query, transaction_id: tx };
    if (this.opts.apiVersion === 'v3') {
      await this.call('PUT', c.path, q, items);
      return;
    }
    const current = await this.list(kind, frontend, tx, of);
    for (let i = current.length - 1; i >= 0; i--) await this.call('DELETE', `${c.path}/${i}`, q);
    for (const [i, item] of items.entries()) await this.call('POST', c.path, q, { ...item, index: i });
  }

  close(): Promise<void> {
    return this.http.close();
  }
}

/** Waits for a reload of the Data Plane API to finish (polled every 50 ms, at most `timeoutMs`). */
export async function awaitReload(client: DataplaneClient, id: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await client.reload(id);
    if (r.status === 'succeeded') return;
    if (r.status === 'failed') throw new DataplaneError(500, `reload ${id} failed: ${r.response ?? ''}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new DataplaneError(0, `reload ${id} did not finish in time`);
}
