/**
 * A Gateway's listeners as the spec judges them: protocol supported by the configured load
 * balancer, hostname valid, route kinds it allows, certificates resolved (a Secret in another
 * namespace needs a ReferenceGrant), and conflicts between listeners on one port. Each gets its
 * conditions (Accepted, Programmed, ResolvedRefs, Conflicted) and supportedKinds. Pure.
 */
import {
  GATEWAY_GROUP,
  GATEWAY_ROUTES,
  type Gateway,
  type Listener,
  type ReferenceGrant,
  type RouteGroupKind,
} from '../../kube/gateway-objects.ts';
import { certificateName } from '../../model/names.ts';
import type { Certificate, ClientValidation } from '../../model/types.ts';
import type { SecretCertificates } from '../ingress/tls.ts';
import { hostProblem } from '../validate.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { type ConfigMapLookup, resolveFrontendTls } from './frontend-tls.ts';
import { referencePermitted } from './reference-grants.ts';
import type { ListenerProtocol, ProtocolSupport } from './protocols.ts';
import { ROUTE_SEMANTICS } from './route-kinds.ts';

export type { ListenerProtocol, ProtocolSupport } from './protocols.ts';

export interface ListenerState {
  listener: Listener;
  protocol: ListenerProtocol | undefined;
  supportedKinds: RouteGroupKind[];
  /** Accepted and not conflicted: routes may attach. */
  attachable: boolean;
  /** What the load balancer will serve it with (HTTPS: the certificates that resolved). */
  certificates: Certificate[];
  /** HTTPS: the client certificates asked at its port (the Gateway's spec.tls.frontend). */
  clientValidation?: ClientValidation;
  /** The routes attached to it (Kind namespace/name), filled by route attachment. */
  attached: Set<string>;
  conditions: ConditionSpec[];
  /** Set when it can be programmed (attachable, and for HTTPS at least one certificate). */
  programmable: boolean;
  /** A TLS listener in Terminate mode, served: the handshake ends at the load balancer. */
  terminate?: boolean;
}

const PROTOCOLS: ReadonlySet<string> = new Set<ListenerProtocol>(['HTTP', 'HTTPS', 'TLS', 'TCP', 'UDP']);

/** The route kinds a listener of this protocol carries where the load balancer serves them. */
const kindsOn = (protocol: ListenerProtocol, support: ProtocolSupport): string[] =>
  ROUTE_SEMANTICS.filter((r) => r.protocols.includes(protocol) && (r.served?.(support) ?? true)).map(
    (r) => GATEWAY_ROUTES[r.key].kind,
  );

/** The transport a listener's port is bound on (protocols on one port and transport conflict). */
export const transport = (p: string): string => (p === 'UDP' ? 'UDP' : 'TCP');

export interface ListenerContext {
  cluster: string;
  adapter: string;
  support: ProtocolSupport;
  grants: readonly ReferenceGrant[];
  certificateOf: SecretCertificates;
  /** ConfigMaps' `ca.crt` (client certificate CAs); absent: none resolve. */
  configMap?: ConfigMapLookup;
}

/** The key two listeners conflict on when equal: port, protocol and (but TCP and UDP) hostname. */
export const hostKey = (l: Listener): string =>
  `${l.port}/${l.protocol}/${l.protocol === 'TCP' || l.protocol === 'UDP' ? '' : (l.hostname ?? '')}`;

/**
 * Accepted, or why not; `terminate`: a TLS listener in Terminate mode (where the load balancer
 * terminates TLS listeners, TLSRoutes attach to it; else no route kind does).
 */
