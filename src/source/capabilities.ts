/**
 * What the configured load balancer can serve, applied to the desired state before it is planned
 * (the adapter's Capabilities):
 * - a virtual service that needs what the adapter lacks (UDP where a device balances none, L7 on an L4-only device,
 *   HTTPS where it holds no certificates) is not sent; its Service or Ingresses are told with a
 *   Warning naming the port or class, and a Service's status marks the port;
 * - a route that needs a match, filter or split the adapter lacks is left out of its virtual
 *   service and its source is told;
 * - pools and certificates only such virtual services or routes used are not sent either.
 * Pure.
 */
import type { Capabilities } from '../adapter/contract.ts';
import { INGRESS_HTTP } from '../adapter/http-capabilities.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import { certificateRefs, poolRefs } from '../model/refs.ts';
import type { VirtualService } from '../model/types.ts';
import { routeLacks } from './route-support.ts';
import type { DesiredResult, Finding, SourceStatus } from './types.ts';

function lacks(vs: VirtualService, caps: Capabilities): string | undefined {
  if (vs.kind === 'l7') {
    if (!caps.l7) return 'HTTP (L7) virtual services';
    return vs.protocol === 'HTTPS' && !caps.certificates ? 'TLS termination (HTTPS)' : undefined;
  }
  if (vs.certificates) {
    if (!caps.tlsTerminate) return 'TLS termination (TLS listeners in Terminate mode)';
    if (vs.sni?.some((r) => r.passthrough) && !caps.tlsMixed)
      return 'TLS listeners of both modes on one port (Mixed)';
  } else if (vs.sni && !caps.tlsPassthrough) return 'TLS passthrough';
  if (vs.sourceRanges && !caps.sourceRanges) return 'loadBalancerSourceRanges (client address filters)';
  if (vs.sourceRanges && caps.maxSourceRanges !== undefined && vs.sourceRanges.length > caps.maxSourceRanges)
    return `client filters of ${vs.sourceRanges.length} ranges (loadBalancerSourceRanges; at most ${caps.maxSourceRanges} per family)`;
  if (vs.protocol === 'UDP') return caps.l4.udp ? undefined : 'UDP';
  return caps.l4.tcp ? undefined : 'TCP';
}

/**
 * `applyCapabilities` for one adapter, remembering the virtual-service lists it had nothing to cut
 * from: whether anything is cut depends on the virtual services alone, and a pass that changed
 * only Pods hands over last pass's list, so it costs nothing.
 */
export function capabilityFilter(caps: Capabilities, adapter: string): (d: DesiredResult) => DesiredResult {
  const whole = new WeakSet<readonly VirtualService[]>();
  return (d) => {
    if (whole.has(d.state.virtualServices)) return d;
    const out = applyCapabilities(d, caps, adapter);
    if (out === d) whole.add(d.state.virtualServices);
    return out;
  };
}

/**
 * Routes first: a virtual service keeps the routes its adapter can serve (the others said, once
 * per Ingress and reason). An adapter with Ingress-style routes only orders them itself (Exact,
 * then the longest path), which is the Gateway API's precedence for such routes; `order` is not
 * sent to it.
 */
function trimRoutes(
  d: DesiredResult,
  caps: Capabilities,
  adapter: string,
  findings: Finding[],
): { trimmed: VirtualService[]; routesCut: boolean } {
  const http = caps.http ?? INGRESS_HTTP;
  const told = new Set<string>();
  let routesCut = false;
  const ingressStyle = caps.http === undefined;
  const trimmed = d.state.virtualServices.map((vs): VirtualService => {
    if (vs.kind !== 'l7') return vs;
    const kept = vs.routes.filter((r) => {
      const why = routeLacks(r, http);
      if (!why) return true;
      const mark = `${r.source}|${why}`;
      if (!told.has(mark) && d.ingresses.has(r.source)) {
        told.add(mark);
        findings.push({
          kind: 'Ingress',
          key: r.source,
          type: 'Warning',
          reason: EventReasons.UnsupportedByLoadBalancer,
          message: `the ${adapter} load balancer does not support ${why}: the rule for ${r.host || '*'}${r.path} is not served`,
        });
      }
      return false;
    });
    const ordered = ingressStyle && kept.some((r) => r.order !== undefined);
    if (kept.length === vs.routes.length && !ordered) return vs;
    routesCut = true;
    const routes = ordered ? kept.map(({ order: _order, ...r }) => r) : kept;
    return { ...vs, routes };
  });
  return { trimmed, routesCut };
}

export function applyCapabilities(d: DesiredResult, caps: Capabilities, adapter: string): DesiredResult {
  const findings: Finding[] = [];
  const { trimmed, routesCut } = trimRoutes(d, caps, adapter, findings);

  const refused = new Map<string, string>();
  for (const vs of trimmed) {
    const why = lacks(vs, caps);
    if (why) refused.set(vs.name, why);
  }
  if (refused.size === 0 && !routesCut) return d;
  const virtualServices = trimmed.filter((v) => !refused.has(v.name));
  const pools = new Set(virtualServices.flatMap(poolRefs));
  const certs = new Set(virtualServices.flatMap(certificateRefs));
  const byName = new Map(trimmed.map((v) => [v.name, v]));
  const narrow = (kind: Finding['kind'], sources: Map<string, SourceStatus>) => {
    if (refused.size === 0) return sources;
    const out = new Map<string, SourceStatus>();
    for (const [key, st] of sources) {
      const gone = st.virtualServices.filter((n) => refused.has(n));
      if (gone.length === 0) {
        out.set(key, st);
        continue;
      }
      out.set(key, {
        ...st,
        virtualServices: st.virtualServices.filter((n) => !refused.has(n)),
        unsupported: [...(st.unsupported ?? []), ...gone],
      });
      for (const n of gone) {
        const vs = byName.get(n)!;
        const what =
          vs.kind === 'l4'
            ? `port ${vs.port}/${vs.protocol}`
            : `${vs.protocol === 'HTTPS' ? 'the HTTPS hosts of ' : ''}IngressClass ${vs.ingressClass}`;
        findings.push({
          kind,
          key,
          type: 'Warning',
          reason: EventReasons.UnsupportedByLoadBalancer,
          message: `the ${adapter} load balancer does not support ${refused.get(n)!}: ${what} is not served`,
        });
      }
    }
    return out;
  };
  const certificates = d.state.certificates?.filter((c) => certs.has(c.name));
  return {
    ...d,
    state: {
      pools: d.state.pools.filter((p) => pools.has(p.name)),
      virtualServices,
      ...(certificates?.length ? { certificates } : {}),
    },
    services: narrow('Service', d.services),
    ingresses: narrow('Ingress', d.ingresses),
    findings: [...d.findings, ...findings],
  };
}
