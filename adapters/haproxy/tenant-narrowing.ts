/**
 * A shared frontend refused for one tenant's sake is narrowed to that tenant (both transports):
 * when HAProxy refuses an HTTP frontend whose routes come from several sources (the Ingresses of
 * one IngressClass), the sources are bisected with real applies, each accepted subset going live,
 * until the sources whose routes break it are found. Those routes are left out (not served: the
 * safe side for a client filter) and the failure names them; every other tenant's routes are
 * served meanwhile. k culprits among n sources cost O(k log n) applies, on the failure path only.
 */
import type { ApplyResult } from '../../src/adapter/contract.ts';
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import type { L7VirtualService, VirtualService } from '../../src/model/types.ts';
import { narrowRefused } from './narrow.ts';

/** Thrown inside the bisection when the device fails for another reason than the configuration. */
class Aborted extends Error {}

const sourcesOf = (v: L7VirtualService): string[] => [...new Set(v.routes.map((r) => r.source))];

/** The L7 frontend a failed result refused for its configuration, when it has several sources. */
function shared(r: ApplyResult): L7VirtualService | undefined {
  const c = r.change;
  if (r.ok || r.error?.code !== 'ConfigInvalid' || c.kind !== 'virtualService' || c.op === 'delete')
    return undefined;
  return c.desired.kind === 'l7' && sourcesOf(c.desired).length > 1 ? c.desired : undefined;
}

/**
 * The results, with each shared frontend HAProxy refused narrowed to the sources that break it
 * (see the module comment). `apply` applies changes on the device; `live` is the frontend as the
 * device has it now. A frontend whose every source fails, or whose device stops answering, keeps
 * its result as it was.
 */
export async function narrowToTenants(
  results: ApplyResult[],
  apply: (changes: Change[]) => Promise<ApplyResult[]>,
  live: (name: string) => VirtualService | undefined,
): Promise<ApplyResult[]> {
  const out = [...results];
  for (const [i, r] of results.entries()) {
    const vs = shared(r);
    if (!vs) continue;
    const sources = sourcesOf(vs);
    const reasons = new Map<string, string>();
    const tryWith = async (subset: string[]): Promise<boolean | string> => {
      const desired: L7VirtualService = { ...vs, routes: vs.routes.filter((x) => subset.includes(x.source)) };
      const now = live(vs.name);
      const change: Change = now
        ? { op: 'update', kind: 'virtualService', name: vs.name, desired, observed: now }
        : { op: 'create', kind: 'virtualService', name: vs.name, desired };
      const [res] = await apply([change]);
      if (res?.ok) return true;
      if (res?.error?.code !== 'ConfigInvalid') throw new Aborted(res?.error?.message ?? 'no result');
      return res.error.message;
    };
    let bad: string[];
    try {
      bad = await narrowRefused(sources, tryWith, reasons);
    } catch (err) {
      if (err instanceof Aborted) continue;
      throw err;
    }
    // Applied source by source, all of it went (the refusal came from another change of the batch).
    if (bad.length === 0) out[i] = { change: r.change, ok: true };
    if (bad.length === 0 || bad.length === sources.length) continue;
    const why = bad.map((s) => reasons.get(s)).find(Boolean) ?? r.error!.message;
    out[i] = {
      ...r,
      error: {
        code: 'ConfigInvalid',
        message: `${vs.name}: HAProxy refuses the routes of ${bad.join(', ')}, which are not served; the routes of the other ${sources.length - bad.length} source(s) are (${why.slice(0, 400)})`,
        terminal: true,
        sources: bad,
      },
    };
  }
  return out;
}
