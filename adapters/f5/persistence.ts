/**
 * Persistence on BIG-IP, where AS3 keeps it on the virtual server: an L4 service's from its pools,
 * an HTTP service's per rule of its endpoint policy (`persist` actions), and what cannot be said
 * at once (pools of one rule or service asking differently). Pure.
 */
import { persistenceCookie } from '../../src/model/persistence.ts';
import type {
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  PersistenceType,
  Pool,
  SessionCookie,
} from '../../src/model/types.ts';

type Json = Record<string, unknown>;

/**
 * The persistence of an L4 virtual service: its pools' (AS3 keeps it on the virtual server, for
 * every pool behind it), `mixed` when they do not agree (TLS passthrough to pools of several
 * policies: refused before sending, adapter.ts). Cookie is an HTTP pool's only.
 */
export function l4Persistence(
  vs: L4VirtualService,
  pools: ReadonlyMap<string, Pool>,
): 'SourceIP' | undefined | 'mixed' {
  const asked = new Set(
    [vs.pool, ...(vs.sni ?? []).map((r) => r.pool)]
      .filter(Boolean)
      .map((p) => (pools.get(p)?.persistence === 'SourceIP' ? 'SourceIP' : undefined)),
  );
  if (asked.size > 1) return 'mixed';
  return asked.has('SourceIP') ? 'SourceIP' : undefined;
}

/**
 * The persistence of the requests a route sends to its pools: the pool's; a weighted split's when
 * every pool of it asks the same (the cookie then named after the split); `mixed` when they do not
 * (refused before sending, persistenceProblem).
 */
export function routePersistence(
  r: HttpRoute,
  pools: ReadonlyMap<string, Pool>,
): PersistenceType | undefined | 'mixed' {
  const targets = r.backends ? r.backends.filter((b) => b.pool).map((b) => b.pool!) : r.pool ? [r.pool] : [];
  const asked = new Set(targets.map((p) => pools.get(p)?.persistence));
  if (asked.size > 1) return 'mixed';
  return [...asked][0];
}

/** Why a virtual service's persistence cannot be declared (pools of one rule asking differently). */
export function persistenceProblem(
  vs: L7VirtualService,
  pools: ReadonlyMap<string, Pool>,
): string | undefined {
  const r = vs.routes.find((x) => routePersistence(x, pools) === 'mixed');
  return r
    ? `a weighted rule of ${vs.name} (${r.source}) splits over pools that ask different persistence; BIG-IP keeps one per request`
    : undefined;
}

/** The expiry of a pool's own cookie (a BackendPolicy's Cookie persistence): a day. */
export const POOL_COOKIE_EXPIRY = '1d';

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * A route session's cookie expiry in AS3's `[Nd][HH:MM[:SS]]`, always with its time part (a whole
 * day is `1d00:00:00`): so it is never the pool's own `1d`, and each reads back as it was asked.
 */
export function cookieExpiry(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds <= 0) throw new Error(`not a lifetime: ${seconds}`);
  const days = Math.floor(seconds / 86_400);
  const rest = seconds % 86_400;
  const time = `${pad(Math.floor(rest / 3600))}:${pad(Math.floor((rest % 3600) / 60))}:${pad(rest % 60)}`;
  return `${days > 0 ? `${days}d` : ''}${time}`;
}

/** An expiry of `[Nd][HH:MM[:SS]]` in seconds; undefined for anything else. */
export function expirySeconds(text: unknown): number | undefined {
  const m =
    typeof text === 'string' ? /^(?:(\d{1,5})d)?(?:(\d{1,2}):(\d{2})(?::(\d{2}))?)?$/.exec(text) : null;
  if (!m || text === '') return undefined;
  const [d = '0', h = '0', min = '0', s = '0'] = m.slice(1).map((x) => x ?? '0');
  if (Number(min) > 59 || Number(s) > 59) return undefined;
  return Number(d) * 86_400 + Number(h) * 3600 + Number(min) * 60 + Number(s);
}

/**
 * The persist action of a rule's requests (none: `disable` where the service persists elsewhere).
 * A route's session cookie (`session`, Pool.sessionCookie) is inserted as the rule named it, with
 * its lifetime as the expiry (BIG-IP's policy cookie always carries one: Permanent only).
 */
export function persistActions(
  kind: PersistenceType | undefined,
  cookie: string,
  any: boolean,
  session?: SessionCookie,
): Json[] {
  if (kind === 'Cookie' && session) {
    if (!session.permanent || !session.absoluteSeconds)
      throw new Error(`a session cookie without an expiry cannot be said on BIG-IP (${cookie})`);
    const name = session.name ?? persistenceCookie(cookie);
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(name)) throw new Error(`not a cookie name: ${name.slice(0, 64)}`);
    return [
      {
        type: 'persist',
        event: 'request',
        cookieInsert: { name, expiry: cookieExpiry(session.absoluteSeconds) },
      },
    ];
  }
  if (kind === 'Cookie')
    return [
      {
        type: 'persist',
        event: 'request',
        cookieInsert: { name: persistenceCookie(cookie), expiry: POOL_COOKIE_EXPIRY },
      },
    ];
  if (kind === 'SourceIP')
    return [
      { type: 'persist', event: 'request', sourceAddress: { netmask: '255.255.255.255', timeout: 1800 } },
    ];
  return any ? [{ type: 'persist', event: 'request', disable: {} }] : [];
}

/**
 * A route's session cookie as a pool's metadata says it (`<name or ->,<seconds>`): read back only
 * for a pool no HTTP service forwards to by itself (a weighted rule's variant), whose services'
 * policies do not name it.
 */
export const storeSession = (c: SessionCookie): string => `${c.name ?? '-'},${c.absoluteSeconds ?? 0}`;

export function storedSession(text: string | undefined): { sessionCookie?: SessionCookie } {
  const m = text === undefined ? null : /^([A-Za-z0-9._-]{1,128}|-),(\d{1,9})$/.exec(text);
  if (!m || Number(m[2]) <= 0) return {};
  return {
    sessionCookie: {
      ...(m[1] !== '-' ? { name: m[1]! } : {}),
      absoluteSeconds: Number(m[2]),
      permanent: true,
    },
  };
}
