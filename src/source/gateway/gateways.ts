/**
 * The Gateway API source: GatewayClasses whose controllerName is ours, their Gateways, and the
 * HTTPRoutes attached to them -> virtual services (one per Gateway, port and protocol, on the
 * Gateway's VIP), certificates, and the status of every object as the spec defines it. Pure: the
 * controller passes its caches, the VIPs and the load balancer's capabilities in.
 */
import type { BackendTlsPolicy } from '../../kube/backend-tls-objects.ts';
import { type CaConfigMap, caConfigMapLookup } from '../../kube/config-maps.ts';
import type { PoolPolicy } from '../backend-policies.ts';
import type { HttpCapabilities } from '../../adapter/contract.ts';
import {
  type Gateway,
  type GatewayClass,
  GATEWAY_ROUTES,
  type Namespace,
  type ReferenceGrant,
  type RouteLists,
} from '../../kube/gateway-objects.ts';
import type { ListenerSet } from '../../kube/listener-set-objects.ts';
import type { Service } from '../../kube/objects.ts';
import type { BackendTls, Certificate, Placement } from '../../model/types.ts';
import { inFamilies } from '../vips/twins.ts';
import type { VipOutcome } from '../types.ts';
import type { SecretCertificates } from '../ingress/tls.ts';
import type { GatewayListeners, NamespaceLabels } from './attach.ts';
import { resolveBackendTls } from './backend-tls.ts';
import { insecureFallbackAsked } from './frontend-tls.ts';
import { supportedFeatures } from './features.ts';
import { cond } from './conditions.ts';
import { gatewayConditions, supportedVersion } from './gateway-conditions.ts';
import type { GatewayResult, ListenerStatus } from './results.ts';
import { attachListenerSets, type ListenerSetState, parentOf } from './listener-sets.ts';
import { backendClientCertificate, type BackendClientCertificate } from './backend-client-certificate.ts';
import { ROUTE_SEMANTICS } from './route-kinds.ts';
import { type ListenerState, type ProtocolSupport, resolveListeners } from './listeners.ts';
import { placeL4Routes } from './l4-routes.ts';
import { gatewayParameters, type ParametersRef, type Resolved, resolveParameters } from './parameters.ts';
import { placeL7Routes } from './l7-routes.ts';
import type { RuleContext } from './http-rules.ts';
import { l4Services, l7Services } from './virtual-services.ts';
import type { Ranked } from './precedence.ts';

/** The Gateway API objects a pass reads; the route kinds' lists by their keys (RouteLists). */
export interface GatewayView extends RouteLists {
  gatewayClasses: GatewayClass[];
  gateways: Gateway[];
  /** ListenerSets (v1); none when absent. */
  listenerSets?: ListenerSet[];
  referenceGrants: ReferenceGrant[];
  /** BackendTLSPolicies (v1); none when absent. */
  backendTlsPolicies?: BackendTlsPolicy[];
  /** ConfigMaps as their `ca.crt` (the policies' CA bundles); none when absent. */
  configMaps?: CaConfigMap[];
  namespaces: Namespace[];
  /** The Gateway API release installed (the CRDs' bundle-version annotation), when known. */
  bundleVersion?: string | undefined;
}

type ServicePort = Service['spec']['ports'][number];

export interface GatewayContext {
  cluster: string;
  controllerName: string;
  adapter: string;
  support: ProtocolSupport;
  http: HttpCapabilities;
  /** The ReferenceGrants (set by buildGateways from the view). */
  grants?: readonly ReferenceGrant[];
  /** Services by namespace/name (those of namespaces npl-lb serves). */
  services: Pick<ReadonlyMap<string, Service>, 'get'>;
  poolFor: (svc: Service, port: ServicePort) => string;
  /** The HTTP/2 (h2c) pool of a Service port; absent: the load balancer speaks HTTP/1.1 to members. */
  h2PoolFor?: ((svc: Service, port: ServicePort) => string) | undefined;
  /** The pool of a Service port spoken to over TLS (a BackendTLSPolicy); absent: the load balancer cannot. */
  tlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
  /** A pool's variant for a route rule's retries and session cookie; absent: neither by route. */
  variantPoolFor?: RuleContext['variantPoolFor'];
  /** The pool of a Service port for L4 routes (TCP health, shared with LoadBalancer Services). */
  l4PoolFor: (svc: Service, port: ServicePort) => string;
  /**
   * The tcp pool of a Service port spoken to over TLS, for TLS listeners in Terminate mode under a
   * BackendTLSPolicy; absent: the load balancer cannot (such a backend then answers nothing).
   */
  l4TlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
  certificateOf: SecretCertificates;
  /** The VIP of a Gateway (namespace/name), or why it has none. */
  vipOf: (gateway: { namespace: string; name: string }) => VipOutcome;
  /**
   * A class's or Gateway's parametersRef resolved (parameters.ts); absent: none are read (any
   * reference is InvalidParameters, said).
   */
  parametersOf?: (
    ref: ParametersRef | undefined,
    at: { field: string; namespace: string | undefined },
  ) => Resolved;
}

