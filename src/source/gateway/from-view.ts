/**
 * The Gateway API source as the desired-state pass uses it: the VIP requests of our Gateways
 * (their `spec.addresses`, else one from vip.cidrs, kept once published in status.addresses), and
 * the pass itself with what the configured load balancer supports. Pure.
 */
import type { Capabilities } from '../../adapter/contract.ts';
import { type ControllerConfig, namespaceSelected } from '../../config/controller-config.ts';
import type { Service } from '../../kube/objects.ts';
import type { BackendTls } from '../../model/types.ts';
import type { RuleContext } from './http-rules.ts';
import { ROUTE_KEYS, type RouteKey, type RouteLists, type RouteObject } from '../../kube/gateway-objects.ts';
import { ALL_HTTP, INGRESS_HTTP } from '../../adapter/http-capabilities.ts';
import type { ClusterView } from '../view.ts';
import type { VipOutcome } from '../types.ts';
import type { SecretCertificates } from '../ingress/tls.ts';
import { type FamilyVipRequest, perFamily } from '../vips/family-requests.ts';
import { requesterKey, type VipRequester } from '../vips/requester.ts';
import { familyOf, type IpFamily } from '../ip-family.ts';
import { buildGateways, type GatewayResult, type GatewayView, ourGateways } from './gateways.ts';
import type { ProtocolSupport } from './listeners.ts';
import { gatewayParameters } from './parameters.ts';
import type { ParametersOf } from '../parameters-table.ts';

type ServicePort = Service['spec']['ports'][number];

/** The load balancer a pass serves: its name (in messages) and what it can do. */
export interface LoadBalancerInfo {
  name: string;
  caps: Capabilities;
}

/** What a pass assumes when not told: a load balancer that serves everything (the memory one). */
export const SERVE_ALL: LoadBalancerInfo = {
  name: 'memory',
  caps: {
    l4: { tcp: true, udp: true },
    l7: true,
    memberNodeTag: true,
    drainingMembers: true,
    certificates: true,
    tlsPassthrough: true,
    http: ALL_HTTP,
    httpChecks: true,
    httpsChecks: true,
    ipv6: true,
  },
};

/**
 * The Gateway API objects of the namespaces npl-lb serves (`namespaces` in the config): a Gateway
 * or route elsewhere is not ours, as an Ingress there is not.
 */
export function servedGatewayView(
  view: Pick<
    ClusterView,
    | 'gatewayClasses'
    | 'gateways'
    | 'listenerSets'
    | RouteKey
    | 'referenceGrants'
    | 'backendTlsPolicies'
    | 'configMaps'
    | 'namespaces'
    | 'gatewayApiVersion'
  >,
  cfg: ControllerConfig,
): GatewayView {
  const served = <T extends { metadata: { namespace: string } }>(list: T[] | undefined): T[] =>
    (list ?? []).filter((o) => namespaceSelected(cfg, o.metadata.namespace));
  const routes: RouteLists = {};
  for (const k of ROUTE_KEYS) (routes as Record<RouteKey, unknown>)[k] = served<RouteObject>(view[k]);
  return {
    gatewayClasses: view.gatewayClasses ?? [],
    gateways: served(view.gateways),
    // Sets of the namespaces npl-lb serves, as routes are: one elsewhere is not ours to judge.
    listenerSets: served(view.listenerSets),
    ...routes,
    referenceGrants: view.referenceGrants ?? [],
    // Policies of every namespace: a route sends to a Service of a served namespace, and the
    // policy lives beside that Service.
    backendTlsPolicies: view.backendTlsPolicies ?? [],
    configMaps: view.configMaps ?? [],
    namespaces: view.namespaces ?? [],
    bundleVersion: view.gatewayApiVersion,
  };
}

/**
 * A Gateway's VIP requests, one per family it is served in: the families of the addresses it asks
 * (`spec.addresses`, IPAddress values), its first served family for an IPAddress without a value
 * (any address), every served family when it asks none. An address of another type is refused
 * (UnsupportedAddress).
 */
