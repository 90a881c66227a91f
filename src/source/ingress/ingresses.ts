/**
 * Ingresses of our classes -> per class, the shared virtual services (ingress/class.ts), the
 * certificates they serve and each Ingress's status; a tenant's `npl-lb.io/vip` on an Ingress of
 * a shared class is refused with a Warning (the class's VIP is the class owner's). Pure.
 */
import type { PoolPolicy } from '../backend-policies.ts';
import { inFamilies, statusInFamilies } from '../vips/twins.ts';
import type { ControllerConfig } from '../../config/controller-config.ts';
import { VIP_ANNOTATION } from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, IngressClass } from '../../kube/objects.ts';
import type { Certificate, VirtualService } from '../../model/types.ts';
import { type IngressClassContext, ingressClassServices } from './class.ts';
import { ingressClassOf, ourIngressClasses } from '../ours.ts';
import type { Finding, SourceStatus, VipOutcome } from '../types.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** The Ingresses of each IngressClass of ours, by class name (in the order first seen). */
export function ingressesByClass(
  ingresses: Ingress[],
  classes: IngressClass[],
  cfg: ControllerConfig,
): Map<string, Ingress[]> {
  const ours = ourIngressClasses(classes, cfg);
  const byClass = new Map<string, Ingress[]>();
  for (const ing of ingresses) {
    const cls = ingressClassOf(ing, ours, cfg);
    if (cls) byClass.set(cls, [...(byClass.get(cls) ?? []), ing]);
  }
  return byClass;
}

export function ingressFrontends(
  byClass: ReadonlyMap<string, Ingress[]>,
  vipOf: (cls: string) => VipOutcome,
  ctx: IngressClassContext,
): {
  virtualServices: VirtualService[];
  certificates: Certificate[];
  ingresses: Map<string, SourceStatus>;
  findings: Finding[];
  /** The pool defaults of a virtual service's class (its parameters), by its name. */
  defaults: Map<string, PoolPolicy>;
} {
  const virtualServices: VirtualService[] = [];
  const defaults = new Map<string, PoolPolicy>();
  const certificates: Certificate[] = [];
  const ingresses = new Map<string, SourceStatus>();
  const findings: Finding[] = [];
  for (const [cls, ings] of byClass) {
    for (const ing of ings) {
      if (ing.metadata.annotations[VIP_ANNOTATION] === undefined) continue;
      findings.push({
        kind: 'Ingress',
        key: key(ing.metadata),
        type: 'Warning',
        reason: EventReasons.VIPAnnotationIgnored,
        message: `${VIP_ANNOTATION} is ignored on an Ingress: IngressClass ${cls} is shared, and its VIP is set on the IngressClass (annotation ${VIP_ANNOTATION}) by its owner`,
      });
    }
  }
  for (const [cls, ings] of [...byClass].sort(([a], [b]) => (a < b ? -1 : 1))) {
    // The class's LoadBalancerParameters: its placement, or why none (nothing programmed, said).
    const params = ctx.parametersOfClass?.(cls) ?? { placement: undefined };
    if ('invalid' in params) {
      for (const ing of ings)
        findings.push({
          kind: 'Ingress',
          key: key(ing.metadata),
          type: 'Warning',
          reason: EventReasons.InvalidParameters,
          message: `IngressClass ${cls}: ${params.invalid}; its virtual services are not programmed`,
        });
      continue;
    }
    if (params.ignored)
      for (const ing of ings)
        findings.push({
          kind: 'Ingress',
          key: key(ing.metadata),
          type: 'Warning',
          reason: EventReasons.InvalidParameters,
          message: `IngressClass ${cls}: ${params.ignored}`,
        });
    const placed = params.placement ? { placement: params.placement } : {};
    const vip = vipOf(cls);
    const r = ingressClassServices(cls, ings, vip, ctx);
    const served = inFamilies(
      r.virtualServices.map((v) => ({ ...v, ...placed })),
      vip,
    );
    virtualServices.push(...served);
    if (params.defaults) for (const v of served) defaults.set(v.name, params.defaults);
    certificates.push(...r.certificates);
    for (const [k, st] of r.ingresses) ingresses.set(k, statusInFamilies(st, vip));
    findings.push(...r.findings);
  }
  return { virtualServices, certificates, ingresses, findings, defaults };
}