export type { GatewayResult, GatewayStatus, ListenerStatus, RouteParentStatus } from './results.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** The Gateways of our classes (first by namespace/name), for VIP allocation before the pass. */
export function ourGateways(
  view: Pick<GatewayView, 'gatewayClasses' | 'gateways'>,
  controllerName: string,
): Gateway[] {
  const classes = new Set(
    view.gatewayClasses.filter((c) => c.spec.controllerName === controllerName).map((c) => c.metadata.name),
  );
  return view.gateways
    .filter((g) => classes.has(g.spec.gatewayClassName))
    .sort((a, b) => (key(a.metadata) < key(b.metadata) ? -1 : 1));
}

/**
 * Our classes' status (conditions, the features claimed) into `out`; returns each one's
 * parameters (its placement), or why they cannot be used (the class not accepted).
 */
function classStatuses(
  view: GatewayView,
  ctx: GatewayContext,
  parametersOf: NonNullable<GatewayContext['parametersOf']>,
  out: GatewayResult,
): Map<string, Resolved> {
  const features = supportedFeatures(ctx.support, ctx.http);
  const classParameters = new Map<string, Resolved>();
  for (const c of view.gatewayClasses) {
    if (c.spec.controllerName !== ctx.controllerName) continue;
    const p = parametersOf(c.spec.parametersRef, { field: 'spec.parametersRef', namespace: undefined });
    classParameters.set(c.metadata.name, p);
    const serves = `npl-lb serves this class (${ctx.adapter} load balancer)`;
    out.classes.set(c.metadata.name, {
      generation: c.metadata.generation,
      supportedFeatures: features,
      conditions: [
        'invalid' in p
          ? cond('Accepted', false, 'InvalidParameters', p.invalid)
          : cond('Accepted', true, 'Accepted', p.note ? `${serves}; ${p.note}` : serves),
        supportedVersion(view.bundleVersion),
      ],
    });
  }
  return classParameters;
}

/**
 * One of our Gateways: its own listeners, those its VIP serves (`merged`: its ListenerSets' too),
 * its ListenerSets judged, and `invalid`, why its parameters (or its class's) cannot be used.
 */
type OurGateway = GatewayListeners & {
  merged: ListenerState[];
  sets: ListenerSetState[];
  /** Its `spec.tls.backend.clientCertificateRef` judged, where it names one the device can present. */
  backendClient: BackendClientCertificate | undefined;
  gateway: Gateway;
  invalid: string | undefined;
  placement: Placement | undefined;
  defaults: PoolPolicy | undefined;
};

