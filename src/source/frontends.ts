/**
 * The part of a pass that does not look at Pods: VIPs, then LoadBalancer Services, Ingress classes
 * and Gateways, each by its own pure function, with the pools they ask for recorded in the order
 * asked (each once, with its Service port's BackendPolicy). Pure: a memo, if any, is the caller's (certificates read once per Secret
 * version are passed in as `certificateOf`).
 */
import type { PoolPolicy } from './backend-policies.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import { poolRefs } from '../model/refs.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Ingress, Service } from '../kube/objects.ts';
import { caConfigMapLookup } from '../kube/config-maps.ts';
import { PARAMETERS_GROUP, PARAMETERS_KIND } from '../kube/parameters-objects.ts';
import type { Resolved } from './gateway/parameters.ts';
import { type ParametersOf, parametersTable } from './parameters-table.ts';
import {
  familyName,
  h2PoolName,
  l7PoolName,
  poolName,
  retryPoolName,
  sessionPoolName,
  tlsPoolName,
} from '../model/names.ts';
import type { BackendTls, Pool, RuleVariant, VirtualService } from '../model/types.ts';
import { gatewaysFromView, gatewayVipCidrs, type LoadBalancerInfo } from './gateway/from-view.ts';
import { resolveBackendPolicies } from './backend-policies.ts';
import { ingressPolicies, poolPolicies } from './ingress/policies.ts';
import type { SecretCertificates } from './ingress/tls.ts';
import { ingressesByClass, ingressFrontends } from './ingress/ingresses.ts';
import type { IngressClassContext } from './ingress/class.ts';
import { loadBalancerServices, ourLoadBalancerServices } from './lb-services.ts';
import { secretCertificates } from './secret-certificates.ts';
import type { Finding, Frontends, PoolRequest, ServicePort, VipOutcome } from './types.ts';
import { assignVips, familyVips, vipRequests } from './vips/requests.ts';
import type { FamilyVipRequest } from './vips/family-requests.ts';
import type { VipRequester } from './vips/requester.ts';
import { FAMILIES, type IpFamily } from './ip-family.ts';
import {
  type FamilyChoice,
  primaryFamily,
  type Servable,
  serviceFamilies,
  servableFamilies,
} from './vips/service-families.ts';
import { cidrsOf } from './vips/vips.ts';
import type { ClusterView } from './view.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/**
 * The VIPs of a pass, per object and family: the families each LoadBalancer Service is served in
 * (`choices`), and each object's VIP outcome.
 */
function frontendVips(
  lbServices: Service[],
  byClass: ReadonlyMap<string, Ingress[]>,
  view: ClusterView,
  cfg: ControllerConfig,
  lb: LoadBalancerInfo,
  servable: Servable,
  resolve: ParametersOf,
): { choices: Map<string, FamilyChoice>; vipOf: (who: VipRequester) => VipOutcome } {
  const choices = new Map(
    lbServices.map((s) => [key(s.metadata), serviceFamilies(s, servable.families, servable.why)]),
  );
  const gatewayCidrs = gatewayVipCidrs(view, cfg, resolve);
  const svcByKey = new Map(lbServices.map((s) => [key(s.metadata), s]));
  // Each requester's VIP ranges where its class's parameters name some (inside vip.cidrs).
  const cidrsOf = (r: FamilyVipRequest): string[] | undefined => {
    const who = r.requester;
    const p =
      who.kind === 'service'
        ? serviceClassParameters(cfg, resolve, svcByKey.get(`${who.namespace}/${who.name}`)!)
        : who.kind === 'ingressclass'
          ? ingressClassParameters(view, resolve, who.name)
          : undefined;
    return p && 'vipCidrs' in p ? p.vipCidrs : gatewayCidrs.get(r.key);
  };
  const asked = vipRequests(lbServices, byClass, view, cfg, {
    ofService: (k) => choices.get(k)!,
    all: servable.families,
  }).map((r) => {
    const cidrs = cidrsOf(r);
    return cidrs ? { ...r, cidrs } : r;
  });
  const vipOf = familyVips(asked, assignVips(asked, cfg, lb.caps.allocatesVips), {
    noCidrs: !lb.caps.allocatesVips && cfg.vip.cidrs.length === 0,
    unserved: (who) =>
      who.kind === 'service' ? choices.get(`${who.namespace}/${who.name}`)?.unserved : undefined,
  });
  return { choices, vipOf };
}

