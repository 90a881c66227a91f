/**
 * BIG-IP iControl REST client: token authentication (`/mgmt/shared/authn/login`), renewal before
 * the token expires (`PATCH /mgmt/shared/authz/tokens/<token>`), a fresh login when renewal fails
 * or a call answers 401, and JSON calls with zod-checked bodies. The dispatcher is injected.
 */
import type { Dispatcher } from 'undici';
import { DeviceHttp } from '../../src/adapter/device-http.ts';
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
  private readonly http: DeviceHttp;
  private readonly now: () => number;
  /** Counts for tests and benchmarks. */
  readonly stats = { logins: 0, renewals: 0, calls: 0 };

  constructor(private readonly opts: BigIpClientOptions) {
    this.http = new DeviceHttp({
      url: opts.url,
      insecureSkipVerify: opts.insecureSkipVerify,
      ca: opts.ca,
      dispatcher: opts.dispatcher,
      timeoutMs: opts.timeoutMs ?? 60_000,
      unreachable: (message, cause) => new F5Error('Unavailable', message, { cause }),
    });
    this.now = opts.now ?? Date.now;
  }

  private async raw(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: unknown,
    token?: string,
  ): Promise<Reply> {
    const r = await this.http.send(
      method,
      path,
      body === undefined ? undefined : { json: body },
      token ? { 'x-f5-auth-token': token } : {},
    );
    return { status: r.status, body: r.body };
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

  close(): Promise<void> {
    return this.http.close();
  }
}