function acceptance(
  gw: Gateway,
  l: Listener,
  protocol: ListenerProtocol | undefined,
  ctx: ListenerContext,
): { accepted: ConditionSpec; terminate: boolean } {
  const no = (reason: string, message: string) => ({
    accepted: cond('Accepted', false, reason, message),
    terminate: false,
  });
  if (!protocol) return no('UnsupportedProtocol', `protocol ${l.protocol} is not supported`);
  if (!ctx.support[protocol])
    return no(
      'UnsupportedProtocol',
      `the ${ctx.adapter} load balancer does not support ${protocol} listeners`,
    );
  // The Gateway API's rule when TLSRoute termination is not supported: UnsupportedValue.
  const terminate = protocol === 'TLS' && l.tls?.mode !== 'Passthrough';
  if (terminate && !ctx.support.tlsTerminate)
    return {
      ...no(
        'UnsupportedValue',
        `tls.mode ${l.tls?.mode ?? 'Terminate'}: TLS listeners are served in Passthrough mode only`,
      ),
      terminate: true,
    };
  if (l.hostname !== undefined && hostProblem(l.hostname))
    return no('UnsupportedValue', `hostname: ${hostProblem(l.hostname)}`);
  // Implementation-specific TLS options: npl-lb reads none, so a listener asking one is not served
  // as if it had not asked.
  const options = Object.keys((l.tls as { options?: Record<string, unknown> } | undefined)?.options ?? {});
  if (options.length > 0)
    return no(
      'UnsupportedValue',
      `tls.options ${options.map((o) => JSON.stringify(o.slice(0, 64))).join(', ')}: npl-lb reads no TLS options`,
    );
  const tls = gatewayTlsProblem(gw, l, protocol, ctx);
  if (tls) return { ...no('UnsupportedValue', tls), terminate };
  return { accepted: cond('Accepted', true, 'Accepted'), terminate };
}

/**
 * A Gateway's `spec.tls` that a listener would serve without (fail closed, never ignored): client
 * certificate validation for its HTTPS port (the default, or its port's entry), or a certificate
 * to present to backends (every listener's routes reach backends), where the load balancer does
 * neither. The field is named, and the listener is not served rather than served unchecked.
 */
function gatewayTlsProblem(
  gw: Gateway,
  l: Listener,
  protocol: ListenerProtocol,
  ctx: ListenerContext,
): string | undefined {
  const tls = gw.spec.tls;
  if (!tls) return undefined;
  if (protocol === 'HTTPS' && !ctx.support.clientCertificates) {
    const i = (tls.frontend?.perPort ?? []).findIndex((p) => p.port === l.port);
    const perPort = i >= 0 ? tls.frontend!.perPort![i]!.tls.validation : undefined;
    const field =
      perPort !== undefined
        ? `spec.tls.frontend.perPort[${i}].tls.validation`
        : tls.frontend?.default?.validation !== undefined
          ? 'spec.tls.frontend.default.validation'
          : undefined;
    if (field)
      return `${field}: the ${ctx.adapter} load balancer does not validate client certificates; the listener is not served rather than served to clients without one`;
  }
  if (tls.backend?.clientCertificateRef !== undefined && !ctx.support.backendClientCertificates)
    return `spec.tls.backend.clientCertificateRef: the ${ctx.adapter} load balancer does not present client certificates to backends; the listener is not served until it is removed`;
  return undefined;
}

/** The route kinds asked for that this protocol can carry, and a ResolvedRefs problem for the rest. */
function routeKinds(
  l: Listener,
  protocol: ListenerProtocol | undefined,
  terminate: boolean,
  ctx: ListenerContext,
): { kinds: RouteGroupKind[]; problem?: ConditionSpec } {
  const valid = protocol && (!terminate || ctx.support.tlsTerminate) ? kindsOn(protocol, ctx.support) : [];
  const fits = (k: RouteGroupKind) => k.group === GATEWAY_GROUP && valid.includes(k.kind);
  const asked = l.allowedRoutes.kinds;
  const kinds = (asked.length > 0 ? asked : valid.map((kind) => ({ group: GATEWAY_GROUP, kind }))).filter(
    fits,
  );
  if (asked.length === 0 || kinds.length === asked.length) return { kinds };
  const bad = asked.filter((k) => !fits(k));
  return {
    kinds,
    problem: cond(
      'ResolvedRefs',
      false,
      'InvalidRouteKinds',
      `route kinds ${bad.map((k) => `${k.group}/${k.kind}`).join(', ')} cannot attach to a ${l.protocol} listener`,
    ),
  };
}

