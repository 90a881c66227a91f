/**
 * Client filters fail closed (both transports): a virtual-service change HAProxy refuses leaves
 * the frontend it had serving, and where that frontend lets in clients the refused change would
 * keep out (a filter added or narrowed), it is taken down instead; its failure says so, with
 * HAProxy's reason. A shared frontend is first narrowed to the tenant whose routes break it
 * (tenant-narrowing.ts), so only that tenant's routes stop being served. The next pass tries the
 * change again, and it is served once HAProxy takes it.
 */
import type { ApplyResult } from '../../src/adapter/contract.ts';
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import { narrowToTenants } from './tenant-narrowing.ts';
import { clientFilterWidens } from '../../src/model/client-filter.ts';
import type { VirtualService } from '../../src/model/types.ts';

/** The deletes of the live frontends whose change failed and that serve more clients than asked. */
export function widerThanAsked(
  results: readonly ApplyResult[],
  live: (name: string) => VirtualService | undefined,
): Change[] {
  const out: Change[] = [];
  for (const r of results) {
    const c = r.change;
    if (r.ok || c.kind !== 'virtualService' || c.op === 'delete') continue;
    const now = live(c.name);
    if (now && clientFilterWidens(now, c.desired))
      out.push({ op: 'delete', kind: 'virtualService', name: c.name, observed: now });
  }
  return out;
}

/**
 * The results, with each failed change whose frontend was taken down saying so (`down`: whether
 * the delete went through; where it did not, the wider filter may still serve, and that is said).
 */
export function markTakenDown(results: ApplyResult[], downs: ReadonlyMap<string, boolean>): ApplyResult[] {
  return results.map((r) => {
    const down = downs.get(r.change.name);
    if (r.ok || down === undefined || r.change.kind !== 'virtualService' || !r.error) return r;
    const note = down
      ? 'its frontend is not served until HAProxy takes the change (its last client filter was wider)'
      : 'its frontend with a wider client filter could not be taken down';
    return { ...r, error: { ...r.error, message: `${r.error.message}; ${note}` } };
  });
}

/**
 * `apply` on the batch; then, where a refused change leaves a wider client filter serving (`live`:
 * the frontend as the device has it), that frontend taken down by a second `apply`, and said.
 * One per adapter: it remembers what it took down, so that the next change of such a frontend
 * (an update, as the controller still has the refused one's predecessor observed) creates it
 * again at once instead of failing NotFound until the controller re-reads the device.
 */
export class FailClosed {
  private readonly down = new Set<string>();

  async apply(
    changes: Change[],
    apply: (changes: Change[]) => Promise<ApplyResult[]>,
    live: (name: string) => VirtualService | undefined,
  ): Promise<ApplyResult[]> {
    const sent = changes.map((c): Change =>
      c.kind === 'virtualService' && c.op === 'update' && this.down.has(c.name) && !live(c.name)
        ? { op: 'create', kind: c.kind, name: c.name, desired: c.desired }
        : c,
    );
    const raw = await apply(sent);
    // Results carry the change as the caller sent it.
    const mapped = raw.map((r, i) => (sent[i] === changes[i] ? r : { ...r, change: changes[i]! }));
    // A shared frontend refused for one tenant's routes serves the others' (tenant-narrowing.ts).
    const results = await narrowToTenants(mapped, apply, live);
    for (const c of changes) if (c.op === 'delete' || live(c.name)) this.down.delete(c.name);
    const downs = widerThanAsked(results, live);
    if (downs.length === 0) return results;
    const done = await apply(downs);
    for (const d of done) if (d.ok) this.down.add(d.change.name);
    return markTakenDown(results, new Map(done.map((d) => [d.change.name, d.ok])));
  }
}
