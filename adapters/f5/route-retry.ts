/**
 * A route's retries on BIG-IP (Pool.retryStatuses: an HTTPRoute rule's `retry`, on the pool
 * variant of its own that the rule sends to). AS3 has no pool field for retrying on a status, so
 * each HTTP virtual server sending to such a pool carries an iRule that, once a member has
 * answered, looks up the pool it answered from (`LB::server pool`: the rule's pool, or a weighted
 * rule's pool of all its backends' members) and, on one of the statuses the rule names and while
 * attempts are left, sends the request again (`HTTP::retry`), which BIG-IP balances anew. A failed
 * connection is the pool's own `reselectTries` (Pool.retries), as for any pool.
 *
 * Only a request without a body is sent again: `HTTP::request` is the request's head, and a body
 * would have to be held whole first. The count restarts with each answer passed to the client
 * (never in HTTP_REQUEST, so it holds whether or not a retried request raises that event again).
 *
 * Read back from the device, never from our notes: each pool's statuses and attempts from the
 * arms of the iRule of the services that use it (`retriesOnDevice`); a rule taken off, an arm
 * edited by hand or services that disagree make the pool drifted, and the next pass writes the
 * pool and, from it, the rule again. Pure.
 */
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { listsIRule, tclPath } from './as3-text.ts';
import type { TlsPaths } from './pool-tls.ts';

type Json = Record<string, unknown>;

/** The iRule of a virtual server's route retries. */
export const retryRuleName = (vs: string): string => `${vs}_retry`;

/** Attempts after the first where a rule names none (HAProxy's `retries 3` of our defaults). */
export const DEFAULT_RETRY_ATTEMPTS = 3;

/** What one pool's arm of the rule says: the statuses sent again and the attempts after the first. */
export interface RetryArm {
  statuses: number[];
  attempts: number;
}

const armOf = (p: Pool): RetryArm | undefined =>
  p.retryStatuses
    ? { statuses: [...p.retryStatuses].sort((a, b) => a - b), attempts: p.retries ?? DEFAULT_RETRY_ATTEMPTS }
    : undefined;

const armKey = (a: RetryArm): string => `${a.attempts}:${a.statuses.join(' ')}`;

const armBody = (a: RetryArm): string => {
  for (const s of a.statuses)
    if (!Number.isInteger(s) || s < 100 || s > 599) throw new Error(`not a status: ${s}`);
  if (!Number.isInteger(a.attempts) || a.attempts < 0) throw new Error(`not a count: ${a.attempts}`);
  return `{ set npl_retry_max ${a.attempts}; set npl_retry_codes {${a.statuses.join(' ')}} }`;
};

/** The rule's lines before its arms: the count, the request kept (without a body), the pool's arm. */
const HEAD = [
  'when CLIENT_ACCEPTED {',
  '  set npl_retry_n 0',
  '}',
  'when HTTP_REQUEST {',
  '  if { [HTTP::header exists Transfer-Encoding] || ([HTTP::header exists Content-Length] && [HTTP::header Content-Length] ne "0") } {',
  '    set npl_retry_req ""',
  '  } else {',
  '    set npl_retry_req [HTTP::request]',
  '  }',
  '}',
  'when HTTP_RESPONSE {',
  '  set npl_retry_max 0',
  '  switch -- [LB::server pool] {',
];
/** After the arms: a listed status while attempts are left is sent again; else the count restarts. */
const TAIL = [
  '  }',
  '  if { $npl_retry_req ne "" && $npl_retry_n < $npl_retry_max && [lsearch -exact $npl_retry_codes [HTTP::status]] >= 0 } {',
  '    incr npl_retry_n',
  '    HTTP::retry $npl_retry_req',
  '  } else {',
  '    set npl_retry_n 0',
  '  }',
  '}',
];

/**
 * The retry iRule of a virtual server, or none when no pool it sends to asks retries. `splits`:
 * the weighted rules' pools (by their name in the service's application) and the pools they draw
 * from (the backends of one rule: one rule's retry, so the first one's).
 */
export function retryRule(
  vs: VirtualService,
  pools: ReadonlyMap<string, Pool>,
  splits: ReadonlyMap<string, string[]>,
  paths: Pick<TlsPaths, 'pool' | 'own'>,
): string | undefined {
  const byArm = new Map<string, { arm: RetryArm; targets: string[] }>();
  const add = (pool: string | undefined, path: string) => {
    const p = pool === undefined ? undefined : pools.get(pool);
    const arm = p && armOf(p);
    if (!arm) return;
    const k = armKey(arm);
    const entry = byArm.get(k) ?? { arm, targets: [] };
    entry.targets.push(tclPath(path));
    byArm.set(k, entry);
  };
  for (const p of [...new Set(poolRefs(vs))].sort()) add(p, paths.pool(p));
  for (const [split, from] of [...splits].sort(([a], [b]) => (a < b ? -1 : 1)))
    add(from[0], paths.own(split));
  if (byArm.size === 0) return undefined;
  const cases = [...byArm.values()].map(
    ({ arm, targets }) => `    ${targets.map((t) => `"${t}"`).join(' -\n    ')} ${armBody(arm)}`,
  );
  return [...HEAD, ...cases, ...TAIL].join('\n');
}

