/**
 * The upstream suite's status assertions (conformance/utils/kubernetes/helpers.go), with its
 * semantics written again: polled until they hold or the timeout passes, conditions matched by
 * type, status and reason (an empty one matches any), only conditions of the object's latest
 * generation counted where upstream requires it.
 */
import type { Api } from './objects.ts';

export const GW = 'gateway.networking.k8s.io';
const V1 = `/apis/${GW}/v1`;

export interface Cond {
  type: string;
  status?: string;
  reason?: string;
}
interface Condition extends Cond {
  observedGeneration?: number;
}
export interface Ref {
  namespace: string;
  name: string;
}

export interface Timeouts {
  /** Upper bound of every wait (upstream: 60-180 s; the sandbox answers at once). */
  statusMs: number;
  /** For a request to be answered as expected the required number of times in a row. */
  consistencyMs: number;
  pollMs: number;
}
export const DEFAULT_TIMEOUTS: Timeouts = { statusMs: 30_000, consistencyMs: 30_000, pollMs: 100 };

export class ConformanceFailure extends Error {}

/** Polls `check` (returns undefined when it holds, else why not) until it holds or time runs out. */
export async function poll(
  what: string,
  check: () => Promise<string | undefined>,
  t: Timeouts,
): Promise<void> {
  const deadline = Date.now() + t.statusMs;
  let why = 'not checked';
  while (Date.now() < deadline) {
    why = (await check()) ?? '';
    if (!why) return;
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  throw new ConformanceFailure(`${what}: timed out after ${t.statusMs} ms (${why})`);
}

export function findCondition(list: Condition[] | undefined, want: Cond): boolean {
  return (list ?? []).some(
    (c) =>
      c.type === want.type &&
      (!want.status || c.status === want.status) &&
      (!want.reason || c.reason === want.reason),
  );
}

export function conditionsMatch(list: Condition[] | undefined, want: Cond[]): string | undefined {
  for (const w of want) {
    if (!findCondition(list, w)) {
      const got = (list ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`).join(', ');
      return `${w.type}=${w.status ?? '*'}/${w.reason ?? '*'} not in [${got}]`;
    }
  }
  return undefined;
}

/** Why the conditions are not all of the object's generation, if they are not. */
export function staleConditions(
  o: { metadata?: { generation?: number } },
  list: Condition[] | undefined,
): string | undefined {
  const gen = o.metadata?.generation;
  const stale = (list ?? []).filter((c) => c.observedGeneration !== gen);
  return stale.length
    ? `${stale.map((c) => c.type).join(', ')} of generation ${stale[0]!.observedGeneration}, not ${gen}`
    : undefined;
}

export const gatewayPath = (r: Ref) => `${V1}/namespaces/${r.namespace}/gateways/${r.name}`;
export const routePath = (kind: string, r: Ref) =>
  `${V1}/namespaces/${r.namespace}/${kind.toLowerCase()}s/${r.name}`;

export const backendTlsPolicyPath = (r: Ref) =>
  `${V1}/namespaces/${r.namespace}/backendtlspolicies/${r.name}`;

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A listener's expected status entry (a Gateway's, a ListenerSet's). */
export interface ListenerWant {
  name: string;
  supportedKinds: { group?: string; kind: string }[];
  attachedRoutes: number;
  conditions: Cond[];
}

/**
 * Upstream's listenersMatch: exactly these listeners, each with at least the kinds wanted (none
 * when none is), its attached routes and its conditions; why not, or undefined.
 */
export function listenersProblem(actual: Obj[], want: ListenerWant[]): string | undefined {
  if (actual.length !== want.length) return `${actual.length} listeners, want ${want.length}`;
  for (const w of want) {
    const a = actual.find((x) => x.name === w.name);
    if (!a) return `no status for listener ${w.name}`;
    const kinds = (a.supportedKinds ?? []) as { group?: string; kind: string }[];
    if (!w.supportedKinds.length && kinds.length)
      return `listener ${w.name} supports ${JSON.stringify(kinds)}, want none`;
    for (const k of w.supportedKinds) {
      if (!kinds.some((x) => (x.group ?? GW) === (k.group ?? GW) && x.kind === k.kind))
        return `listener ${w.name} lacks kind ${k.kind}`;
    }
    if (a.attachedRoutes !== w.attachedRoutes)
      return `listener ${w.name} attachedRoutes ${a.attachedRoutes}, want ${w.attachedRoutes}`;
    const why = conditionsMatch(a.conditions, w.conditions);
    if (why) return `listener ${w.name}: ${why}`;
  }
  return undefined;
}

export class StatusChecks {
  constructor(
    private readonly api: Api,
    private readonly controllerName: string,
    readonly timeouts: Timeouts,
  ) {}

  async get(path: string): Promise<Obj | undefined> {
    return (await this.api.get(path)) as Obj | undefined;
  }

  /** GWCMustHaveAcceptedCondition: an Accepted condition of this status (any when undefined), of the latest generation. */
  async gatewayClassAccepted(name: string, status: string | undefined = 'True'): Promise<void> {
    await poll(
      `GatewayClass ${name} Accepted`,
      async () => {
        const o = await this.get(`${V1}/gatewayclasses/${name}`);
        if (!o) return 'not found';
        return (
          staleConditions(o, o.status?.conditions) ??
          conditionsMatch(o.status?.conditions, [{ type: 'Accepted', ...(status ? { status } : {}) }])
        );
      },
      this.timeouts,
    );
  }

  /** GatewayMustHaveLatestConditions: every condition of the Gateway's generation. */
  async gatewayLatest(gw: Ref): Promise<void> {
    await poll(
      `Gateway ${gw.namespace}/${gw.name} conditions of its generation`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        if (!(o.status?.conditions ?? []).length) return 'no conditions';
        return staleConditions(o, o.status?.conditions);
      },
      this.timeouts,
    );
  }

  /** A Gateway's address, with the port of its first (or the named) listener: `ip:port`. */
  async gatewayAddress(gw: Ref, listener?: string): Promise<string> {
    let addr = '';
    await poll(
      `Gateway ${gw.namespace}/${gw.name} has an address`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        const stale = staleConditions(o, o.status?.conditions);
        if (stale) return stale;
        const listeners = (o.spec?.listeners ?? []) as { name: string; port: number }[];
        const l = listeners.find((x) => x.name === listener) ?? listeners[0];
        const a = ((o.status?.addresses ?? []) as { type?: string; value: string }[]).find((x) => x.type);
        if (!a || !l) return 'no address in status';
        addr = a.value.includes(':') ? `[${a.value}]:${l.port}` : `${a.value}:${l.port}`;
        return undefined;
      },
      this.timeouts,
    );
    return addr;
  }

  /**
   * GatewayAndRoutesMustBeAccepted: the Gateway has an address, each route lists it as a parent
   * Accepted by our controller, and the Gateway's listeners are Accepted, ResolvedRefs and
   * Programmed. Returns the address with the listener's port.
   */
  async gatewayAndRoutesAccepted(
    gw: Ref & { listeners?: string[] },
    kind: string,
    routes: Ref[],
  ): Promise<string> {
    const addr = await this.gatewayAddress(gw, gw.listeners?.[0]);
    for (const r of routes) {
      await this.routeParents(
        kind,
        r,
        [{ parent: gw, conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }] }],
        r.namespace !== gw.namespace,
      );
    }
    await this.listenersHave(
      gw,
      [
        { type: 'ResolvedRefs', status: 'True' },
        { type: 'Accepted', status: 'True' },
        { type: 'Programmed', status: 'True' },
      ],
      gw.listeners,
    );
    return addr;
  }

  /** RouteMustHaveParents: each expected parent is there, by our controller, with its conditions. */
  async routeParents(
    kind: string,
    r: Ref,
    /** `parent.kind`: a ListenerSet's (GEP-1713); a Gateway when absent. */
    parents: { parent: Ref & { kind?: string }; conditions: Cond[] }[],
    namespaceRequired = false,
  ): Promise<void> {
    await poll(
      `${kind} ${r.namespace}/${r.name} has parents ${parents.map((p) => p.parent.name).join(', ')}`,
      async () => {
        const o = await this.get(routePath(kind, r));
        if (!o) return 'not found';
        const actual = (o.status?.parents ?? []) as Obj[];
        for (const e of parents) {
          // As parentsForRouteMatch: group and kind spelled out, the namespace too when required.
          const match = actual.find(
            (a) =>
              a.controllerName === this.controllerName &&
              a.parentRef?.group === GW &&
              a.parentRef?.kind === (e.parent.kind ?? 'Gateway') &&
              a.parentRef?.name === e.parent.name &&
              (a.parentRef?.namespace === e.parent.namespace ||
                (!namespaceRequired && a.parentRef?.namespace === undefined)) &&
              !conditionsMatch(a.conditions, e.conditions),
          );
          if (!match)
            return `no parent ${e.parent.name} with ${e.conditions.map((c) => `${c.type}=${c.status}/${c.reason ?? '*'}`).join(', ')} in ${JSON.stringify(actual)}`;
        }
        return undefined;
      },
      this.timeouts,
    );
  }

  /** RouteMustHaveCondition: the route's status for that Gateway has the condition. */
  /**
   * BackendTLSPolicyMustHaveCondition: every ancestor's conditions of the policy's latest
   * generation, and the Gateway's ancestor entry holding the condition.
   */
  async backendTlsPolicyCondition(policy: Ref, gw: Ref, cond: Cond): Promise<void> {
    await poll(
      `BackendTLSPolicy ${policy.namespace}/${policy.name} has ${cond.type}=${cond.status}/${cond.reason ?? '*'} for ${gw.name}`,
      async () => {
        const o = await this.get(backendTlsPolicyPath(policy));
        if (!o) return 'not found';
        const ancestors = (o.status?.ancestors ?? []) as Obj[];
        for (const a of ancestors) {
          const stale = staleConditions(o, a.conditions);
          if (stale) return stale;
        }
        const mine = ancestors.filter(
          (a) =>
            a.ancestorRef?.name === gw.name && (a.ancestorRef?.namespace ?? gw.namespace) === gw.namespace,
        );
        if (!mine.length) return 'no ancestor status for the Gateway';
        return mine.some((a) => !conditionsMatch(a.conditions, [cond]))
          ? undefined
          : conditionsMatch(mine[0]!.conditions, [cond]);
      },
      this.timeouts,
    );
  }

  /** BackendTLSPolicyMustHaveLatestConditions, read once: why not, or undefined. */
  async backendTlsPolicyLatest(policy: Ref): Promise<{ generation: number; stale?: string }> {
    const o = await this.get(backendTlsPolicyPath(policy));
    if (!o) throw new ConformanceFailure(`BackendTLSPolicy ${policy.namespace}/${policy.name} not found`);
    const stale = ((o.status?.ancestors ?? []) as Obj[])
      .map((a) => staleConditions(o, a.conditions))
      .find(Boolean);
    return { generation: Number(o.metadata?.generation ?? 0), ...(stale ? { stale } : {}) };
  }

  async routeCondition(kind: string, r: Ref, gw: Ref, cond: Cond): Promise<void> {
    await poll(
      `${kind} ${r.namespace}/${r.name} has ${cond.type}=${cond.status}/${cond.reason ?? '*'} for ${gw.name}`,
      async () => {
        const o = await this.get(routePath(kind, r));
        if (!o) return 'not found';
        const parents = ((o.status?.parents ?? []) as Obj[]).filter(
          (p) => p.parentRef?.name === gw.name && (p.parentRef?.namespace ?? r.namespace) === gw.namespace,
        );
        if (!parents.length) return 'no status for the Gateway';
        for (const p of parents) {
          const stale = staleConditions(o, p.conditions);
          if (stale) return stale;
          if (!conditionsMatch(p.conditions, [cond])) return undefined;
        }
        return conditionsMatch(parents[0]!.conditions, [cond]);
      },
      this.timeouts,
    );
  }

  /**
   * HTTPRouteMustHaveNoAcceptedParents: no parent status (seen twice), or exactly one of the
   * route's generation with Accepted=False.
   */
  async routeNoAcceptedParents(kind: string, r: Ref): Promise<void> {
    let emptySeen = false;
    await poll(
      `${kind} ${r.namespace}/${r.name} has no accepted parent`,
      async () => {
        const o = await this.get(routePath(kind, r));
        if (!o) return 'not found';
        const parents = (o.status?.parents ?? []) as Obj[];
        if (!parents.length) {
          if (emptySeen) return undefined;
          emptySeen = true;
          return 'no parents yet (checking again)';
        }
        if (parents.length > 1) return `${parents.length} parents`;
        return (
          staleConditions(o, parents[0]!.conditions) ??
          conditionsMatch(parents[0]!.conditions, [{ type: 'Accepted', status: 'False' }])
        );
      },
      this.timeouts,
    );
  }

  /** GatewayMustHaveZeroRoutes: no listener status, or one listener with no attached route. */
  async gatewayZeroRoutes(gw: Ref): Promise<void> {
    await poll(
      `Gateway ${gw.namespace}/${gw.name} has no route attached`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        const stale = staleConditions(o, o.status?.conditions);
        if (stale) return stale;
        const ls = (o.status?.listeners ?? []) as Obj[];
        if (!ls.length || (ls.length === 1 && ls[0]!.attachedRoutes === 0)) return undefined;
        return `listeners ${JSON.stringify(ls.map((l) => [l.name, l.attachedRoutes]))}`;
      },
      this.timeouts,
    );
  }

  /** HTTPRouteMustHaveLatestConditions: every parent's conditions are of the route's generation. */
  async routeLatest(kind: string, r: Ref): Promise<void> {
    await poll(
      `${kind} ${r.namespace}/${r.name} conditions of its generation`,
      async () => {
        const o = await this.get(routePath(kind, r));
        if (!o) return 'not found';
        const parents = (o.status?.parents ?? []) as Obj[];
        if (!parents.length) return 'no parent status';
        for (const p of parents) {
          const stale = staleConditions(o, p.conditions);
          if (stale) return stale;
        }
        return undefined;
      },
      this.timeouts,
    );
  }

  /** GatewayMustHaveCondition, of the latest generation. */
  async gatewayCondition(gw: Ref, cond: Cond): Promise<void> {
    await poll(
      `Gateway ${gw.namespace}/${gw.name} has ${cond.type}=${cond.status}/${cond.reason ?? '*'}`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        return staleConditions(o, o.status?.conditions) ?? conditionsMatch(o.status?.conditions, [cond]);
      },
      this.timeouts,
    );
  }

  /** GatewayListenersMustHaveConditions: each (or each named) listener has every condition. */
  async listenersHave(gw: Ref, conds: Cond[], names?: string[]): Promise<void> {
    await poll(
      `Gateway ${gw.namespace}/${gw.name} listeners have ${conds.map((c) => `${c.type}=${c.status}`).join(', ')}`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        const ls = ((o.status?.listeners ?? []) as Obj[]).filter((l) => !names || names.includes(l.name));
        if (!ls.length) return 'no listener status';
        for (const l of ls) {
          const why = staleConditions(o, l.conditions) ?? conditionsMatch(l.conditions, conds);
          if (why) return `listener ${l.name}: ${why}`;
        }
        return undefined;
      },
      this.timeouts,
    );
  }

  /** GatewayStatusMustHaveListeners: exactly these listeners, with kinds, attached routes, conditions. */
  async gatewayListeners(
    gw: Ref,
    want: {
      name: string;
      supportedKinds: { group?: string; kind: string }[];
      attachedRoutes: number;
      conditions: Cond[];
    }[],
  ): Promise<void> {
    await poll(
      `Gateway ${gw.namespace}/${gw.name} listener status`,
      async () => {
        const o = await this.get(gatewayPath(gw));
        if (!o) return 'not found';
        const actual = (o.status?.listeners ?? []) as Obj[];
        return listenersProblem(actual, want);
      },
      this.timeouts,
    );
  }
}