/**
 * An HTTPS (or terminating TLS) listener's certificates that resolve, and a ResolvedRefs problem
 * per one that does not.
 */
function listenerCertificates(
  l: Listener,
  owner: ListenerOwner,
  ctx: ListenerContext,
): { certificates: Certificate[]; problems: ConditionSpec[] } {
  const certificates: Certificate[] = [];
  const problems: ConditionSpec[] = [];
  const refsOf = l.tls?.certificateRefs ?? [];
  if (refsOf.length === 0)
    problems.push(
      cond(
        'ResolvedRefs',
        false,
        'InvalidCertificateRef',
        `a ${l.protocol} listener needs tls.certificateRefs`,
      ),
    );
  refsOf.forEach((r, i) => {
    const field = `tls.certificateRefs[${i}]`;
    const ns = owner.namespace;
    const target = r.namespace ?? ns;
    if (r.group !== '' || r.kind !== 'Secret') {
      problems.push(
        cond('ResolvedRefs', false, 'InvalidCertificateRef', `${field}: only core Secrets are supported`),
      );
      return;
    }
    // A ListenerSet's grants are its own: neither it nor its Gateway inherits the other's (GEP-1713).
    const from = { group: GATEWAY_GROUP, kind: owner.kind, namespace: ns };
    if (
      !referencePermitted(ctx.grants, from, { group: '', kind: 'Secret', namespace: target, name: r.name })
    ) {
      problems.push(
        cond(
          'ResolvedRefs',
          false,
          'RefNotPermitted',
          `${field}: Secret ${target}/${r.name} is in another namespace and no ReferenceGrant allows it`,
        ),
      );
      return;
    }
    const res = ctx.certificateOf(`${target}/${r.name}`);
    if (!res || 'problem' in res) {
      const why = res?.problem ?? `Secret ${target}/${r.name} not found (or not of type kubernetes.io/tls)`;
      problems.push(cond('ResolvedRefs', false, 'InvalidCertificateRef', `${field}: ${why}`));
      return;
    }
    const name = certificateName(ctx.cluster, target, r.name);
    if (!certificates.some((c) => c.name === name)) certificates.push({ ...res.certificate, name });
  });
  return { certificates, problems };
}

/** Conflicted, from how many listeners share each port and transport's protocols and each host key. */
function conflict(
  l: Listener,
  protocol: ListenerProtocol | undefined,
  protocolsOn: ReadonlyMap<string, Set<string>>,
  hostsOn: ReadonlyMap<string, number>,
): ConditionSpec {
  if (protocol && (protocolsOn.get(`${l.port}/${transport(l.protocol)}`)?.size ?? 0) > 1)
    return cond(
      'Conflicted',
      true,
      'ProtocolConflict',
      `another listener on port ${l.port} uses another protocol`,
    );
  if ((hostsOn.get(hostKey(l)) ?? 0) > 1)
    return cond(
      'Conflicted',
      true,
      'HostnameConflict',
      `another ${l.protocol} listener on port ${l.port} has the same hostname`,
    );
  return cond('Conflicted', false, 'NoConflicts');
}

/**
 * Whose listeners are judged: a Gateway's own, or a ListenerSet's (its namespace for certificate
 * references and its grants; the Gateway's `spec.tls` still applies to the port they share).
 */
export interface ListenerOwner {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
  listeners: Listener[];
  /**
   * Listeners (by name) that yield their place to an earlier one of the merged list (a set's to
   * its Gateway's or an older set's): left out when its own listeners' conflicts are counted.
   */
  yields?: ReadonlySet<string>;
}

/**
 * What each port's listeners ask, for conflicts: one protocol per port and transport; one listener
 * per port, protocol and hostname. Where Terminate is served and Mixed is not, TLS listeners of both
 * modes on one port conflict as two protocols would; where Terminate is not, the Terminate one alone
 * is refused.
 */
