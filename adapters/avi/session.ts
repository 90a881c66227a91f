/**
 * An Avi Controller session: `POST /login` for the session and CSRF cookies, then every call with
 * the cookies, `X-CSRFToken`, `Referer`, `X-Avi-Version` and `X-Avi-Tenant`. A 401 logs in again
 * and retries once; a 419 takes the refreshed cookies and retries once; `list` follows `next` pages.
 * The dispatcher is injected.
 */
import { AdapterError, codeForStatus } from '../../src/adapter/errors.ts';
import { Agent, type Dispatcher, request } from 'undici';
import { withFreshRetry } from '../../src/runtime/fresh-retry.ts';

export class AviError extends AdapterError {
  constructor(
    readonly status: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(codeForStatus(status), message, options);
    this.name = 'AviError';
  }
}

/** The controller's error message from a reply body (`{ error }`), or the body itself. */
export function errorText(body: unknown): string {
  if (typeof body === 'string') return body;
  const e = (body as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? e : JSON.stringify(body ?? '');
}

export interface AviSessionOptions {
  /** https://controller[:port] */
  url: string;
  username: string;
  password: string;
  /** The API version sent as X-Avi-Version (e.g. 22.1.3). */
  version: string;
  tenant: string;
  insecureSkipVerify?: boolean;
  /** PEM CAs trusted beside the system's (a private CA). */
  ca?: string;
  dispatcher?: Dispatcher;
  timeoutMs?: number;
}

export interface AviReply {
  status: number;
  body: unknown;
}

export class AviSession {
  private cookies = new Map<string, string>();
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** The connection options of our own dispatcher (a read's fresh-connection retry uses them). */
  private readonly connect: { rejectUnauthorized: boolean; ca?: string };
  private closed = false;
  readonly stats = { logins: 0, calls: 0 };

  constructor(private readonly opts: AviSessionOptions) {
    this.ownsDispatcher = opts.dispatcher === undefined;
    this.connect = { rejectUnauthorized: !opts.insecureSkipVerify, ...(opts.ca ? { ca: opts.ca } : {}) };
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: this.connect,
        keepAliveTimeout: 10_000,
      });
  }

  private takeCookies(headers: Record<string, string | string[] | undefined>): void {
    const set = headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair!.indexOf('=');
      if (i > 0) this.cookies.set(pair!.slice(0, i).trim(), pair!.slice(i + 1).trim());
    }
  }

  private async send(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<AviReply> {
    let res: Dispatcher.ResponseData;
    try {
      res = await withFreshRetry(
        method,
        this.dispatcher,
        this.ownsDispatcher ? this.connect : undefined,
        (dispatcher) =>
          request(new URL(path, this.opts.url), {
            method,
            dispatcher,
            headers: {
              accept: 'application/json',
              ...(body === undefined ? {} : { 'content-type': 'application/json' }),
              cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
              'x-csrftoken': this.cookies.get('csrftoken') ?? '',
              referer: `${this.opts.url.replace(/\/+$/, '')}/`,
              'x-avi-version': this.opts.version,
              'x-avi-tenant': this.opts.tenant,
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            headersTimeout: this.opts.timeoutMs ?? 60_000,
            bodyTimeout: this.opts.timeoutMs ?? 60_000,
          }),
      );
    } catch (err) {
      throw new AviError(0, `${method} ${path}: ${err instanceof Error ? err.message : String(err)}`, {
        cause: err,
      });
    }
    this.takeCookies(res.headers);
    const text = await res.body.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    return { status: res.statusCode, body: parsed };
  }

  async login(): Promise<void> {
    this.stats.logins++;
    this.cookies.clear();
    const r = await this.send('POST', '/login', {
      username: this.opts.username,
      password: this.opts.password,
    });
    if (r.status !== 200)
      throw new AviError(r.status, `login as ${this.opts.username} refused (${r.status})`);
  }

  private loggingIn: Promise<void> | undefined;

  /** One login at a time: calls that find no session (or a dead one) wait for the same login. */
  private relogin(): Promise<void> {
    this.loggingIn ??= this.login().finally(() => {
      this.loggingIn = undefined;
    });
    return this.loggingIn;
  }

  private sessionId(): string | undefined {
    return this.cookies.get('avi-sessionid') ?? this.cookies.get('sessionid');
  }

  /** One API call; logs in first when there is no session, and once more on 401 or 419. */
  async call(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<AviReply> {
    this.stats.calls++;
    if (this.loggingIn) await this.loggingIn;
    if (!this.cookies.has('csrftoken')) await this.relogin();
    const used = this.sessionId();
    const r = await this.send(method, path, body);
    if (r.status === 419) return this.send(method, path, body);
    if (r.status !== 401) return r;
    // Only the first call to see this session die logs in; the others wait for that login.
    if (this.sessionId() === used) await this.relogin();
    else if (this.loggingIn) await this.loggingIn;
    return this.send(method, path, body);
  }

  /** Every object of a type (`/api/<type>?page_size=200<query>`), following `next` pages. */
  async list(type: string, query = ''): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    let path: string | undefined = `/api/${type}?page_size=200${query}`;
    for (let pages = 0; path && pages < 10_000; pages++) {
      const r = await this.call('GET', path);
      if (r.status !== 200)
        throw new AviError(r.status, `GET /api/${type}: ${r.status} ${errorText(r.body)}`);
      const page = r.body as { results?: Record<string, unknown>[]; next?: string };
      out.push(...(page.results ?? []));
      path = page.next ? new URL(page.next).pathname + new URL(page.next).search : undefined;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