export function gatewayVipRequests(
  view: ClusterView,
  cfg: ControllerConfig,
  families: readonly IpFamily[],
): FamilyVipRequest[] {
  return ourGateways(servedGatewayView(view, cfg), cfg.gatewayController).flatMap((g) => {
    const requester: VipRequester = {
      kind: 'gateway',
      namespace: g.metadata.namespace,
      name: g.metadata.name,
    };
    const asked = g.spec.addresses;
    const first = families[0] ?? 'IPv4';
    const bad = asked.find((a) => a.type !== 'IPAddress');
    if (bad)
      return [
        {
          key: requesterKey(requester),
          requester,
          family: first,
          unsupported: true as const,
          refused: `spec.addresses: ${JSON.stringify(`${bad.type}:${bad.value ?? ''}`.slice(0, 96))} is not an IPAddress; npl-lb serves IP addresses only`,
        },
      ];
    const values = asked.map((a) => a.value).filter((v): v is string => !!v);
    const wanted: IpFamily[] =
      asked.length === 0
        ? [...families]
        : values.length === 0
          ? [first]
          : [...new Set(values.map((v) => familyOf(v) ?? first))];
    return perFamily(
      requester,
      wanted,
      [values.join(',')],
      g.status.addresses.filter((a) => a.type === undefined || a.type === 'IPAddress').map((a) => a.value),
    );
  });
}

export function supportOf(caps: Capabilities): ProtocolSupport {
  return {
    HTTP: caps.l7,
    HTTPS: caps.l7 && caps.certificates === true,
    TLS: caps.tlsPassthrough === true,
    tlsTerminate: caps.tlsTerminate === true && caps.certificates === true,
    tlsMixed: caps.tlsMixed === true && caps.tlsTerminate === true && caps.certificates === true,
    TCP: caps.l4.tcp,
    UDP: caps.l4.udp,
    http2: caps.l7 && caps.http?.http2 === true,
    clientCertificates: caps.l7 && caps.certificates === true && caps.http?.clientValidation === true,
    clientSubjectHeader: caps.http?.clientSubjectHeader === true,
    backendClientCertificates:
      caps.certificates === true && caps.http?.backendTls?.clientCertificates === true,
  };
}

export function gatewaysFromView(
  view: ClusterView,
  cfg: ControllerConfig,
  lb: LoadBalancerInfo,
  deps: {
    services: Pick<ReadonlyMap<string, Service>, 'get'>;
    poolFor: (svc: Service, port: ServicePort) => string;
    h2PoolFor?: ((svc: Service, port: ServicePort) => string) | undefined;
    tlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
    variantPoolFor?: RuleContext['variantPoolFor'];
    l4PoolFor: (svc: Service, port: ServicePort) => string;
    l4TlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
    certificateOf: SecretCertificates;
    vipOf: (gateway: { namespace: string; name: string }) => VipOutcome;
    /** Class parameters, resolved once per pass (parameters-table.ts). */
    parametersOf: ParametersOf;
  },
): GatewayResult | undefined {
  if (!view.gatewayClasses?.length) return undefined;
  // A backend in a namespace npl-lb does not serve is as good as missing (never annotated there).
  const services = {
    get: (k: string) =>
      namespaceSelected(cfg, k.slice(0, k.indexOf('/'))) ? deps.services.get(k) : undefined,
  };
  return buildGateways(servedGatewayView(view, cfg), {
    cluster: cfg.clusterName,
    controllerName: cfg.gatewayController,
    adapter: lb.name,
    support: supportOf(lb.caps),
    http: lb.caps.http ?? INGRESS_HTTP,
    ...deps,
    services,
  });
}

/**
 * Each Gateway's VIP ranges, where its parameters (its class's, its own over them) name some:
 * by `gateway/ns/name`. A Gateway whose parameters cannot be used programs nothing (said by its
 * status), so it takes the controller's ranges here.
 */
export function gatewayVipCidrs(
  view: ClusterView,
  cfg: ControllerConfig,
  parametersOf: ParametersOf,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if ((view.loadBalancerParameters ?? []).length === 0) return out;
  for (const g of ourGateways(servedGatewayView(view, cfg), cfg.gatewayController)) {
    const cls = (view.gatewayClasses ?? []).find((c) => c.metadata.name === g.spec.gatewayClassName);
    const ofClass = parametersOf(cls?.spec.parametersRef, {
      field: 'spec.parametersRef',
      namespace: undefined,
    });
    const r = gatewayParameters(g, ofClass, parametersOf);
    if ('vipCidrs' in r && r.vipCidrs)
      out.set(
        requesterKey({ kind: 'gateway', namespace: g.metadata.namespace, name: g.metadata.name }),
        r.vipCidrs,
      );
  }
  return out;
}
