/**
 * An Avi Controller session: `POST /login` for the session and CSRF cookies, then every call with
 * the cookies, `X-CSRFToken`, `Referer`, `X-Avi-Version` and `X-Avi-Tenant`. A 401 logs in again
 * and retries once; a 419 takes the refreshed cookies and retries once; `list` follows `next` pages.
 * The dispatcher is injected.
 */
import { AdapterError, codeForStatus } from '../../src/adapter/errors.ts';
import type { Dispatcher } from 'undici';
import { DeviceHttp } from '../../src/adapter/device-http.ts';
import { versionBelow } from '../../src/model/versions.ts';

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
  private readonly http: DeviceHttp;
  /**
   * The X-Avi-Version sent: the configured one, or the controller's own when that is older (a
   * controller refuses an object model newer than its own; AKO takes the lower of the two alike).
   */
  private version: string;
  /** The controller's version, as its last login said. */
  controllerVersion: string | undefined;
  readonly stats = { logins: 0, calls: 0 };

  constructor(private readonly opts: AviSessionOptions) {
    this.http = new DeviceHttp({
      url: opts.url,
      insecureSkipVerify: opts.insecureSkipVerify,
      ca: opts.ca,
      dispatcher: opts.dispatcher,
      timeoutMs: opts.timeoutMs ?? 60_000,
      unreachable: (message, cause) => new AviError(0, message, { cause }),
    });
    this.version = opts.version;
  }

  /** The object model the calls are made in (see `version`). */
  get apiVersion(): string {
    return this.version;
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
    const r = await this.http.send(method, path, body === undefined ? undefined : { json: body }, {
      cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
      'x-csrftoken': this.cookies.get('csrftoken') ?? '',
      referer: `${this.opts.url.replace(/\/+$/, '')}/`,
      'x-avi-version': this.version,
      'x-avi-tenant': this.opts.tenant,
    });
    this.takeCookies(r.headers);
    return { status: r.status, body: r.body };
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
    const own = (r.body as { version?: { Version?: unknown } } | undefined)?.version?.Version;
    if (typeof own === 'string' && /^\d+(\.\d+)*$/.test(own)) {
      this.controllerVersion = own;
      this.version = versionBelow(own, this.opts.version) ? own : this.opts.version;
    }
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

  close(): Promise<void> {
    return this.http.close();
  }
}
