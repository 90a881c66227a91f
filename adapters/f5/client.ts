/**
 * BIG-IP iControl REST client: token authentication (`/mgmt/shared/authn/login`), renewal before
 * the token expires (`PATCH /mgmt/shared/authz/tokens/<token>`), a fresh login when renewal fails
 * or a call answers 401, and JSON calls with zod-checked bodies. The dispatcher is injected.
 */
import { Agent, type Dispatcher, request } from 'undici';
import { withFreshRetry } from '../../src/runtime/fresh-retry.ts';
import { AdapterError } from '../../src/adapter/errors.ts';
import { z } from 'zod';

export class F5Error extends AdapterError {
  constructor(
    override readonly code: 'Unauthorized' | 'Unavailable' | 'BadResponse' | 'As3Missing' | 'As3TooOld',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
    this.name = 'F5Error';
  }
}

export interface BigIpClientOptions {
  /** https://host[:port] of the BIG-IP management interface. */
  url: string;
  username: string;
  password: string;
  /** Accept a self-signed management certificate (common on BIG-IP). */
  insecureSkipVerify?: boolean;
  /** PEM CAs trusted beside the system's (a private CA). */
  ca?: string;
  dispatcher?: Dispatcher;
  /** Per-request timeout (default 60 s). */
  timeoutMs?: number;
  now?: () => number;
}

const loginSchema = z.object({
  token: z.object({ token: z.string().min(1), timeout: z.number().int().positive() }).loose(),
});

export interface Reply {
  status: number;
  body: unknown;
}

export class BigIpClient {
  private token: { value: string; expiresAt: number; lifetimeMs: number } | undefined;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** The connection options of our own dispatcher (a read's fresh-connection retry uses them). */
  private readonly connect: { rejectUnauthorized: boolean; ca?: string };
  private readonly now: () => number;
  /** Counts for tests and benchmarks. */
  readonly stats = { logins: 0, renewals: 0, calls: 0 };

  constructor(private readonly opts: BigIpClientOptions) {
    this.ownsDispatcher = opts.dispatcher === undefined;
    this.connect = { rejectUnauthorized: !opts.insecureSkipVerify, ...(opts.ca ? { ca: opts.ca } : {}) };
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: this.connect,
        keepAliveTimeout: 10_000,
      });
    this.now = opts.now ?? Date.now;
  }

  private async raw(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<Reply> {
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
              ...(token ? { 'x-f5-auth-token': token } : {}),
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
            headersTimeout: this.opts.timeoutMs ?? 60_000,
            bodyTimeout: this.opts.timeoutMs ?? 60_000,
          }),
      );
    } catch (err) {
      throw new F5Error(
        'Unavailable',
        `${method} ${path}: ${err instanceof Error ? err.message : String(err)}`,
        {
          cause: err,
        },
      );
    }
    const text = await res.body.text();
    let parsed: unknown = undefined;
    if (text.length > 0) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    return { status: res.statusCode, body: parsed };
  }

  private async login(): Promise<string> {
    this.stats.logins++;
    const r = await this.raw('POST', '/mgmt/shared/authn/login', {
      username: this.opts.username,
      password: this.opts.password,
      loginProviderName: 'tmos',
    });
    if (r.status === 401 || r.status === 403) {
      throw new F5Error('Unauthorized', `login as ${this.opts.username} refused (${r.status})`);
    }
    const parsed = loginSchema.safeParse(r.body);
    if (r.status !== 200 || !parsed.success) {
      throw new F5Error('BadResponse', `login answered ${r.status} without a token`);
    }
    const lifetimeMs = parsed.data.token.timeout * 1000;
    this.token = { value: parsed.data.token.token, expiresAt: this.now() + lifetimeMs, lifetimeMs };
    return this.token.value;
  }

  /** A token with time left: renewed when under a fifth of its lifetime (or a minute) remains. */
  private async validToken(): Promise<string> {
    const t = this.token;
    if (!t || this.now() >= t.expiresAt) return this.login();
    if (t.expiresAt - this.now() > Math.min(60_000, t.lifetimeMs / 5)) return t.value;
    const r = await this.raw(
      'PATCH',
      `/mgmt/shared/authz/tokens/${encodeURIComponent(t.value)}`,
      { timeout: t.lifetimeMs / 1000 },
      t.value,
    ).catch(() => undefined);
    if (r?.status === 200) {
      this.stats.renewals++;
      t.expiresAt = this.now() + t.lifetimeMs;
      return t.value;
    }
    return this.login();
  }

  /** An authenticated call; a 401 (token revoked or expired early) logs in again and retries once. */
  async call(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Reply> {
    this.stats.calls++;
    const r = await this.raw(method, path, body, await this.validToken());
    if (r.status !== 401) return r;
    this.token = undefined;
    return this.raw(method, path, body, await this.login());
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}
