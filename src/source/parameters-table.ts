/**
 * Class parameters resolved once per pass (issue 50, item 5): every source asks the same table
 * (the VIP ranges of a requester, the placement of its virtual services), and a reference is
 * resolved the first time it is asked, by what it names and where it is named from, then read.
 * Pure: a table lives for one pass, over one view.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { type ParametersRef, type Resolved, resolveParameters } from './gateway/parameters.ts';
import type { ClusterView } from './view.ts';

export type ParametersOf = (
  ref: ParametersRef | undefined,
  at: { field: string; namespace: string | undefined },
) => Resolved;

export function parametersTable(
  view: ClusterView,
  cfg: ControllerConfig,
  lb: Parameters<typeof resolveParameters>[3],
): ParametersOf {
  const objects = view.loadBalancerParameters ?? [];
  const seen = new Map<string, Resolved>();
  return (ref, at) => {
    const k = JSON.stringify([ref?.group, ref?.kind, ref?.name, ref?.namespace, at.field, at.namespace]);
    let r = seen.get(k);
    if (!r) {
      r = resolveParameters(ref, at, objects, lb, cfg.vip.cidrs);
      seen.set(k, r);
    }
    return r;
  };
}