/** Our Gateways, by key, each with its listeners resolved and its parameters. */
function ourListeners(
  view: GatewayView,
  ctx: GatewayContext,
  classParameters: ReturnType<typeof classStatuses>,
  parametersOf: NonNullable<GatewayContext['parametersOf']>,
  nsLabels: NamespaceLabels,
): Map<string, OurGateway> {
  const gws = new Map<string, OurGateway>();
  const listenerCtx = {
    cluster: ctx.cluster,
    adapter: ctx.adapter,
    support: ctx.support,
    grants: view.referenceGrants,
    certificateOf: ctx.certificateOf,
    configMap: caConfigMapLookup(view.configMaps),
  };
  const setsOf = new Map<string, ListenerSet[]>();
  for (const s of view.listenerSets ?? []) {
    const parent = parentOf(s);
    if (parent) setsOf.set(parent, [...(setsOf.get(parent) ?? []), s]);
  }
  for (const g of ourGateways(view, ctx.controllerName)) {
    const listeners = resolveListeners(g, listenerCtx);
    // A Gateway that is not accepted programs nothing: no route lands on its listeners.
    const params = gatewayParameters(g, classParameters.get(g.spec.gatewayClassName), parametersOf);
    if ('invalid' in params) for (const l of listeners) l.programmable = false;
    const sets = attachListenerSets(g, listeners, setsOf.get(key(g.metadata)) ?? [], {
      ctx: listenerCtx,
      nsLabels,
      parentInvalid: 'invalid' in params ? params.invalid : undefined,
    });
    gws.set(key(g.metadata), {
      key: key(g.metadata),
      namespace: g.metadata.namespace,
      name: g.metadata.name,
      listeners,
      merged: sets.merged,
      sets: sets.sets,
      backendClient: ctx.support.backendClientCertificates
        ? backendClientCertificate(g, listenerCtx)
        : undefined,
      gateway: g,
      invalid: 'invalid' in params ? params.invalid : undefined,
      placement: 'invalid' in params ? undefined : params.placement,
      defaults: 'invalid' in params ? undefined : params.defaults,
    });
  }
  return gws;
}

/**
 * Each Gateway's status, and the virtual services of each accepted one with a VIP (in each family
 * it is served in); gives the certificates they use.
 */
function gatewayServices(
  gws: Map<string, OurGateway>,
  ctx: GatewayContext,
  l4: ReturnType<typeof placeL4Routes>,
  byVs: Map<string, Ranked[]>,
  out: GatewayResult,
): Certificate[] {
  const certs = new Map<string, Certificate>();
  for (const [gwKey, g] of gws) {
    const vip = ctx.vipOf(g.gateway.metadata);
    out.gateways.set(gwKey, {
      generation: g.gateway.metadata.generation,
      vip: vip.vip,
      ...(vip.more?.length ? { moreVips: vip.more.map((m) => m.vip) } : {}),
      conditions: [
        ...gatewayConditions(g.listeners, vip, g.invalid),
        // The certificate presented to backends: whether its reference resolved (GEP-3155).
        ...(g.backendClient ? [g.backendClient.resolvedRefs] : []),
        // AllowInsecureFallback in effect: said on the Gateway, removed when the mode goes back.
        ...(ctx.support.clientCertificates && !g.invalid && insecureFallbackAsked(g.gateway)
          ? [
              cond(
                'InsecureFrontendValidationMode',
                true,
                'ConfigurationChanged',
                'clients without a valid certificate are served (AllowInsecureFallback)',
              ),
            ]
          : []),
      ],
      listeners: g.listeners.map(listenerStatus),
      attachedListenerSets: g.sets.filter((s) => s.attached).length,
    });
    for (const s of g.sets) {
      // Its listeners wait for the Gateway's address as the Gateway's own do.
      const conditions =
        s.attached && !vip.vip
          ? s.conditions.map((c) =>
              c.type === 'Programmed' && c.status
                ? cond(
                    'Programmed',
                    false,
                    'Pending',
                    `its Gateway has no address: ${vip.problem ?? 'no VIP'}`,
                  )
                : c,
            )
          : s.conditions;
      (out.listenerSets ??= new Map()).set(s.key, {
        generation: s.set.metadata.generation,
        gateway: { namespace: g.namespace, name: g.name },
        conditions,
        listeners: s.listeners.map(listenerStatus),
      });
    }
    if (!vip.vip || g.invalid) continue;
    const client = g.backendClient?.certificate;
    if (client) certs.set(client.name, client);
    // The VIP serves the Gateway's listeners and its accepted ListenerSets' alike.
    const served = { ...g, listeners: g.merged };
    const first = out.virtualServices.length;
    const placed = g.placement ? { placement: g.placement } : {};
    out.virtualServices.push(
      ...l4Services(ctx.cluster, served, vip.vip, l4, certs).map((v) => ({ ...v, ...placed })),
    );
    out.virtualServices.push(
      ...l7Services(ctx.cluster, served, vip.vip, byVs, certs, {
        misdirected: ctx.http.misdirectedRequests === true,
        h2: ctx.support.http2 === true,
      }).map((v) => ({ ...v, ...placed })),
    );
    // Each virtual service on the VIP of each family it is served in (IPv6 ones as twins).
    out.virtualServices.splice(first, Infinity, ...inFamilies(out.virtualServices.slice(first), vip));
    if (g.defaults)
      for (const v of out.virtualServices.slice(first)) (out.defaults ??= new Map()).set(v.name, g.defaults);
  }
  return [...certs.values()];
}

