/**
 * Who asks for a VIP in a pass, and what each was given, in the terms of the sources: our
 * LoadBalancer Services (spec.loadBalancerIP or the npl-lb.io/vip annotation), each IngressClass
 * of ours (its own npl-lb.io/vip annotation: the class owner's, never one tenant's Ingress), and
 * our Gateways (spec.addresses). Each keeps what its status publishes. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { VIP_ANNOTATION } from '../kube/annotations.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { Ingress, Service } from '../kube/objects.ts';
import { gatewayVipRequests } from './gateway/from-view.ts';
import type { VipOutcome } from './types.ts';
import type { ClusterView } from './view.ts';
import { allocateVips, deviceVips, type VipRequest, type VipResult } from './vips.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

export function vipRequests(
  lbServices: Service[],
  byClass: ReadonlyMap<string, Ingress[]>,
  view: ClusterView,
  cfg: ControllerConfig,
): VipRequest[] {
  return [
    ...lbServices.map((s) => ({
      key: `service/${key(s.metadata)}`,
      requested: s.spec.loadBalancerIP || s.metadata.annotations[VIP_ANNOTATION],
      published: s.status.loadBalancer.ingress[0]?.ip,
    })),
    ...[...byClass.entries()].map(([cls, ings]) => ({
      key: `ingressclass/${cls}`,
      requested: view.ingressClasses.find((c) => c.metadata.name === cls)?.metadata.annotations[
        VIP_ANNOTATION
      ],
      published: ings.map((i) => i.status.loadBalancer.ingress[0]?.ip).find(Boolean),
    })),
    ...gatewayVipRequests(view, cfg),
  ];
}

/** The VIPs of a pass: from vip.cidrs, or `auto:` ones the device allocates. */
export const assignVips = (
  requests: VipRequest[],
  cfg: ControllerConfig,
  deviceAllocates: boolean | undefined,
): Map<string, VipResult> => (deviceAllocates ? deviceVips(requests) : allocateVips(requests, cfg.vip.cidrs));

/**
 * A VIP result as its source reports it: the address, or the problem with its Event reason.
 * `noCidrs`: vip.cidrs is empty (and the device allocates none), which is what to say then.
 */
export function vipOutcome(r: VipResult | undefined, noCidrs = false): VipOutcome {
  if (!r) return { problem: 'no VIP', reason: EventReasons.NoVIP };
  if ('vip' in r) return { vip: r.vip };
  if ('conflict' in r) return { problem: `VIP conflict: ${r.conflict}`, reason: EventReasons.VIPConflict };
  if ('invalid' in r) return { problem: r.invalid, reason: EventReasons.InvalidVIP };
  if (noCidrs)
    return {
      problem:
        'no VIP: vip.cidrs is empty; set vip.cidrs (or an IPAM network on an adapter that allocates VIPs)',
      reason: EventReasons.NoVIP,
    };
  return { problem: 'no free VIP in vip.cidrs', reason: EventReasons.NoVIP };
}
