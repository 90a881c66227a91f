/**
 * Persistence as BIG-IP holds it, read back per pool from the virtual servers that use it (AS3
 * keeps persistence there, persistence.ts): an L4 service's `persistenceMethods` (for its pool, its
 * passthrough policy's pools and its Terminate iRule's pools), an HTTP
 * service's `persist` action beside each rule's forward to a pool (a cookie's name and expiry: the
 * pool's own, or a route's session cookie). A pool no service of ours uses has no device field for
 * it (its metadata says what it asked). Pure.
 */
import { persistenceCookie } from '../../src/model/persistence.ts';
import type { Pool, SessionCookie } from '../../src/model/types.ts';
import { listsIRule } from './as3-text.ts';
import { expirySeconds, POOL_COOKIE_EXPIRY } from './persistence.ts';
import { sniRuleName } from './tls-terminate.ts';

type Json = Record<string, unknown>;

/** An inserted cookie as a rule's persist action says it. */
export interface DeviceCookie {
  cookie: string;
  expiry: string;
}

/**
 * What the device says of one pool: source address, a cookie (its name and expiry), `none`, or
 * `mixed` (its services disagree).
 */
export type DevicePersistence = 'SourceIP' | DeviceCookie | 'none' | 'mixed';

/** Whether two services say the same of a pool. */
export const samePersistence = (a: DevicePersistence, b: DevicePersistence): boolean =>
  a === b ||
  (typeof a === 'object' && typeof b === 'object' && a.cookie === b.cookie && a.expiry === b.expiry);

const L4_SERVICES = new Set(['Service_TCP', 'Service_UDP', 'Service_L4']);

function actionPersistence(actions: Json[]): 'SourceIP' | DeviceCookie | 'none' {
  const p = actions.find((a) => a.type === 'persist');
  const insert = p?.cookieInsert as Json | undefined;
  if (insert) return { cookie: String(insert.name), expiry: String(insert.expiry) };
  if (p?.sourceAddress) return 'SourceIP';
  return 'none';
}

/**
 * Each pool's persistence on the device, from the objects of one application (`usedPool` reads a
 * pool pointer, declaration.ts): an L4 service's for its pool and its TLS passthrough pools, an
 * HTTP rule's persist action for the pool it forwards to.
 */
export function persistenceOnDevice(
  app: Json,
  usedPool: (p: unknown) => string | undefined,
): Map<string, DevicePersistence> {
  const out = new Map<string, DevicePersistence>();
  const note = (pool: string | undefined, p: 'SourceIP' | DeviceCookie | 'none') => {
    if (!pool) return;
    const was = out.get(pool);
    out.set(pool, was === undefined || samePersistence(was, p) ? p : 'mixed');
  };
  const objects = Object.entries(app).filter((e): e is [string, Json] => !!e[1] && typeof e[1] === 'object');
  const forwards = (policy: Json, event: string) =>
    ((policy.rules as Json[] | undefined) ?? []).flatMap((rule) => {
      const actions = Array.isArray(rule.actions) ? (rule.actions as Json[]) : [];
      const f = actions.find((a) => a.type === 'forward' && a.event === event) as
        { select?: { pool?: unknown } } | undefined;
      return f ? [{ pool: usedPool(f.select?.pool), actions }] : [];
    });
  for (const [name, o] of objects) {
    if (L4_SERVICES.has(String(o.class))) {
      const methods = Array.isArray(o.persistenceMethods) ? (o.persistenceMethods as unknown[]) : undefined;
      // AS3's default (absent) is source-address: absent reads as such, as BIG-IP would run it.
      const p = !methods || methods.includes('source-address') ? 'SourceIP' : 'none';
      note(usedPool(o.pool), p);
      // A TLS passthrough service's pools (its SNI policy's forwards) persist as the service does.
      const sni =
        typeof o.policyEndpoint === 'string' ? (app[o.policyEndpoint] as Json | undefined) : undefined;
      if (sni?.class === 'Endpoint_Policy')
        for (const f of forwards(sni, 'ssl-client-hello')) note(f.pool, p);
      // One ending TLS: the pools its SNI iRule chooses (tls-terminate.ts), as the service does.
      for (const pool of sniRulePools(o, app, name)) note(usedPool(pool), p);
    } else if (o.class === 'Endpoint_Policy') {
      // An HTTP service's rules: each forward's persist action beside it.
      for (const f of forwards(o, 'request')) note(f.pool, actionPersistence(f.actions));
    }
  }
  return out;
}

/** The pools a terminating service's SNI iRule names (`pool <path>`), where it lists the rule. */
function sniRulePools(o: Json, app: Json, name: string): string[] {
  const rule = sniRuleName(name);
  const text = (app[rule] as Json | undefined)?.iRule;
  if (!listsIRule(o, rule) || typeof text !== 'string') return [];
  return [...text.matchAll(/\{ pool (\S+) \}/g)].map((m) => m[1]!);
}

/**
 * A pool's cookie read as the model says it: none for the pool's own (its name, a day), else a
 * route's session cookie (its name where it is not the pool's own, its expiry as the lifetime);
 * `unreadable` for an expiry that is not AS3's format.
 */
export function cookieSession(pool: string, c: DeviceCookie): SessionCookie | undefined | 'unreadable' {
  const own = persistenceCookie(pool);
  if (c.cookie === own && c.expiry === POOL_COOKIE_EXPIRY) return undefined;
  const seconds = expirySeconds(c.expiry);
  if (!seconds) return 'unreadable';
  return { ...(c.cookie !== own ? { name: c.cookie } : {}), absoluteSeconds: seconds, permanent: true };
}

/**
 * Each pool's persistence set from what the virtual servers that use it hold (a pool no service
 * uses keeps its metadata's); the names of those whose services disagree or whose cookie cannot be
 * read (changed by hand).
 */
export function readPersistence(pools: Pool[], persisted: ReadonlyMap<string, DevicePersistence>): string[] {
  const drifted: string[] = [];
  for (const pool of pools) {
    const p = persisted.get(pool.name);
    if (p === undefined) continue;
    if (p === 'mixed') {
      drifted.push(pool.name);
      continue;
    }
    if (p === 'none') delete pool.persistence;
    else pool.persistence = typeof p === 'object' ? 'Cookie' : p;
    const session = typeof p === 'object' ? cookieSession(pool.name, p) : undefined;
    if (session === 'unreadable') drifted.push(pool.name);
    else if (session) pool.sessionCookie = session;
    else delete pool.sessionCookie;
  }
  return drifted;
}
