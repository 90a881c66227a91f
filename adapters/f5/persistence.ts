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

/** The persist action of a rule's requests (none: `disable` where the service persists elsewhere). */
export function persistActions(kind: PersistenceType | undefined, cookie: string, any: boolean): Json[] {
  if (kind === 'Cookie')
    return [
      { type: 'persist', event: 'request', cookieInsert: { name: persistenceCookie(cookie), expiry: '1d' } },
    ];
  if (kind === 'SourceIP')
    return [
      { type: 'persist', event: 'request', sourceAddress: { netmask: '255.255.255.255', timeout: 1800 } },
    ];
  return any ? [{ type: 'persist', event: 'request', disable: {} }] : [];
}
