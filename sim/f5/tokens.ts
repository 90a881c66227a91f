/**
 * The BIG-IP simulator's tokens: `POST /mgmt/shared/authn/login` gives one (1200 s by default),
 * `PATCH /mgmt/shared/authz/tokens/<token>` renews it (1 to 36000 s); an expired or unknown token
 * is refused.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../shared/server.ts';

type Json = Record<string, unknown>;

const send = (res: ServerResponse, status: number, body: unknown): void =>
  sendJson(res, status, body, 'application/json; charset=UTF-8');

export class SimTokens {
  private readonly tokens = new Map<string, { user: string; expiresAt: number; lifetimeSec: number }>();

  constructor(
    private readonly opts: { users?: Record<string, string>; tokenLifetimeSec?: number },
    private readonly now: () => number,
    private readonly onLogin: () => void,
  ) {}

  valid(token: string): boolean {
    const t = this.tokens.get(token);
    return t !== undefined && this.now() < t.expiresAt;
  }

  clear(): void {
    this.tokens.clear();
  }

  login(body: Json, res: ServerResponse): void {
    const users = this.opts.users ?? { admin: 'admin' };
    const user = String(body.username ?? '');
    if (users[user] === undefined || users[user] !== body.password) {
      return send(res, 401, { code: 401, message: 'Authentication failed.' });
    }
    this.onLogin();
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

  renew(token: string, body: Json, res: ServerResponse): void {
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
}
