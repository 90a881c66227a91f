/**
 * BIG-IP keeps an iRule's text under 64 KiB, and several of ours grow with what a virtual service
 * carries: the route retries' rule an arm line per retry pool (route-retry.ts), TLS to the members
 * a line per pool (pool-tls.ts), a TLS listener's SNI rule a line per hostname (tls-terminate.ts),
 * 421's a line per listener name (misdirected.ts). AS3 refuses a declaration with a larger one
 * whole, and with it every other service of the tenant. So a rendered rule at or past the limit is
 * refused here, by name, for its virtual service alone (or, when the service is not in the batch,
 * the changes of the pools it uses that made the rule grow), before anything is sent. Pure.
 */
import type { Change } from '../../src/adapter/changes.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { poolRefs } from '../../src/model/refs.ts';
import type { Outcome } from './batch-blame.ts';
import { isOurApp, ownedObjectNames } from './declaration.ts';

type Json = Record<string, unknown>;

/** The largest iRule text BIG-IP takes, in bytes (UTF-8): 64 KiB less one. */
export const F5_MAX_IRULE_BYTES = 65_535;

/** Our iRules in these tenants at or past the limit: tenant, application, name and size in bytes. */
export function oversizedRules(
  tenants: Iterable<readonly [string, Json]>,
  max = F5_MAX_IRULE_BYTES,
): { tenant: string; app: string; name: string; bytes: number }[] {
  const out: { tenant: string; app: string; name: string; bytes: number }[] = [];
  for (const [tenant, t] of tenants)
    for (const [app, a] of Object.entries(t)) {
      if ((a as Json | null)?.class !== 'Application' || !isOurApp(app)) continue;
      for (const [name, o] of Object.entries(a as Json)) {
        const text = (o as Json | null)?.iRule;
        if ((o as Json | null)?.class !== 'iRule' || typeof text !== 'string') continue;
        // UTF-8 takes at most 3 bytes per UTF-16 unit: a short text needs no count.
        if (text.length * 3 <= max) continue;
        const bytes = Buffer.byteLength(text, 'utf8');
        if (bytes > max) out.push({ tenant, app, name, bytes });
      }
    }
  return out;
}

/**
 * The changes to fail for each oversized rule of the tenants about to be sent: its virtual
 * service's change, else every open change of a pool the service uses (the batch made it grow).
 */
export function iRuleSizeProblems(
  tenants: Iterable<readonly [string, Json]>,
  changes: Change[],
  outcome: Map<number, Outcome>,
  owned: { vss: Map<string, VirtualService>; pools: Map<string, Pool> },
  max = F5_MAX_IRULE_BYTES,
): { index: number; message: string }[] {
  const large = oversizedRules(tenants, max);
  if (large.length === 0) return [];
  const ownerOf = new Map<string, VirtualService>();
  for (const vs of owned.vss.values()) for (const n of ownedObjectNames(vs)) ownerOf.set(n, vs);
  const open = (i: number) => !outcome.has(i) && changes[i]!.op !== 'delete';
  const out = new Map<number, string>();
  for (const r of large) {
    const vs = ownerOf.get(r.name);
    if (!vs) continue;
    const message =
      `iRule ${r.name} of ${vs.name} would be ${r.bytes} bytes; BIG-IP takes at most ${max} ` +
      '(it grows with the routes, pools and hostnames of one virtual server: split them over more listeners or Gateways)';
    const own = changes.findIndex((c, i) => open(i) && c.kind === 'virtualService' && c.name === vs.name);
    if (own >= 0) {
      out.set(own, message);
      continue;
    }
    const used = new Set(poolRefs(vs));
    changes.forEach((c, i) => {
      if (open(i) && c.kind === 'pool' && used.has(c.name) && !out.has(i))
        out.set(i, `with pool ${c.name}, ${message}`);
    });
  }
  return [...out].map(([index, message]) => ({ index, message }));
}
