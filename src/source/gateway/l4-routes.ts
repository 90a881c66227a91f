/**
 * TCPRoute, UDPRoute and TLSRoute (passthrough, or terminated: re-encrypted to a port a
 * BackendTLSPolicy targets) onto our L4 pools. A route attaches as an HTTPRoute
 * does (TLS routes by hostname too); its one backend with a weight resolves to the Service's pool
 * (a Service in another namespace needs a ReferenceGrant). A TCP or UDP listener carries one route:
 * the oldest (the Gateway API's conflict rule); a newer one is Accepted, counted among the
 * listener's attached routes, and not bound (TCPRouteMultipleRoutesAttachment). A TLS listener
 * carries one per SNI host. Several weighted backends are UnsupportedValue (an L4 virtual service has one
 * pool per route). Pure.
 */
import { GATEWAY_GROUP, type L4RouteObject, type ReferenceGrant } from '../../kube/gateway-objects.ts';
import type { Service } from '../../kube/objects.ts';
import type { BackendTls, SniRoute } from '../../model/types.ts';
import type { TlsTarget } from './backend-tls.ts';
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
  /** The BackendTLSPolicies over a Service port (backend-tls.ts), for TLS listeners in Terminate mode. */
  backendTlsOf?: (namespace: string, service: string, portName: string) => TlsTarget | undefined;
  /** The tcp pool of a port spoken to over TLS; absent: the load balancer cannot. */
  tlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
  /** The Gateways (namespace/name) each policy was hit on, for its status. */
  tlsHits?: Map<string, Set<string>>;
  adapter?: string;
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
): {
  pool: string | undefined;
  resolved: ConditionSpec;
  unsupported?: string;
  service?: string;
  /** TLSRoute: the Service port, for a pool over TLS where a Terminate listener re-encrypts. */
  port?: { svc: Service; sp: ServicePort };
} {
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
    // Asked for only where it is used: a Terminate listener re-encrypting uses a TLS pool instead,
    // and a pool nobody sends to is never written.
    get pool() {
      return ctx.poolFor(svc, sp);
    },
    resolved: cond('ResolvedRefs', true, 'ResolvedRefs'),
    service: `${target}/${b.name}`,
    ...(kind === 'TLSRoute' ? { port: { svc, sp } } : {}),
  };
}

/**
 * Where a TLS listener in Terminate mode sends a TLSRoute's backend: over TLS as a BackendTLSPolicy
 * over the port asks (its hostname as SNI and verified), or nowhere when the policy cannot be used
 * (never in clear text); the plain pool where no policy targets the port. Passthrough listeners
 * carry the client's own TLS: no policy applies there.
 */
function terminatedBackend(
  be: ReturnType<typeof backendOf>,
  gateway: string,
  ctx: L4Context,
): { pool: string | undefined; refused?: ConditionSpec } {
  const t =
    be.port &&
    ctx.backendTlsOf?.(be.port.svc.metadata.namespace, be.port.svc.metadata.name, be.port.sp.name ?? '');
  if (!t) return { pool: be.pool };
  for (const policy of t.policies)
    ctx.tlsHits?.set(policy, (ctx.tlsHits.get(policy) ?? new Set()).add(gateway));
  if (t.tls && ctx.tlsPoolFor) return { pool: ctx.tlsPoolFor(be.port!.svc, be.port!.sp, t.tls) };
  const why =
    t.problem ??
    `BackendTLSPolicy ${t.policies[0]}: the ${ctx.adapter ?? 'configured'} load balancer does not speak TLS to backends`;
  return {
    pool: undefined,
    refused: cond(
      'ResolvedRefs',
      false,
      'UnsupportedProtocol',
      `Service ${be.service ?? ''}: ${why}; its connections are closed, never sent in clear text`,
    ),
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
        let resolved = be.resolved;
        if (accepted.status && be.service !== undefined && !taken) {
          if (be.service) out.backends.add(be.service);
          for (const a of p.listeners) {
            if (!a.state.programmable) continue;
            if (kind === 'TLSRoute') {
              const to = a.state.terminate ? terminatedBackend(be, p.gateway.key, ctx) : { pool: be.pool };
              if (to.refused) resolved = to.refused;
              if (!to.pool) continue;
              const list = out.sni.get(a.state) ?? [];
              for (const host of a.hosts)
                if (!list.some((x) => x.host === host)) list.push({ host, pool: to.pool, source });
              out.sni.set(a.state, list);
            } else {
              const pool = be.pool;
              if (pool) out.pools.set(a.state, { pool, source });
            }
          }
        }
        return { parentRef: p.parentRef, conditions: [accepted, resolved] };
      });
      out.statuses.set(source, { generation: r.metadata.generation, parents: statuses });
    }
  }
  return out;
}
