/**
 * One canonical form for model objects, so two states with the same meaning compare equal whatever
 * order their lists came in: members by address and port, routes by host, path and type.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Certificate, HttpRoute, Member, Pool, VirtualService } from './types.ts';

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

const memberKey = (m: Member): string => `${m.address}|${String(m.port).padStart(5, '0')}`;
/** Precedence first (Gateway API routes carry it), then host, path and type; the whole route breaks ties. */
const routeKey = (r: HttpRoute): string =>
  `${String(r.order ?? 0).padStart(10, '0')}|${r.host}|${r.path}|${r.pathType}|${JSON.stringify(r)}`;

/**
 * Normal forms are remembered per object (objects are treated as immutable once built), and a
 * normal form is its own normal form: unchanged objects normalise, and compare, by reference.
 */
const normalized = new WeakMap<object, object>();

function remember<T extends object>(x: T, make: (x: T) => T): T {
  const hit = normalized.get(x) as T | undefined;
  if (hit) return hit;
  const n = make(x);
  normalized.set(x, n);
  normalized.set(n, n);
  return n;
}

export function normalizePool(p: Pool): Pool {
  return remember(p, (x) => ({
    ...x,
    members: [...x.members].sort((a, b) => cmp(memberKey(a), memberKey(b))),
  }));
}

export function normalizeVirtualService(vs: VirtualService): VirtualService {
  if (vs.kind === 'l4') {
    if (!vs.sni) return vs;
    return remember(vs, (x) =>
      x.kind === 'l4' && x.sni ? { ...x, sni: [...x.sni].sort((a, b) => cmp(a.host, b.host)) } : x,
    );
  }
  return remember(vs, (x) =>
    x.kind === 'l7' ? { ...x, routes: [...x.routes].sort((a, b) => cmp(routeKey(a), routeKey(b))) } : x,
  );
}

/** A certificate has no lists to order; its SNI names are sorted by the source. */
export const normalizeCertificate = (c: Certificate): Certificate => c;

export const KEY_DIGEST = 'sha256:';

/**
 * What a device that never gives a private key back (most of the vendors' APIs)
 * reports as `keyPem`: the key's digest. A key and its digest compare equal (sameCertificate).
 */
export const keyDigest = (keyPem: string): string =>
  keyPem.startsWith(KEY_DIGEST)
    ? keyPem
    : `${KEY_DIGEST}${createHash('sha256').update(keyPem).digest('hex')}`;

/** Whether two certificates are the same, one of them perhaps read back with its key's digest. */
export function sameCertificate(a: Certificate, b: Certificate): boolean {
  if (a.keyPem === b.keyPem) return isDeepStrictEqual(a, b);
  return isDeepStrictEqual({ ...a, keyPem: keyDigest(a.keyPem) }, { ...b, keyPem: keyDigest(b.keyPem) });
}