/**
 * The pools a Service port has, one per way it is spoken to: L4 (TCP), HTTP (a name of its own:
 * tcp and http are different modes), HTTP/2 (gRPC routes, appProtocol kubernetes.io/h2c) and TLS
 * (a BackendTLSPolicy or an Ingress's re-encryption; named for the TLS asked), the last two where
 * the load balancer speaks them.
 */
function poolKinds(poolFor: ReturnType<typeof poolRequester>, cluster: string, lb: LoadBalancerInfo) {
  return {
    l4PoolFor: poolFor('tcp'),
    httpPoolFor: poolFor('http', (svc, sp) => l7PoolName(cluster, svc.metadata, sp.name || sp.port)),
    h2PoolFor: lb.caps.http?.http2
      ? poolFor('http', (svc, sp) => h2PoolName(cluster, svc.metadata, sp.name || sp.port), 'h2c')
      : undefined,
    tlsPoolFor: lb.caps.http?.backendTls
      ? (svc: Service, sp: ServicePort, tls: BackendTls) =>
          poolFor(
            'http',
            (s, p) => tlsPoolName(cluster, s.metadata, p.name || p.port, tls),
            undefined,
            tls,
          )(svc, sp)
      : undefined,
    // A TLS listener in Terminate mode re-encrypting to a BackendTLSPolicy's port: a tcp pool.
    l4TlsPoolFor:
      lb.caps.http?.backendTls && lb.caps.tlsTerminate
        ? (svc: Service, sp: ServicePort, tls: BackendTls) =>
            poolFor(
              'tcp',
              (s, p) => tlsPoolName(cluster, s.metadata, p.name || p.port, tls, 'tcptls'),
              undefined,
              tls,
            )(svc, sp)
        : undefined,
  };
}

/**
 * Pool names by Service port, asking for each pool once (`requests`, in the order asked). A pool
 * serves one family: a LoadBalancer Service's pools that of their VIP, pools for routes the
 * Service's primary family (a route's VIPs of either family reach them alike).
 */
function poolRequester(
  requests: Map<string, PoolRequest>,
  cluster: string,
  chosen: ReturnType<typeof poolPolicies>,
  families: readonly IpFamily[],
) {
  return (
      health: Pool['health'],
      named?: (svc: Service, port: ServicePort) => string,
      backendProtocol?: 'h2c',
      backendTls?: BackendTls,
    ) =>
    (svc: Service, port: ServicePort, asked?: IpFamily): string => {
      const family = asked ?? primaryFamily(svc, families);
      const name = familyName(
        named?.(svc, port) ??
          poolName(cluster, svc.metadata.namespace, svc.metadata.name, port.name || port.port),
        family,
      );
      if (!requests.has(name)) {
        const svcKey = key(svc.metadata);
        const policy = chosen.forPool(svcKey, port.name ?? '', health === 'http');
        requests.set(name, {
          name,
          svc,
          svcKey,
          port,
          health,
          family,
          ...(policy ? { policy } : {}),
          ...(backendProtocol ? { backendProtocol } : {}),
          ...(backendTls ? { backendTls } : {}),
        });
      }
      return name;
    };
}

/**
 * An IngressClass's `spec.parameters` resolved (gateway/parameters.ts). Another kind (another
 * controller's, left behind) is set aside, said, and the class served where
 * the load balancer places it, as before npl-lb read parameters.
 */
function ingressClassParameters(view: ClusterView, resolve: ParametersOf, cls: string): Resolved {
  const ref = view.ingressClasses.find((c) => c.metadata.name === cls)?.spec.parameters;
  // Another kind (another controller's, left behind): said and set aside, the
  // class served where the load balancer places it, as before npl-lb read parameters.
  if (ref && (ref.apiGroup !== PARAMETERS_GROUP || ref.kind !== PARAMETERS_KIND))
    return {
      placement: undefined,
      ignored: `spec.parameters names ${ref.apiGroup ?? 'core'}/${ref.kind.slice(0, 64)} ${ref.name.slice(0, 64)}; npl-lb reads ${PARAMETERS_GROUP}/${PARAMETERS_KIND} only: set aside, the class is served where the load balancer places it`,
    };
  return resolve(
    ref && { group: ref.apiGroup ?? '', kind: ref.kind, name: ref.name },
    // A namespaced reference says its namespace; a Cluster one has none (and ours is namespaced).
    {
      field: 'spec.parameters',
      namespace: ref?.scope === 'Namespace' ? (ref.namespace ?? '') : undefined,
    },
  );
}

