/**
 * The upstream suite's ListenerSet assertions (conformance/utils/kubernetes/helpers.go, v1.6.1),
 * written again: GatewayMustHaveAttachedListeners, ListenerSetMustHaveCondition,
 * ListenerSetListenersMustHaveConditions, ListenerSetStatusMustHaveListeners and
 * RoutesAndParentMustBeAccepted for a ListenerSet parent. Polled until they hold, only conditions
 * of the object's latest generation counted, as upstream does.
 */
import type { Suite } from './suite.ts';
import {
  type Cond,
  conditionsMatch,
  GW,
  gatewayPath,
  listenersProblem,
  poll,
  type Ref,
  staleConditions,
} from './status.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const listenerSetPath = (r: Ref) => `/apis/${GW}/v1/namespaces/${r.namespace}/listenersets/${r.name}`;

/** Accepted, ResolvedRefs and Programmed, any reason (upstream's generateAcceptedListenerConditions). */
export const ACCEPTED_LISTENER: Cond[] = [
  { type: 'ResolvedRefs', status: 'True' },
  { type: 'Accepted', status: 'True' },
  { type: 'Programmed', status: 'True' },
];

/** A ListenerSet, read when its conditions are of its generation; why not otherwise. */
async function latestSet(s: Suite, ls: Ref): Promise<Obj | string> {
  const o = (await s.rig.api.get(listenerSetPath(ls))) as Obj | undefined;
  if (!o) return 'not found';
  if (!(o.status?.conditions ?? []).length) return 'no conditions';
  return staleConditions(o, o.status?.conditions) ?? o;
}

/** GatewayMustHaveAttachedListeners: `status.attachedListenerSets` (absent: 0). */
export async function attachedListenerSets(s: Suite, gw: Ref, count: number): Promise<void> {
  await poll(
    `Gateway ${gw.namespace}/${gw.name} has ${count} attached ListenerSets`,
    async () => {
      const o = (await s.rig.api.get(gatewayPath(gw))) as Obj | undefined;
      if (!o) return 'not found';
      const stale = staleConditions(o, o.status?.conditions);
      if (stale) return stale;
      const n = Number(o.status?.attachedListenerSets ?? 0);
      return n === count ? undefined : `${n} attached`;
    },
    s.timeouts,
  );
}

/** The Gateway Accepted, so many sets attached (GatewayMustHaveCondition, GatewayMustHaveAttachedListeners). */
export async function gatewayWithSets(s: Suite, gw: Ref, sets: number): Promise<void> {
  await s.status.gatewayCondition(gw, { type: 'Accepted', status: 'True' });
  await attachedListenerSets(s, gw, sets);
}

/** ListenerSetMustHaveCondition. */
export async function listenerSetCondition(s: Suite, ls: Ref, cond: Cond): Promise<void> {
  await poll(
    `ListenerSet ${ls.namespace}/${ls.name} has ${cond.type}=${cond.status}/${cond.reason ?? '*'}`,
    async () => {
      const o = await latestSet(s, ls);
      return typeof o === 'string' ? o : conditionsMatch(o.status?.conditions, [cond]);
    },
    s.timeouts,
  );
}

/** Accepted and Programmed of a set, with these reasons (ListenerSetMustHaveCondition twice). */
export async function listenerSetIs(
  s: Suite,
  ls: Ref,
  accepted: [string, string?],
  programmed: [string, string?] = accepted,
): Promise<void> {
  await listenerSetCondition(s, ls, { type: 'Accepted', status: accepted[0], reason: accepted[1] ?? '' });
  await listenerSetCondition(s, ls, {
    type: 'Programmed',
    status: programmed[0],
    reason: programmed[1] ?? '',
  });
}

/** ListenerSetListenersMustHaveConditions: each named listener (every one when none) has them all. */
export async function listenerSetListenersHave(
  s: Suite,
  ls: Ref,
  conds: Cond[],
  names: string[] = [],
): Promise<void> {
  await poll(
    `ListenerSet ${ls.namespace}/${ls.name} listeners ${names.join(', ')} have ${conds.map((c) => `${c.type}=${c.status}/${c.reason ?? '*'}`).join(', ')}`,
    async () => {
      const o = await latestSet(s, ls);
      if (typeof o === 'string') return o;
      const listeners = (o.status?.listeners ?? []) as Obj[];
      for (const n of names) if (!listeners.some((l) => l.name === n)) return `no status for listener ${n}`;
      for (const l of listeners) {
        if (names.length && !names.includes(l.name)) continue;
        const why = conditionsMatch(l.conditions, conds);
        if (why) return `listener ${l.name}: ${why}`;
      }
      return undefined;
    },
    s.timeouts,
  );
}

/** ListenerSetStatusMustHaveListeners: exactly these listeners, HTTPRoute among their kinds. */
export async function listenerSetListeners(
  s: Suite,
  ls: Ref,
  want: { name: string; attachedRoutes: number }[],
): Promise<void> {
  await poll(
    `ListenerSet ${ls.namespace}/${ls.name} listener status`,
    async () => {
      const o = await latestSet(s, ls);
      if (typeof o === 'string') return o;
      return listenersProblem(
        (o.status?.listeners ?? []) as Obj[],
        want.map((w) => ({ ...w, supportedKinds: [{ kind: 'HTTPRoute' }], conditions: ACCEPTED_LISTENER })),
      );
    },
    s.timeouts,
  );
}

/** RoutesAndParentMustBeAccepted for a ListenerSet: each route Accepted by it, its listeners ready. */
export async function routesAcceptedBySet(s: Suite, ls: Ref, routes: Ref[]): Promise<void> {
  for (const r of routes)
    await s.status.routeParents(
      'HTTPRoute',
      r,
      [
        {
          parent: { ...ls, kind: 'ListenerSet' },
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
        },
      ],
      r.namespace !== ls.namespace,
    );
  await listenerSetListenersHave(s, ls, ACCEPTED_LISTENER);
}
