/**
 * Persistence as BIG-IP holds it, read back per pool from the virtual servers that use it (AS3
 * keeps persistence there, persistence.ts): an L4 service's `persistenceMethods`, an HTTP
 * service's `persist` action beside each rule's forward to a pool. A pool no service of ours uses
 * has no device field for it (its metadata says what it asked). Pure.
 */
import type { PersistenceType } from '../../src/model/types.ts';

type Json = Record<string, unknown>;

/** What the device says of one pool: a persistence, `none`, or `mixed` (its services disagree). */
export type DevicePersistence = PersistenceType | 'none' | 'mixed';

const L4_SERVICES = new Set(['Service_TCP', 'Service_UDP', 'Service_L4']);

function actionPersistence(actions: Json[]): PersistenceType | 'none' {
  const p = actions.find((a) => a.type === 'persist');
  if (p?.cookieInsert) return 'Cookie';
  if (p?.sourceAddress) return 'SourceIP';
  return 'none';
}

/**
 * Each pool's persistence on the device, from the objects of one application (`usedPool` reads a
 * pool pointer, declaration.ts; `isSplit` tells a weighted rule's own pool, which is no model pool).
 */
export function persistenceOnDevice(
  app: Json,
  usedPool: (p: unknown) => string | undefined,
): Map<string, DevicePersistence> {
  const out = new Map<string, DevicePersistence>();
  const note = (pool: string | undefined, p: PersistenceType | 'none') => {
    if (!pool) return;
    const was = out.get(pool);
    out.set(pool, was === undefined || was === p ? p : 'mixed');
  };
  for (const raw of Object.values(app)) {
    const o = raw as Json | null;
    if (!o || typeof o !== 'object') continue;
    if (L4_SERVICES.has(String(o.class))) {
      const methods = Array.isArray(o.persistenceMethods) ? (o.persistenceMethods as unknown[]) : undefined;
      // AS3's default (absent) is source-address: absent reads as such, as BIG-IP would run it.
      note(usedPool(o.pool), !methods || methods.includes('source-address') ? 'SourceIP' : 'none');
    } else if (o.class === 'Endpoint_Policy' && Array.isArray(o.rules)) {
      for (const rule of o.rules as Json[]) {
        const actions = Array.isArray(rule.actions) ? (rule.actions as Json[]) : [];
        const forward = actions.find((a) => a.type === 'forward') as
          { select?: { pool?: unknown } } | undefined;
        if (!forward) continue;
        note(usedPool(forward.select?.pool), actionPersistence(actions));
      }
    }
  }
  return out;
}
