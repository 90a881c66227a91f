/**
 * Narrowing a Data Plane commit that HAProxy refused (its check of the whole file failed) to the
 * changes that break it: the batch is bisected into transactions of their own, so every other
 * tenant's change goes live and the culprit alone fails (ConfigInvalid, on its object).
 */
import type { CoreChange as Change } from '../../../src/adapter/changes.ts';
import type { Fail } from '../validate.ts';

/** How one transaction ended: committed, its commit refused by HAProxy's check, or failed outright. */
export type TxOutcome = { kind: 'ok' } | { kind: 'refused'; message: string } | { kind: 'fail'; error: Fail };

/**
 * A commit HAProxy refused (its configuration check failed on the whole batch): the batch is
 * bisected into transactions of their own, each half that commits is live, and each change
 * that still fails alone is the culprit (ConfigInvalid, on its object). k culprits among n
 * changes cost O(k log n) transactions; every other tenant's change goes live meanwhile.
 * Returns an error for the changes not yet decided when the device stops answering.
 */
export async function narrowRefusedCommit(
  changes: Change[],
  failed: Map<number, Fail>,
  firstMessage: string,
  transact: (changes: Change[], failed: Map<number, Fail>) => Promise<TxOutcome>,
): Promise<Fail | undefined> {
  const left: Fail = { code: 'Skipped', message: 'left out of this transaction', terminal: false };
  const live = [...changes.keys()].filter((i) => !failed.has(i));
  const done = new Set<number>();
  const attempt = async (part: number[]): Promise<TxOutcome> => {
    const skip = new Map(failed);
    for (const i of live) if (done.has(i) || !part.includes(i)) skip.set(i, left);
    const out = await transact(changes, skip);
    // A change refused on its own, or whose pool failed, is decided; one left out is not.
    for (const [i, f] of skip)
      if (f !== left && !failed.has(i) && f.code !== 'DependencyFailed') failed.set(i, f);
    if (out.kind === 'ok') for (const i of part) if (!failed.has(i)) done.add(i);
    return out;
  };
  let lastMessage = firstMessage;
  const walk = async (part: number[]): Promise<Fail | undefined> => {
    const open = part.filter((i) => !done.has(i) && !failed.has(i));
    if (open.length === 0) return undefined;
    const out = await attempt(open);
    if (out.kind === 'fail') return out.error;
    if (out.kind === 'ok') return undefined;
    lastMessage = out.message;
    if (open.length === 1) {
      failed.set(open[0]!, {
        code: 'ConfigInvalid',
        message: `${changes[open[0]!]!.name}: HAProxy refuses the configuration with this change (${lastMessage.slice(0, 300)})`,
        terminal: true,
      });
      return undefined;
    }
    const mid = Math.ceil(open.length / 2);
    return (await walk(open.slice(0, mid))) ?? (await walk(open.slice(mid)));
  };
  const error = await walk(live);
  if (error) return error;
  // What waited for a pool that was left out of its half: once more, with everything decided.
  const pending = live.filter((i) => !done.has(i) && !failed.has(i));
  if (pending.length > 0) {
    const out = await attempt(pending);
    if (out.kind === 'fail') return out.error;
    if (out.kind === 'refused')
      for (const i of pending)
        if (!done.has(i) && !failed.has(i))
          failed.set(i, {
            code: 'ConfigInvalid',
            message: `${changes[i]!.name}: ${out.message}`,
            terminal: true,
          });
  }
  for (const i of live)
    if (!done.has(i) && !failed.has(i))
      failed.set(i, {
        code: 'DependencyFailed',
        message: 'a change it depends on was refused',
        terminal: false,
      });
  return undefined;
}
