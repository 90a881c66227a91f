/**
 * Status lists several controllers share (a route's `parents`, a policy's `ancestors`): the entries
 * of other controllers kept as they are, ours as a pass computed them, each condition's transition
 * time kept where its status stayed (entries matched by their reference). Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Condition } from '../kube/gateway-objects.ts';
import { type ConditionSpec, conditions } from '../source/gateway/conditions.ts';

/** Deep equality of what is written (undefined fields dropped, as JSON has them). */
export const same = (a: unknown, b: unknown): boolean =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

type Entry<K extends string> = { controllerName: string; conditions: Condition[] } & Record<K, unknown>;

export function statusEntries<K extends 'parentRef' | 'ancestorRef'>(
  field: K,
  before: readonly Entry<K>[],
  ours: readonly ({ conditions: readonly ConditionSpec[] } & Record<K, unknown>)[],
  o: { controllerName: string; generation: number; at: string },
): Entry<K>[] {
  const theirs = before.filter((b) => b.controllerName !== o.controllerName);
  const mine = ours.map((e) => {
    const old = before.find((b) => b.controllerName === o.controllerName && same(b[field], e[field]));
    return {
      [field]: e[field],
      controllerName: o.controllerName,
      conditions: conditions(e.conditions, o.generation, old?.conditions ?? [], o.at),
    } as Entry<K>;
  });
  return [...theirs, ...mine];
}
