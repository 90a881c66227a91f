/**
 * The Gateway API source as the desired-state pass uses it: the VIP requests of our Gateways
 * (their `spec.addresses`, else one from vip.cidrs, kept once published in status.addresses), and
 * the pass itself with what the configured load balancer supports. Pure.
 */
import type { Capabilities } from '../../adapter/contract.ts';
import { type ControllerConfig, namespaceSelected } from '../../config/controller-config.ts';
import type { Service } from '../../kube/objects.ts';
import { ALL_HTTP, INGRESS_HTTP } from '../../adapter/http-capabilities.ts';
import type { ClusterView } from '../view.ts';
import type { SecretCertificates } from '../ingress-tls.ts';
import type { VipRequest } from '../vips.ts';
import { buildGateways, type GatewayResult, type GatewayView, ourGateways } from './gateways.ts';
import type { ProtocolSupport } from './listeners.ts';

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
  },
};

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/**
 * One VIP request per Gateway of ours. An address of a type other than IPAddress, or a second
 * address, is refused (UnsupportedAddress) by asking for a value no range holds.
 */
/**
 * The Gateway API objects of the namespaces npl-lb serves (`namespaces` in the config): a Gateway
 * or route elsewhere is not ours, as an Ingress there is not.
 */
export function servedGatewayView(
  view: Pick<
    ClusterView,
    | 'gatewayClasses'
    | 'gateways'
    | 'httpRoutes'
    | 'tcpRoutes'
    | 'udpRoutes'
    | 'tlsRoutes'
    | 'referenceGrants'
    | 'namespaces'
    | 'gatewayApiVersion'
  >,
  cfg: ControllerConfig,
): GatewayView {
  const served = <T extends { metadata: { namespace: string } }>(list: T[] | undefined): T[] =>
    (list ?? []).filter((o) => namespaceSelected(cfg, o.metadata.namespace));
  return {
    gatewayClasses: view.gatewayClasses ?? [],
    gateways: served(view.gateways),
    httpRoutes: served(view.httpRoutes),
    tcpRoutes: served(view.tcpRoutes),
    udpRoutes: served(view.udpRoutes),
    tlsRoutes: served(view.tlsRoutes),
    referenceGrants: view.referenceGrants ?? [],
    namespaces: view.namespaces ?? [],
    bundleVersion: view.gatewayApiVersion,
  };
}

export function gatewayVipRequests(view: ClusterView, cfg: ControllerConfig): VipRequest[] {
  return ourGateways(servedGatewayView(view, cfg), cfg.gatewayController).map((g) => {
    const asked = g.spec.addresses;
    const bad = asked.find((a) => a.type !== 'IPAddress') ?? (asked.length > 1 ? asked[1] : undefined);
    return {
      key: `gateway/${key(g.metadata)}`,
      // An IPAddress without a value asks for any address: one is allocated as without one.
      requested: bad ? `${bad.type}:${bad.value ?? ''}` : asked[0]?.value,
      published: g.status.addresses.find((a) => a.type === undefined || a.type === 'IPAddress')?.value,
    };
  });
}

export function supportOf(caps: Capabilities): ProtocolSupport {
  return {
    HTTP: caps.l7,
    HTTPS: caps.l7 && caps.certificates === true,
    TLS: caps.tlsPassthrough === true,
    TCP: caps.l4.tcp,
    UDP: caps.l4.udp,
  };
}

export function gatewaysFromView(
  view: ClusterView,
  cfg: ControllerConfig,
  lb: LoadBalancerInfo,
  deps: {
    services: Pick<ReadonlyMap<string, Service>, 'get'>;
    poolFor: (svc: Service, port: ServicePort) => string;
    l4PoolFor: (svc: Service, port: ServicePort) => string;
    certificateOf: SecretCertificates;
    vipOf: (gatewayKey: string) => { vip?: string; problem?: string; reason?: string };
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
