/**
 * Who asks for a VIP in a pass, and what each was given, in the terms of the sources: our
 * LoadBalancer Services (spec.loadBalancerIP or the npl-lb.io/vip annotation), each IngressClass
 * of ours (its own npl-lb.io/vip annotation: the class owner's, never one tenant's Ingress), and
 * our Gateways (spec.addresses). Each keeps what its status publishes. Pure.
 */
import type { ControllerConfig } from '../../config/controller-config.ts';
import { SHARED_VIP_ANNOTATION, VIP_ANNOTATION } from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, Service } from '../../kube/objects.ts';
import { gatewayVipRequests } from '../gateway/from-view.ts';
import { type FamilyVipRequest, perFamily } from './family-requests.ts';
import { requesterKey, type VipRequester } from './requester.ts';
import { familyOf, type IpFamily } from '../ip-family.ts';
import type { FamilyChoice } from './service-families.ts';
import type { VipOutcome } from '../types.ts';
import type { ClusterView } from '../view.ts';
import { allocateVips, deviceVips, type VipResult } from './vips.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

export type { FamilyVipRequest };

/**
 * The families of an IngressClass: those of the addresses its owner asks for (the VIP annotation),
 * as a Gateway's `spec.addresses` do; every family served when it asks none (or none of a family).
 */
function classFamilies(asked: string | undefined, all: readonly IpFamily[]): IpFamily[] {
  const named = (asked ?? '')
    .split(',')
    .map((t) => familyOf(t.trim()))
    .filter((f): f is IpFamily => f !== undefined);
  return named.length > 0 ? [...new Set(named)] : [...all];
}

/** A sharing key: a letter or digit, then letters, digits, `-`, `_` and `.`, at most 63. */
const SHARING_KEY = /^[A-Za-z0-9][-A-Za-z0-9_.]{0,62}$/;

/**
 * What a Service asks of sharing (its sharing key and the ports it needs on the address), or why
 * the key cannot be read: the request is then refused whole, never served unshared by surprise.
 */
export function serviceShare(s: Service): { share?: FamilyVipRequest['share']; refused?: string } {
  const k = s.metadata.annotations[SHARED_VIP_ANNOTATION];
  if (k === undefined) return {};
  if (!SHARING_KEY.test(k))
    return {
      refused: `${SHARED_VIP_ANNOTATION}: ${JSON.stringify(k.slice(0, 64))} is not a sharing key (a letter or digit, then letters, digits, "-", "_" and ".", at most 63)`,
    };
  return { share: { key: k, ports: [...new Set(s.spec.ports.map((p) => `${p.protocol}/${p.port}`))] } };
}

export function vipRequests(
  lbServices: Service[],
  byClass: ReadonlyMap<string, Ingress[]>,
  view: ClusterView,
  cfg: ControllerConfig,
  families: { ofService: (svcKey: string) => FamilyChoice; all: readonly IpFamily[] },
): FamilyVipRequest[] {
  return [
    ...lbServices.flatMap((s) => {
      const { share, refused } = serviceShare(s);
      return perFamily(
        { kind: 'service', namespace: s.metadata.namespace, name: s.metadata.name },
        families.ofService(key(s.metadata)).families,
        [s.spec.loadBalancerIP || s.metadata.annotations[VIP_ANNOTATION]],
        s.status.loadBalancer.ingress.map((i) => i.ip),
      ).map((r, i) => ({
        ...r,
        ...(share ? { share } : {}),
        ...(refused && i === 0 && !r.refused ? { refused } : {}),
      }));
    }),
    ...[...byClass.entries()].flatMap(([cls, ings]) => {
      const asked = view.ingressClasses.find((c) => c.metadata.name === cls)?.metadata.annotations[
        VIP_ANNOTATION
      ];
      return perFamily(
        { kind: 'ingressclass', name: cls },
        classFamilies(asked, families.all),
        [asked],
        ings.flatMap((i) => i.status.loadBalancer.ingress.map((x) => x.ip)),
      );
    }),
    ...gatewayVipRequests(view, cfg, families.all),
  ];
}

/** The VIPs of a pass, per family: from vip.cidrs, or `auto:` ones the device allocates. */
export function assignVips(
  requests: FamilyVipRequest[],
  cfg: ControllerConfig,
  deviceAllocates: boolean | undefined,
): (key: string, family: IpFamily) => VipResult | undefined {
  const out = new Map<IpFamily, Map<string, VipResult>>();
  for (const family of new Set(requests.map((r) => r.family))) {
    const mine = requests.filter((r) => r.family === family);
    out.set(family, deviceAllocates ? deviceVips(mine, family) : allocateVips(mine, cfg.vip.cidrs, family));
  }
  return (k, family) => out.get(family)?.get(k);
}

/**
 * A VIP result as its source reports it: the address, or the problem with its Event reason.
 * `noCidrs`: vip.cidrs is empty (and the device allocates none), which is what to say then.
 */
export function vipOutcome(r: VipResult | undefined, noCidrs = false): VipOutcome {
  if (!r) return { problem: 'no VIP', reason: EventReasons.NoVIP };
  if ('vip' in r) return { vip: r.vip };
  if ('conflict' in r) return { problem: `VIP conflict: ${r.conflict}`, reason: EventReasons.VIPConflict };
  if ('invalid' in r)
    return {
      problem: r.invalid,
      reason: EventReasons.InvalidVIP,
      ...(r.unsupported ? { unsupported: true } : {}),
    };
  if (noCidrs)
    return {
      problem:
        'no VIP: vip.cidrs is empty; set vip.cidrs (or an IPAM network on an adapter that allocates VIPs)',
      reason: EventReasons.NoVIP,
    };
  return { problem: 'no free VIP in vip.cidrs', reason: EventReasons.NoVIP };
}

/**
 * Each object's VIPs as its source sees them: the first family's outcome, the further families'
 * addresses in `more`, and a further family's problem beside the addresses it has. An object asking
 * nothing in any family (none can be served) gets `unserved` as its problem.
 */
export function familyVips(
  requests: FamilyVipRequest[],
  vipIn: (key: string, family: IpFamily) => VipResult | undefined,
  o: { noCidrs: boolean; unserved: (r: VipRequester) => string | undefined },
): (r: VipRequester) => VipOutcome {
  const families = new Map<string, IpFamily[]>();
  for (const r of requests) {
    const list = families.get(r.key);
    if (list) list.push(r.family);
    else families.set(r.key, [r.family]);
  }
  return (requester) => {
    const k = requesterKey(requester);
    const fams = families.get(k) ?? [];
    const [first, ...rest] = fams;
    if (!first) {
      const why = o.unserved(requester);
      return why
        ? { problem: why, reason: EventReasons.IPFamilyNotServed }
        : vipOutcome(undefined, o.noCidrs);
    }
    const head = vipOutcome(vipIn(k, first), o.noCidrs);
    if (!head.vip) return head;
    const out: VipOutcome = { ...head, family: first };
    for (const f of rest) {
      const r = vipOutcome(vipIn(k, f), o.noCidrs);
      if (r.vip) (out.more ??= []).push({ family: f, vip: r.vip });
      else if (!out.problem) {
        out.problem = `${f}: ${r.problem ?? 'no VIP'}; served in ${[first, ...(out.more ?? []).map((m) => m.family)].join(' and ')} only`;
        out.reason = r.reason ?? EventReasons.NoVIP;
      }
    }
    return out;
  };
}
