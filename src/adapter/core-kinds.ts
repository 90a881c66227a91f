/**
 * For adapters that hold pools and virtual services only (no certificates yet): the core never
 * sends them a certificate (their capabilities say `certificates: false`), and should one arrive
 * anyway it is answered `Unsupported` (terminal) while the other changes apply, in their order.
 */
import type { Change, CoreChange } from './changes.ts';
import type { ApplyResult } from './contract.ts';

export async function applyCoreKinds(
  changes: Change[],
  apply: (core: CoreChange[]) => Promise<ApplyResult[]>,
): Promise<ApplyResult[]> {
  const core = changes.filter((c): c is CoreChange => c.kind !== 'certificate');
  if (core.length === changes.length) return apply(core);
  const applied = core.length > 0 ? await apply(core) : [];
  const byChange = new Map<Change, ApplyResult>(applied.map((r) => [r.change, r]));
  return changes.map(
    (change) =>
      byChange.get(change) ?? {
        change,
        ok: false,
        error: {
          code: 'Unsupported',
          message: `${change.kind} ${change.name}: this load balancer does not hold certificates`,
          terminal: true,
        },
      },
  );
}
