/**
 * A Gateway's listeners as the spec judges them: protocol supported by the configured load
 * balancer, hostname valid, route kinds it allows, certificates resolved (a Secret in another
 * namespace needs a ReferenceGrant), and conflicts between listeners on one port. Each gets its
 * conditions (Accepted, Programmed, ResolvedRefs, Conflicted) and supportedKinds. Pure.
 */
import {
  GATEWAY_GROUP,
  type Gateway,
  type Listener,
  type ReferenceGrant,
  type RouteGroupKind,
} from '../../kube/gateway-objects.ts';
import { certificateName } from '../../model/names.ts';
import type { Certificate } from '../../model/types.ts';
import type { SecretCertificates } from '../ingress-tls.ts';
import { hostProblem } from '../validate.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { referencePermitted } from './reference-grants.ts';

export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';

/** Which listener protocols the configured load balancer serves (from its Capabilities). */
export type ProtocolSupport = Record<ListenerProtocol, boolean> & {
  /** GRPCRoute on HTTP and HTTPS listeners (HttpCapabilities.http2). */
  grpc?: boolean;
};

export interface ListenerState {
  listener: Listener;
  protocol: ListenerProtocol | undefined;
  supportedKinds: RouteGroupKind[];
  /** Accepted and not conflicted: routes may attach. */
  attachable: boolean;
  /** What the load balancer will serve it with (HTTPS: the certificates that resolved). */
  certificates: Certificate[];
  /** The routes attached to it (Kind namespace/name), filled by route attachment. */
  attached: Set<string>;
  conditions: ConditionSpec[];
  /** Set when it can be programmed (attachable, and for HTTPS at least one certificate). */
  programmable: boolean;
}

const KINDS: Record<ListenerProtocol, string[]> = {
  HTTP: ['HTTPRoute'],
  HTTPS: ['HTTPRoute'],
  TLS: ['TLSRoute'],
  TCP: ['TCPRoute'],
  UDP: ['UDPRoute'],
};

const transport = (p: string): string => (p === 'UDP' ? 'UDP' : 'TCP');

export interface ListenerContext {
  cluster: string;
  adapter: string;
  support: ProtocolSupport;
  grants: readonly ReferenceGrant[];
  certificateOf: SecretCertificates;
}