/**
 * A LoadBalancer Service's parameters: those the controller's configuration maps its
 * `spec.loadBalancerClass` to (loadBalancerClasses), resolved as a class's are; none for a class
 * not mapped (loadBalancerClass, or none with defaultLoadBalancer).
 */
function serviceClassParameters(
  cfg: ControllerConfig,
  resolve: ParametersOf,
  svc: ClusterView['services'][number],
): Resolved {
  const mapped = cfg.loadBalancerClasses.find((c) => c.name === svc.spec.loadBalancerClass);
  if (!mapped) return { placement: undefined };
  return resolve(
    { group: PARAMETERS_GROUP, kind: PARAMETERS_KIND, name: mapped.parameters.name },
    { field: 'loadBalancerClasses (controller configuration)', namespace: mapped.parameters.namespace },
  );
}

/**
 * The classes' pool defaults (LoadBalancerParameters `defaults`) on the pools their virtual
 * services use, where no BackendPolicy (nor an Ingress's annotations) says: a pool that classes
 * asking different defaults share takes none of them, said on its Service.
 */
function classDefaults(
  vss: readonly VirtualService[],
  byVs: readonly ReadonlyMap<string, PoolPolicy>[],
  requests: ReadonlyMap<string, PoolRequest>,
): Finding[] {
  const asked = new Map<string, PoolPolicy[]>();
  for (const vs of vss) {
    const d = byVs.map((m) => m.get(vs.name)).find(Boolean);
    if (!d) continue;
    for (const p of poolRefs(vs)) {
      const list = asked.get(p);
      if (!list) asked.set(p, [d]);
      else if (!list.includes(d)) list.push(d);
    }
  }
  const findings: Finding[] = [];
  const same = (a: PoolPolicy, b: PoolPolicy) =>
    JSON.stringify({ ...a, policy: '' }) === JSON.stringify({ ...b, policy: '' });
  for (const [pool, list] of asked) {
    const req = requests.get(pool);
    if (!req || req.policy) continue;
    if (list.every((d) => same(d, list[0]!))) req.policy = list[0]!;
    else
      findings.push({
        kind: 'Service',
        key: req.svcKey,
        type: 'Warning',
        reason: EventReasons.PolicyNotApplied,
        message: `port ${String(req.port.name || req.port.port)}: classes that route to it ask different pool defaults (${[...new Set(list.map((d) => d.policy))].join(', ')}); none applied`,
      });
  }
  return findings;
}

/**
 * What an Ingress's TLS annotations read: re-encryption (ingress/backend-tls.ts: the CA
 * ConfigMaps, what the device verifies) and client certificates (ingress/client-ca.ts: asked per
 * host, with 421 beside).
 */
function ingressTlsAnnotations(
  view: ClusterView,
  lb: LoadBalancerInfo,
): Pick<IngressClassContext, 'backendTls' | 'clientCa'> {
  const configMap = caConfigMapLookup(view.configMaps);
  return {
    backendTls: { configMap, can: lb.caps.http?.backendTls, adapter: lb.name },
    clientCa: {
      configMap,
      can: lb.caps.http?.clientValidationByHost === true && lb.caps.http.misdirectedRequests === true,
      adapter: lb.name,
    },
  };
}

/**
 * The address families the load balancer can serve here, and the functions that ask for each kind
 * of pool (L4, HTTP, HTTP/2, TLS to members), recording every request in `requests`.
 */
function poolMakers(
  requests: Map<string, PoolRequest>,
  chosen: Parameters<typeof poolRequester>[2],
  cfg: ControllerConfig,
  lb: LoadBalancerInfo,
) {
  const servable = servableFamilies(
    FAMILIES.filter((f) => cidrsOf(cfg.vip.cidrs, f).length > 0),
    lb,
  );
  return {
    servable,
    ...poolKinds(poolRequester(requests, cfg.clusterName, chosen, servable.families), cfg.clusterName, lb),
    variantPoolFor: lb.caps.http?.retry || lb.caps.http?.sessionCookie ? ruleVariant(requests) : undefined,
  };
}

/**
 * A pool (`make` asks for it), as a route rule's retries and session cookie ask it: a variant of
 * its own (retryPoolName, then sessionPoolName), the same Service port, policy and TLS with the
 * rule's asks over them. A rule asking neither gets the pool itself.
 */