const ARM =
  /^ {4}"([^"\s]+)" (-|\{ set npl_retry_max (\d{1,5}); set npl_retry_codes \{((?:\d{3})(?: \d{3})*)?\} \})$/;

/**
 * The arms of a retry rule's text by the path each names; undefined when the text is not one
 * `retryRule` writes (edited by hand beyond its arms: the service's pools are then drifted).
 */
export function parseRetryRule(text: string): Map<string, RetryArm> | undefined {
  const lines = text.split('\n');
  const arms = lines.slice(HEAD.length, lines.length - TAIL.length);
  if (
    arms.length === 0 ||
    lines.slice(0, HEAD.length).join('\n') !== HEAD.join('\n') ||
    lines.slice(lines.length - TAIL.length).join('\n') !== TAIL.join('\n')
  )
    return undefined;
  const out = new Map<string, RetryArm>();
  let pending: string[] = [];
  for (const line of arms) {
    const m = ARM.exec(line);
    if (!m) return undefined;
    pending.push(m[1]!);
    if (m[2] === '-') continue;
    const arm = { attempts: Number(m[3]), statuses: m[4] ? m[4].split(' ').map(Number) : [] };
    for (const p of pending) out.set(p, arm);
    pending = [];
  }
  return pending.length > 0 ? undefined : out;
}

/** What the device says of one pool's route retries: its arm, `none`, or `mixed` (services disagree). */
export type DeviceRetry = RetryArm | 'none' | 'mixed';

/**
 * Each pool's route retries as the HTTP services that send to it hold them: the arm naming the
 * pool's path (or the path of a weighted rule's pool drawing from it) in each service's listed
 * retry rule; `none` where a service sends to it without one. `unreadable`: the services whose
 * rule is listed but is not one we write (their pools are then drifted).
 */
export function retriesOnDevice(
  services: readonly {
    vs: VirtualService;
    o: Json;
    app: Json;
    paths: Pick<TlsPaths, 'pool' | 'own'>;
    /** Its weighted rules' pools and the pools each draws from (asked only where a rule is listed). */
    splits: () => ReadonlyMap<string, string[]>;
  }[],
): { retries: Map<string, DeviceRetry>; unreadable: VirtualService[] } {
  const retries = new Map<string, DeviceRetry>();
  const unreadable: VirtualService[] = [];
  const note = (pool: string, r: RetryArm | 'none') => {
    const was = retries.get(pool);
    const same =
      was === undefined ||
      (was === 'none' && r === 'none') ||
      (was !== 'none' && was !== 'mixed' && r !== 'none' && armKey(was) === armKey(r));
    retries.set(pool, was === undefined ? r : same ? was : 'mixed');
  };
  for (const { vs, o, app, paths, splits } of services) {
    if (vs.kind !== 'l7') continue;
    const name = retryRuleName(vs.name);
    const text = (app[name] as Json | undefined)?.iRule;
    let arms = new Map<string, RetryArm>();
    if (listsIRule(o, name)) {
      const parsed = typeof text === 'string' ? parseRetryRule(text) : undefined;
      if (!parsed) {
        unreadable.push(vs);
        continue;
      }
      arms = parsed;
    }
    for (const p of new Set(poolRefs(vs))) note(p, arms.get(paths.pool(p)) ?? 'none');
    // Without a rule every pool it sends to (a weighted rule's among them) is `none` already.
    if (arms.size === 0) continue;
    for (const [split, from] of splits()) {
      const arm = arms.get(paths.own(split)) ?? 'none';
      for (const p of from) note(p, arm);
    }
  }
  return { retries, unreadable };
}

/**
 * Each pool's `retryStatuses` set from what the services that use it hold (a pool no HTTP service
 * uses keeps what its metadata says); the names of those the device disagrees with itself on:
 * services that differ, or attempts other than the pool's `reselectTries` would give.
 */
export function readRetries(pools: Pool[], onDevice: ReadonlyMap<string, DeviceRetry>): string[] {
  const drifted: string[] = [];
  for (const pool of pools) {
    const r = onDevice.get(pool.name);
    if (r === undefined) continue;
    if (r === 'mixed') drifted.push(pool.name);
    else if (r === 'none') delete pool.retryStatuses;
    else {
      pool.retryStatuses = r.statuses;
      if (r.attempts !== (pool.retries ?? DEFAULT_RETRY_ATTEMPTS)) drifted.push(pool.name);
    }
  }
  return drifted;
}

/** A pool's statuses as its metadata keeps them (`500,503`; '' for none), for a pool no service uses. */
export const storedRetryStatuses = (text: string | undefined): { retryStatuses?: number[] } => {
  if (text === undefined || !/^(\d{3}(,\d{3}){0,15})?$/.test(text)) return {};
  return { retryStatuses: text ? text.split(',').map(Number) : [] };
};