function portUse(
  owner: ListenerOwner,
  ctx: ListenerContext,
): { protocolsOn: Map<string, Set<string>>; hostsOn: Map<string, number> } {
  const protocolsOn = new Map<string, Set<string>>();
  const hostsOn = new Map<string, number>();
  for (const l of owner.listeners) {
    if (owner.yields?.has(l.name)) continue;
    const k = `${l.port}/${transport(l.protocol)}`;
    // Where Mixed mode is served, a port's TLS listeners share it whatever their modes.
    const as =
      l.protocol === 'TLS' && ctx.support.tlsTerminate && !ctx.support.tlsMixed
        ? `TLS/${l.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate'}`
        : l.protocol;
    protocolsOn.set(k, (protocolsOn.get(k) ?? new Set()).add(as));
    hostsOn.set(hostKey(l), (hostsOn.get(hostKey(l)) ?? 0) + 1);
  }
  return { protocolsOn, hostsOn };
}

export function resolveListeners(
  gw: Gateway,
  ctx: ListenerContext,
  owner: ListenerOwner = { kind: 'Gateway', namespace: gw.metadata.namespace, listeners: gw.spec.listeners },
): ListenerState[] {
  const listeners = owner.listeners;
  const { protocolsOn, hostsOn } = portUse(owner, ctx);
  return listeners.map((l): ListenerState => {
    const protocol = PROTOCOLS.has(l.protocol) ? (l.protocol as ListenerProtocol) : undefined;
    const judged = acceptance(gw, l, protocol, ctx);
    const { terminate } = judged;
    // Client certificates asked at an HTTPS port: a listener none of whose CAs resolves is not
    // accepted (never served unchecked); acceptance() has refused them where not supported.
    const frontend =
      protocol === 'HTTPS' && judged.accepted.status && ctx.support.clientCertificates
        ? resolveFrontendTls(gw, l.port, {
            configMap: ctx.configMap ?? (() => undefined),
            grants: ctx.grants,
            subjectHeader: ctx.support.clientSubjectHeader === true,
            adapter: ctx.adapter,
          })
        : {};
    const conflicted = conflict(l, protocol, protocolsOn, hostsOn);
    // TLS listeners of both modes on one port: neither is accepted (ProtocolConflict, as the
    // Gateway API asks where Mixed mode is not served).
    const mixed =
      protocol === 'TLS' &&
      conflicted.status &&
      [...(protocolsOn.get(`${l.port}/TCP`) ?? [])].every((p) => p.startsWith('TLS/'));
    const accepted = mixed
      ? cond(
          'Accepted',
          false,
          'ProtocolConflict',
          `TLS listeners of both modes on port ${l.port}: Mixed mode is not served`,
        )
      : (frontend.accepted ?? judged.accepted);
    // A listener refused for Mixed mode carries no route kind (as upstream's test asks).
    const kinds = mixed ? { kinds: [] } : routeKinds(l, protocol, terminate, ctx);
    const terminating = terminate && ctx.support.tlsTerminate === true;
    const certs =
      (protocol === 'HTTPS' || terminating) && accepted.status
        ? listenerCertificates(l, owner, ctx)
        : { certificates: [], problems: [] };
    const attachable = accepted.status && !conflicted.status;
    const programmable =
      attachable && ((protocol !== 'HTTPS' && !terminating) || certs.certificates.length > 0);
    const resolved =
      kinds.problem ??
      certs.problems[0] ??
      frontend.resolvedRefs ??
      cond('ResolvedRefs', true, 'ResolvedRefs');
    const programmed = programmable
      ? cond('Programmed', true, 'Programmed')
      : cond(
          'Programmed',
          false,
          'Invalid',
          (!accepted.status ? accepted : conflicted.status ? conflicted : resolved).message,
        );
    return {
      listener: l,
      protocol,
      supportedKinds: kinds.kinds,
      attachable,
      certificates: certs.certificates,
      ...(frontend.validation ? { clientValidation: frontend.validation } : {}),
      attached: new Set(),
      conditions: [accepted, programmed, resolved, conflicted],
      programmable,
      ...(terminating && accepted.status ? { terminate: true } : {}),
    };
  });
}