const listenerStatus = (l: ListenerState): ListenerStatus => ({
  name: l.listener.name,
  supportedKinds: l.supportedKinds,
  attachedRoutes: l.attached.size,
  conditions: l.conditions,
});

/** Our Gateways' ListenerSets as route parents: their listeners, on their Gateway's VIP. */
function setParents(gws: ReadonlyMap<string, OurGateway>): Map<string, GatewayListeners> {
  const out = new Map<string, GatewayListeners>();
  for (const g of gws.values())
    for (const s of g.sets)
      out.set(s.key, {
        key: g.key,
        namespace: g.namespace,
        name: g.name,
        listeners: s.listeners,
        merged: g.merged,
        set: {
          namespace: s.set.metadata.namespace,
          label: `ListenerSet ${s.key}`,
          // Not allowed, or its Gateway not accepted: no listener of it was judged.
          refused: s.attached || s.listeners.length > 0 ? undefined : s.conditions[0]?.message,
        },
      });
  return out;
}

export function buildGateways(view: GatewayView, ctx: GatewayContext): GatewayResult {
  const out: GatewayResult = {
    virtualServices: [],
    certificates: [],
    classes: new Map(),
    gateways: new Map(),
    routes: new Map(),
    backends: new Set(),
  };
  const parametersOf =
    ctx.parametersOf ?? ((ref, at) => resolveParameters(ref, at, [], { name: ctx.adapter, caps: {} }));
  const classParameters = classStatuses(view, ctx, parametersOf, out);
  const grants = view.referenceGrants;
  ctx = { ...ctx, grants };
  const nsLabels = new Map(view.namespaces.map((n) => [n.metadata.name, n.metadata.labels]));
  const nsOf = (ns: string) => nsLabels.get(ns);
  const gws = ourListeners(view, ctx, classParameters, parametersOf, nsOf);
  const sets = setParents(gws);

  // Routes, attached: their rules placed on each listener's hosts, by virtual service.
  const byVs = new Map<string, Ranked[]>();
  const place = { gws, sets, nsOf, byVs, out };
  // A Service port a BackendTLSPolicy targets is spoken to over TLS or not at all (backend-tls.ts).
  const tls = resolveBackendTls(
    view.backendTlsPolicies ?? [],
    view.configMaps ?? [],
    ctx.tlsPoolFor ? ctx.http.backendTls : undefined,
    ctx.adapter,
  );
  const tlsHits = new Map<string, Set<string>>();
  const placeTls = {
    ...place,
    backendTlsOf: tls.of,
    tlsHits,
    clientCertificateOf: (gwKey: string) => gws.get(gwKey)?.backendClient?.certificate?.name,
  };
  for (const row of ROUTE_SEMANTICS)
    if (row.rules) placeL7Routes(GATEWAY_ROUTES[row.key].kind, view[row.key] ?? [], row.rules, ctx, placeTls);
  const l4 = placeL4Routes(
    [
      { kind: 'TCPRoute', objects: view.tcpRoutes ?? [] },
      { kind: 'UDPRoute', objects: view.udpRoutes ?? [] },
      { kind: 'TLSRoute', objects: view.tlsRoutes ?? [] },
    ],
    gws,
    nsOf,
    {
      services: ctx.services,
      grants,
      poolFor: ctx.l4PoolFor,
      listenerSets: sets,
      // Terminate mode: a BackendTLSPolicy's port re-encrypted, counted in the policy's status.
      backendTlsOf: tls.of,
      tlsPoolFor: ctx.l4TlsPoolFor,
      tlsHits,
      adapter: ctx.adapter,
    },
  );
  for (const [k, st] of l4.statuses) out.routes.set(k, st);
  for (const b of l4.backends) out.backends.add(b);
  if (tlsHits.size > 0) out.tlsPolicies = tls.statuses(tlsHits);

  out.certificates = gatewayServices(gws, ctx, l4, byVs, out);
  return out;
}