function ruleVariant(requests: Map<string, PoolRequest>) {
  return (make: () => string, variant: RuleVariant): string => {
    const { retry, session } = variant;
    const before = requests.size;
    const pool = make();
    if (!retry && !session) return pool;
    // A base pool asked for the first time here is used by nothing else (yet): not put on the
    // device. A rule asking it plainly later asks it again.
    const fresh = requests.size > before;
    const base = requests.get(pool)!;
    const retried = retry ? retryPoolName(pool, retry) : pool;
    const name = session ? sessionPoolName(retried, session) : retried;
    if (!requests.has(name))
      requests.set(name, { ...base, name, ...(retry ? { retry } : {}), ...(session ? { session } : {}) });
    if (fresh) requests.delete(pool);
    return name;
  };
}

export function desiredFrontends(
  view: ClusterView,
  cfg: ControllerConfig,
  lb: LoadBalancerInfo,
  certificateOf: SecretCertificates = secretCertificates(
    view.secrets ?? [],
    cfg.clusterName,
    view.now ?? Date.now(),
  ),
): Frontends {
  const cluster = cfg.clusterName;
  const requests = new Map<string, PoolRequest>();
  const policies = resolveBackendPolicies(view.backendPolicies ?? [], view.services, lb.caps, lb.name);
  const svcByKey = new Map(view.services.map((s) => [key(s.metadata), s]));
  const byClass = ingressesByClass(view.ingresses, view.ingressClasses, cfg);
  // Ingress authors' policy annotations, on the HTTP pools of their Services; a BackendPolicy wins.
  const chosen = poolPolicies(
    policies,
    ingressPolicies([...byClass.values()].flat(), svcByKey, lb.caps, lb.name),
  );
  const makers = poolMakers(requests, chosen, cfg, lb);
  const { servable, l4PoolFor, httpPoolFor, h2PoolFor, tlsPoolFor, l4TlsPoolFor, variantPoolFor } = makers;
  const lbServices = ourLoadBalancerServices(view.services, cfg);
  // Class parameters, each resolved once this pass (VIP ranges and placement alike).
  const resolve = parametersTable(view, cfg, lb);
  const { choices, vipOf } = frontendVips(lbServices, byClass, view, cfg, lb, servable, resolve);
  const l4 = loadBalancerServices(
    lbServices,
    cluster,
    (m) => vipOf({ kind: 'service', namespace: m.namespace, name: m.name }),
    l4PoolFor,
    choices,
    (svc) => serviceClassParameters(cfg, resolve, svc),
  );
  const ing = ingressFrontends(byClass, (cls) => vipOf({ kind: 'ingressclass', name: cls }), {
    cluster,
    httpPort: cfg.ingressHttpPort,
    httpsPort: cfg.ingressHttpsPort,
    services: svcByKey,
    poolFor: httpPoolFor,
    certificateOf,
    parametersOfClass: (cls) => ingressClassParameters(view, resolve, cls),
    ...ingressTlsAnnotations(view, lb),
    tlsPoolFor,
  });
  const gateways = gatewaysFromView(view, cfg, lb, {
    parametersOf: resolve,
    services: svcByKey,
    poolFor: httpPoolFor,
    h2PoolFor,
    tlsPoolFor,
    variantPoolFor,
    l4PoolFor,
    l4TlsPoolFor,
    certificateOf,
    vipOf: (m) => vipOf({ kind: 'gateway', namespace: m.namespace, name: m.name }),
  });
  const defaulted = classDefaults(
    [...l4.virtualServices, ...ing.virtualServices, ...(gateways?.virtualServices ?? [])],
    [l4.defaults, ing.defaults, gateways?.defaults ?? new Map()],
    requests,
  );
  const certificates = new Map(ing.certificates.map((c) => [c.name, c]));
  for (const c of gateways?.certificates ?? []) certificates.set(c.name, c);
  return {
    virtualServices: [...l4.virtualServices, ...ing.virtualServices, ...(gateways?.virtualServices ?? [])],
    certificates: [...certificates.values()],
    services: l4.services,
    ingresses: ing.ingresses,
    gateways,
    findings: [...l4.findings, ...ing.findings, ...chosen.findings, ...defaulted],
    pools: [...requests.values()],
    policies: policies.statuses,
  };
}
