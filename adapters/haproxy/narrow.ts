/**
 * Narrowing a batch that HAProxy refuses to the changes that break it, so one bad object is
 * reported and the rest go live: candidates are validated before a reload (new binds are tried,
 * the whole file is checked with `haproxy -c`), and a refused file is bisected with `haproxy -c`
 * alone (no reload) until the culprits are found.
 */
import { createServer } from 'node:net';
import type { VirtualService } from '../../src/model/types.ts';
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import type { Fail } from './validate.ts';

/**
 * The items that cannot be added, given `accepts(subset)` that says whether the known-good base
 * plus `subset` is acceptable. Bisects: a half that passes is kept, one that fails is split again;
 * k culprits among n items cost O(k log n) checks. Order is kept.
 */
export async function narrowRefused<T>(
  items: T[],
  accepts: (subset: T[]) => Promise<boolean | string>,
  /** Filled with each culprit's reason, where `accepts` gave one (a string is a refusal's reason). */
  reasons?: Map<T, string>,
): Promise<T[]> {
  const accepted: T[] = [];
  const walk = async (part: T[]): Promise<T[]> => {
    if (part.length === 0) return [];
    const verdict = await accepts([...accepted, ...part]);
    if (verdict === true) {
      accepted.push(...part);
      return [];
    }
    if (part.length === 1) {
      if (typeof verdict === 'string') reasons?.set(part[0]!, verdict);
      return part;
    }
    const mid = Math.ceil(part.length / 2);
    const bad = await walk(part.slice(0, mid));
    return [...bad, ...(await walk(part.slice(mid)))];
  };
  return walk(items);
}

/**
 * Whether this host can listen on address:port, which a HAProxy reload needs for a new bind (a
 * VIP that is not on this host fails the reload, and with it every other change): the error code
 * when it cannot (EADDRNOTAVAIL, EADDRINUSE, EACCES), undefined when it can.
 */
export function bindError(address: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host: address, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/**
 * The changes of a batch whose new bind (a VIP:port no current frontend has) this host cannot
 * listen on: a reload with them would fail, and every other change with it.
 */
export async function unbindableChanges(
  changes: Change[],
  failed: ReadonlyMap<number, Fail>,
  current: VirtualService[],
): Promise<Map<number, Fail>> {
  const out = new Map<number, Fail>();
  const bound = new Set(current.map((v) => `${v.vip}|${v.port}`));
  for (const [i, c] of changes.entries()) {
    if (failed.has(i) || c.kind !== 'virtualService' || c.op === 'delete') continue;
    const v = c.desired;
    if (bound.has(`${v.vip}|${v.port}`)) continue;
    const err = await bindError(v.vip, v.port);
    if (err === 'EADDRNOTAVAIL' || err === 'EACCES') {
      out.set(i, {
        code: 'BindFailed',
        message: `${c.name}: HAProxy cannot listen on ${v.vip}:${v.port} (${err}): the VIP is not on this host`,
        terminal: true,
      });
    }
  }
  return out;
}

/**
 * The changes of a batch the configuration check refuses: `accepts(skip)` checks the batch with
 * the changes in `skip` left out. Each culprit fails terminally with ConfigInvalid.
 */
export async function refusedChanges(
  changes: Change[],
  failed: ReadonlyMap<number, Fail>,
  accepts: (skip: Map<number, Fail>) => Promise<boolean | string>,
): Promise<Map<number, Fail>> {
  const live = [...changes.keys()].filter((i) => !failed.has(i));
  const left: Fail = { code: 'Skipped', message: 'left out of this check', terminal: true };
  const reasons = new Map<number, string>();
  const bad = await narrowRefused(
    live,
    (subset) => {
      const skip = new Map(failed);
      for (const i of live) if (!subset.includes(i)) skip.set(i, left);
      return accepts(skip);
    },
    reasons,
  );
  return new Map(
    bad.map((i) => [
      i,
      {
        code: 'ConfigInvalid',
        // HAProxy's own reason, where its check gave one.
        message: `${changes[i]!.name}: HAProxy refuses the configuration with this change (${(reasons.get(i) ?? 'haproxy -c').slice(0, 500)})`,
        terminal: true,
      },
    ]),
  );
}
