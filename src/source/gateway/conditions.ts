/**
 * Status conditions as the Gateway API writes them: type, status, reason, message and the
 * generation they were computed for. lastTransitionTime is kept from the object's current
 * condition when the status did not change, so an unchanged status writes nothing. Pure.
 */
import type { Condition } from '../../kube/gateway-objects.ts';

export interface ConditionSpec {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

export const cond = (type: string, status: boolean, reason: string, message = ''): ConditionSpec => ({
  type,
  status,
  reason,
  message,
});

/** Conditions ready to write: the old transition time kept where the status stayed the same. */
export function conditions(
  specs: readonly ConditionSpec[],
  generation: number,
  current: readonly Condition[],
  now: string,
): Condition[] {
  return specs.map((s) => {
    const status = s.status ? 'True' : 'False';
    const before = current.find((c) => c.type === s.type);
    return {
      type: s.type,
      status,
      reason: s.reason,
      message: s.message,
      observedGeneration: generation,
      lastTransitionTime:
        before?.status === status && before.lastTransitionTime ? before.lastTransitionTime : now,
    };
  });
}