export function resolveListeners(gw: Gateway, ctx: ListenerContext): ListenerState[] {
  const ns = gw.metadata.namespace;
  const listeners = gw.spec.listeners;
  // Conflicts: one protocol per port and transport; one listener per port, protocol and hostname.
  const protocolsOn = new Map<string, Set<string>>();
  const hostsOn = new Map<string, number>();
  for (const l of listeners) {
    const k = `${l.port}/${transport(l.protocol)}`;
    protocolsOn.set(k, (protocolsOn.get(k) ?? new Set()).add(l.protocol));
    const hk = `${l.port}/${l.protocol}/${l.protocol === 'TCP' || l.protocol === 'UDP' ? '' : (l.hostname ?? '')}`;
    hostsOn.set(hk, (hostsOn.get(hk) ?? 0) + 1);
  }

  return listeners.map((l): ListenerState => {
    const protocol = l.protocol in KINDS ? (l.protocol as ListenerProtocol) : undefined;
    const out: ListenerState = {
      listener: l,
      protocol,
      supportedKinds: [],
      attachable: false,
      certificates: [],
      attached: new Set(),
      conditions: [],
      programmable: false,
    };
    const refs: ConditionSpec[] = [];
    let accepted: ConditionSpec = cond('Accepted', true, 'Accepted');
    /** A TLS listener in Terminate mode: TLSRoute termination is not served, no kind attaches. */
    let terminate = false;
    if (!protocol) {
      accepted = cond('Accepted', false, 'UnsupportedProtocol', `protocol ${l.protocol} is not supported`);
    } else if (!ctx.support[protocol]) {
      accepted = cond(
        'Accepted',
        false,
        'UnsupportedProtocol',
        `the ${ctx.adapter} load balancer does not support ${protocol} listeners`,
      );
    } else if (protocol === 'TLS' && l.tls?.mode !== 'Passthrough') {
      // The Gateway API's rule when TLSRoute termination is not supported: UnsupportedValue.
      terminate = true;
      accepted = cond(
        'Accepted',
        false,
        'UnsupportedValue',
        `tls.mode ${l.tls?.mode ?? 'Terminate'}: TLS listeners are served in Passthrough mode only`,
      );
    } else if (l.hostname !== undefined && hostProblem(l.hostname)) {
      accepted = cond('Accepted', false, 'UnsupportedValue', `hostname: ${hostProblem(l.hostname)}`);
    }

    // Route kinds: the ones asked for that this protocol can carry.
    const valid =
      protocol && !terminate
        ? [
            ...KINDS[protocol],
            ...(ctx.support.grpc && (protocol === 'HTTP' || protocol === 'HTTPS') ? ['GRPCRoute'] : []),
          ]
        : [];
    const asked = l.allowedRoutes.kinds;
    out.supportedKinds = (
      asked.length > 0 ? asked : valid.map((kind) => ({ group: GATEWAY_GROUP, kind }))
    ).filter((k) => k.group === GATEWAY_GROUP && valid.includes(k.kind));
    if (asked.length > 0 && out.supportedKinds.length < asked.length) {
      const bad = asked.filter((k) => !(k.group === GATEWAY_GROUP && valid.includes(k.kind)));
      refs.push(
        cond(
          'ResolvedRefs',
          false,
          'InvalidRouteKinds',
          `route kinds ${bad.map((k) => `${k.group}/${k.kind}`).join(', ')} cannot attach to a ${l.protocol} listener`,
        ),
      );
    }

    // Certificates of an HTTPS listener.
    if (protocol === 'HTTPS' && accepted.status) {
      const refsOf = l.tls?.certificateRefs ?? [];
      if (refsOf.length === 0) {
        refs.push(
          cond('ResolvedRefs', false, 'InvalidCertificateRef', 'an HTTPS listener needs tls.certificateRefs'),
        );
      }
      refsOf.forEach((r, i) => {
        const field = `tls.certificateRefs[${i}]`;
        const target = r.namespace ?? ns;
        if (r.group !== '' || r.kind !== 'Secret') {
          refs.push(
            cond('ResolvedRefs', false, 'InvalidCertificateRef', `${field}: only core Secrets are supported`),
          );
          return;
        }
        const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: ns };
        if (
          !referencePermitted(ctx.grants, from, {
            group: '',
            kind: 'Secret',
            namespace: target,
            name: r.name,
          })
        ) {
          refs.push(
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
          const why =
            res?.problem ?? `Secret ${target}/${r.name} not found (or not of type kubernetes.io/tls)`;
          refs.push(cond('ResolvedRefs', false, 'InvalidCertificateRef', `${field}: ${why}`));
          return;
        }
        const name = certificateName(ctx.cluster, target, r.name);
        if (!out.certificates.some((c) => c.name === name))
          out.certificates.push({ ...res.certificate, name });
      });
    }

    const conflicts = protocol && (protocolsOn.get(`${l.port}/${transport(l.protocol)}`)?.size ?? 0) > 1;
    const hk = `${l.port}/${l.protocol}/${l.protocol === 'TCP' || l.protocol === 'UDP' ? '' : (l.hostname ?? '')}`;
    const conflicted = conflicts
      ? cond(
          'Conflicted',
          true,
          'ProtocolConflict',
          `another listener on port ${l.port} uses another protocol`,
        )
      : (hostsOn.get(hk) ?? 0) > 1
        ? cond(
            'Conflicted',
            true,
            'HostnameConflict',
            `another ${l.protocol} listener on port ${l.port} has the same hostname`,
          )
        : cond('Conflicted', false, 'NoConflicts');

    out.attachable = accepted.status && !conflicted.status;
    out.programmable = out.attachable && (protocol !== 'HTTPS' || out.certificates.length > 0);
    const resolved = refs[0] ?? cond('ResolvedRefs', true, 'ResolvedRefs');
    const programmed = out.programmable
      ? cond('Programmed', true, 'Programmed')
      : cond(
          'Programmed',
          false,
          'Invalid',
          (!accepted.status ? accepted : conflicted.status ? conflicted : resolved).message,
        );
    out.conditions = [accepted, programmed, resolved, conflicted];
    return out;
  });
}
