/**
 * What the configured load balancer can serve, applied to the desired state before it is planned
 * (the adapter's Capabilities): a virtual service that needs what the adapter lacks (UDP on
 * HAProxy, L7 on an L4-only device) is not sent, its Service or Ingresses are told with a Warning
 * naming the port or class, and a Service's status marks the port; pools only such virtual
 * services used are not sent either. Pure.
 */
import type { Capabilities } from '../adapter/contract.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import { poolRefs } from '../model/refs.ts';
import type { VirtualService } from '../model/types.ts';
import type { DesiredResult, Finding, SourceStatus } from './desired.ts';

function lacks(vs: VirtualService, caps: Capabilities): string | undefined {
  if (vs.kind === 'l7') return caps.l7 ? undefined : 'HTTP (L7) virtual services';
  if (vs.protocol === 'UDP') return caps.l4.udp ? undefined : 'UDP';
  return caps.l4.tcp ? undefined : 'TCP';
}

export function applyCapabilities(d: DesiredResult, caps: Capabilities, adapter: string): DesiredResult {
  const refused = new Map<string, string>();
  for (const vs of d.state.virtualServices) {
    const why = lacks(vs, caps);
    if (why) refused.set(vs.name, why);
  }
  if (refused.size === 0) return d;
  const virtualServices = d.state.virtualServices.filter((v) => !refused.has(v.name));
  const used = new Set(virtualServices.flatMap(poolRefs));
  const byName = new Map(d.state.virtualServices.map((v) => [v.name, v]));
  const findings: Finding[] = [];
  const narrow = (kind: Finding['kind'], sources: Map<string, SourceStatus>) => {
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
        const what = vs.kind === 'l4' ? `port ${vs.port}/${vs.protocol}` : `IngressClass ${vs.ingressClass}`;
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
  return {
    ...d,
    state: { pools: d.state.pools.filter((p) => used.has(p.name)), virtualServices },
    services: narrow('Service', d.services),
    ingresses: narrow('Ingress', d.ingresses),
    findings: [...d.findings, ...findings],
  };
}
