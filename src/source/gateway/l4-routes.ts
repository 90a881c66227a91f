/**
 * TCPRoute, UDPRoute and TLSRoute (passthrough) onto our L4 pools. A route attaches as an HTTPRoute
 * does (TLS routes by hostname too); its one backend with a weight resolves to the Service's pool
 * (a Service in another namespace needs a ReferenceGrant). A TCP or UDP listener carries one route:
 * the oldest (the Gateway API's conflict rule); a newer one is Accepted, counted among the
 * listener's attached routes, and not bound (TCPRouteMultipleRoutesAttachment). A TLS listener
 * carries one per SNI host. Several weighted backends are UnsupportedValue (an L4 virtual service has one
 * pool per route). Pure.
 */
import { GATEWAY_GROUP, type L4RouteObject, type ReferenceGrant } from '../../kube/gateway-objects.ts';
import type { Service } from '../../kube/objects.ts';
import type { SniRoute } from '../../model/types.ts';
import { attachRoute, type GatewayListeners, type NamespaceLabels } from './attach.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import type { ListenerState } from './listeners.ts';
import { referencePermitted } from './reference-grants.ts';

type ServicePort = Service['spec']['ports'][number];
export type L4Kind = 'TCPRoute' | 'UDPRoute' | 'TLSRoute';

export interface L4Context {
  /** Services by namespace/name (those of namespaces npl-lb serves). */
  services: Pick<ReadonlyMap<string, Service>, 'get'>;
  grants: readonly ReferenceGrant[];
  poolFor: (svc: Service, port: ServicePort) => string;
  /** The ListenerSets of our Gateways, as parents (attach.ts); none when absent. */
  listenerSets?: ReadonlyMap<string, GatewayListeners>;
}

export interface L4Placement {
  /** What each listener serves: one pool (TCP, UDP) or routes by SNI (TLS). */
  pools: Map<ListenerState, { pool: string; source: string }>;
  sni: Map<ListenerState, SniRoute[]>;
  statuses: Map<
    string,
    {
      generation: number;
      parents: { parentRef: L4RouteObject['spec']['parentRefs'][number]; conditions: ConditionSpec[] }[];
    }
  >;
  backends: Set<string>;
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;
const older = (a: L4RouteObject, b: L4RouteObject): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  key(a.metadata).localeCompare(key(b.metadata));

function backendOf(
  kind: L4Kind,
  r: L4RouteObject,
  ctx: L4Context,
): { pool: string | undefined; resolved: ConditionSpec; unsupported?: string; service?: string } {
  const ns = r.metadata.namespace;
  const refs = r.spec.rules.flatMap((rule) => rule.backendRefs).filter((b) => b.weight > 0);
  if (refs.length === 0)
    return {
      pool: undefined,
      resolved: cond('ResolvedRefs', false, 'BackendNotFound', 'no backendRef with a weight'),
    };
  if (refs.length > 1) {
    return {
      pool: undefined,
      resolved: cond('ResolvedRefs', true, 'ResolvedRefs'),
      unsupported: `${kind} with more than one weighted backend`,
    };
  }
  const b = refs[0]!;
  const target = b.namespace ?? ns;
  if (b.group !== '' || b.kind !== 'Service') {
    return {
      pool: undefined,
      resolved: cond('ResolvedRefs', false, 'InvalidKind', `${b.group || 'core'}/${b.kind} is not a Service`),
    };
  }
  if (
    !referencePermitted(
      ctx.grants,
      { group: GATEWAY_GROUP, kind, namespace: ns },
      { group: '', kind: 'Service', namespace: target, name: b.name },
    )
  ) {
    return {
      pool: undefined,
      resolved: cond(
        'ResolvedRefs',
        false,
        'RefNotPermitted',
        `Service ${target}/${b.name} is in another namespace and no ReferenceGrant allows it`,
      ),
    };
  }
  const svc = ctx.services.get(`${target}/${b.name}`);
  const want = kind === 'UDPRoute' ? 'UDP' : 'TCP';
  const sp = svc?.spec.ports.find((p) => p.port === b.port && p.protocol === want);
  if (!svc || !sp) {
    return {
      pool: undefined,
      resolved: cond(
        'ResolvedRefs',
        false,
        'BackendNotFound',
        svc
          ? `Service ${target}/${b.name} has no ${want} port ${b.port ?? '(none given)'}`
          : `Service ${target}/${b.name} not found`,
      ),
    };
  }
  return {
    pool: ctx.poolFor(svc, sp),
    resolved: cond('ResolvedRefs', true, 'ResolvedRefs'),
    service: `${target}/${b.name}`,
  };
}

export function placeL4Routes(
  routes: { kind: L4Kind; objects: readonly L4RouteObject[] }[],
  gws: ReadonlyMap<string, GatewayListeners>,
  nsLabels: NamespaceLabels,
  ctx: L4Context,
): L4Placement {
  const out: L4Placement = { pools: new Map(), sni: new Map(), statuses: new Map(), backends: new Set() };
  for (const { kind, objects } of routes) {
    for (const r of [...objects].sort(older)) {
      const head = {
        kind,
        namespace: r.metadata.namespace,
        name: r.metadata.name,
        hostnames: kind === 'TLSRoute' ? r.spec.hostnames : [],
        parentRefs: r.spec.parentRefs,
      };
      const parents = attachRoute(head, gws, nsLabels, ctx.listenerSets);
      if (parents.length === 0) continue;
      const be = backendOf(kind, r, ctx);
      const source = `${kind} ${key(r.metadata)}`;
      const statuses = parents.map((p) => {
        let accepted = p.accepted;
        if (accepted.status && be.unsupported)
          accepted = cond('Accepted', false, 'UnsupportedValue', be.unsupported);
        // An older route holds the listener: this one is accepted but not bound to it.
        const taken =
          accepted.status && kind !== 'TLSRoute'
            ? p.listeners.map((a) => out.pools.get(a.state)).find(Boolean)
            : undefined;
        if (accepted.status && be.pool && !taken) {
          if (be.service) out.backends.add(be.service);
          for (const a of p.listeners) {
            if (!a.state.programmable) continue;
            if (kind === 'TLSRoute') {
              const list = out.sni.get(a.state) ?? [];
              for (const host of a.hosts)
                if (!list.some((x) => x.host === host)) list.push({ host, pool: be.pool, source });
              out.sni.set(a.state, list);
            } else out.pools.set(a.state, { pool: be.pool, source });
          }
        }
        return { parentRef: p.parentRef, conditions: [accepted, be.resolved] };
      });
      out.statuses.set(source, { generation: r.metadata.generation, parents: statuses });
    }
  }
  return out;
}
