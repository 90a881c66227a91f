/**
 * A class's (or a Gateway's) LoadBalancerParameters as the configured load balancer reads them:
 * the reference resolved (npl-lb.io/LoadBalancerParameters, found, valid at the boundary), the
 * section of this vendor taken and read by its own schema, what of it the adapter applies
 * (Capabilities `parameters`) turned into a placement, and anything else said: a reference that cannot be used
 * is the Gateway API's InvalidParameters with why, never ignored. Sections for other vendors are
 * the object serving other controllers: named in the message, not an error. Pure.
 */
import type { z } from 'zod';
import type { Capabilities } from '../../adapter/contract.ts';
import {
  type LoadBalancerParameters,
  PARAMETERS_GROUP,
  PARAMETERS_KIND,
  parametersSpecSchema,
  SHARED_SECTIONS,
} from '../../kube/parameters-objects.ts';
import type { Gateway } from '../../kube/gateway-objects.ts';
import type { Placement } from '../../model/types.ts';
import { cidrFamily, cidrSpan } from '../ip-family.ts';
import { checkPolicySpec, poolCheck, type PoolPolicy, unsupported } from '../backend-policies.ts';

export interface ParametersRef {
  group: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

/**
 * Where a class's virtual services go (`note`: what of the parameters serves another load
 * balancer; `ignored`: a reference of another kind set aside, said), or why none can be used.
 */
export type Resolved =
  | {
      placement: Placement | undefined;
      /** Where the class's VIPs come from (inside the controller's vip.cidrs); absent: those. */
      vipCidrs?: string[];
      /** What the pools of the class's virtual services get where no BackendPolicy says. */
      defaults?: PoolPolicy;
      note?: string;
      ignored?: string;
    }
  | { invalid: string };

/** Whether a CIDR lies inside one of `outer` (of its family). */
function within(cidr: string, outer: readonly string[]): boolean {
  const family = cidrFamily(cidr);
  if (!family) return false;
  const a = cidrSpan(cidr, family);
  return outer.some((o) => {
    if (cidrFamily(o) !== family) return false;
    const b = cidrSpan(o, family);
    return a.base >= b.base && a.base + a.size <= b.base + b.size;
  });
}

const clip = (s: string): string => s.slice(0, 200);

type ParametersSpec = z.infer<typeof parametersSpecSchema>;

/**
 * The class's pool defaults: a BackendPolicy's fields, through the same boundary and the same
 * capability checks (what the load balancer cannot do is InvalidParameters, never dropped).
 */
function classDefaults(
  d: ParametersSpec['defaults'],
  what: string,
  name: string,
  lb: Parameters<typeof resolveParameters>[3],
): { defaults?: PoolPolicy } | { invalid: string } {
  if (!d) return {};
  const checked = checkPolicySpec({ targetRefs: [{ group: '', kind: 'Service', name: 'x' }], ...d });
  if ('problem' in checked)
    return { invalid: clip(`${what}: ${checked.problem.replace(/^spec\./, 'spec.defaults.')}`) };
  const cannot = unsupported(checked.spec, lb.caps as Capabilities, lb.name);
  if (cannot) return { invalid: clip(`${what}: defaults: ${cannot}`) };
  return {
    defaults: {
      ...(d.algorithm && d.algorithm !== 'RoundRobin' ? { algorithm: d.algorithm } : {}),
      ...(d.hashKey ? { hashKey: d.hashKey } : {}),
      ...(d.healthCheck ? { check: poolCheck(d.healthCheck) } : {}),
      policy: `LoadBalancerParameters ${name}`,
    },
  };
}

/**
 * The placement the load balancer's own section gives: read by its vendor's schema (a bad value is
 * InvalidParameters naming the field), each field it sets one the adapter applies (else why not).
 */
function sectionPlacement(
  spec: ParametersSpec,
  what: string,
  lb: Parameters<typeof resolveParameters>[3],
): { placement: Placement | undefined } | { invalid: string } {
  const mine = lb.caps.parameters;
  const raw = mine ? (spec as Record<string, unknown>)[mine.section] : undefined;
  if (!mine || raw === undefined) return { placement: undefined };
  const parsed = mine.schema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    const path = [mine.section, ...(i?.path ?? []).map(String)].join('.');
    return { invalid: clip(`${what}: spec.${path}: ${i?.message ?? 'invalid'}`) };
  }
  const placement = mine.placement(parsed.data);
  const unapplied = Object.keys(placement).find((f) => !mine.applies.includes(f));
  if (unapplied)
    return {
      invalid: clip(`${what}: ${mine.section}.${unapplied} is not applied by the ${lb.name} load balancer`),
    };
  return { placement };
}

/**
 * `ref` from `field` (spec.parametersRef, spec.infrastructure.parametersRef); `namespace` the
 * namespace a local reference means (a Gateway's own), undefined where the reference must say it.
 */
export function resolveParameters(
  ref: ParametersRef | undefined,
  at: { field: string; namespace: string | undefined },
  objects: readonly LoadBalancerParameters[],
  lb: { name: string; caps: Pick<Capabilities, 'parameters' | 'allocatesVips'> & Partial<Capabilities> },
  /** The controller's vip.cidrs: a class's own VIP ranges must lie inside them. */
  controllerCidrs: readonly string[] = [],
): Resolved {
  if (!ref) return { placement: undefined };
  const what = `${at.field}: ${ref.group ? `${ref.group}/` : ''}${ref.kind} ${ref.name}`;
  if (ref.group !== PARAMETERS_GROUP || ref.kind !== PARAMETERS_KIND)
    return { invalid: clip(`${what} cannot be used: npl-lb reads ${PARAMETERS_GROUP}/${PARAMETERS_KIND}`) };
  const ns = at.namespace ?? ref.namespace;
  if (!ns) return { invalid: clip(`${what} names no namespace (LoadBalancerParameters are namespaced)`) };
  const obj = objects.find((o) => o.metadata.namespace === ns && o.metadata.name === ref.name);
  if (!obj) return { invalid: clip(`${what} not found in namespace ${ns}`) };
  const parsed = parametersSpecSchema.safeParse(obj.spec);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    return {
      invalid: clip(`${what}: spec.${i?.path.map(String).join('.') ?? ''}: ${i?.message ?? 'invalid'}`),
    };
  }
  const spec = parsed.data;
  const mine = lb.caps.parameters;
  const others = Object.keys(spec).filter(
    (s) => !(SHARED_SECTIONS as readonly string[]).includes(s) && s !== mine?.section,
  );
  const note = others.length
    ? `${others.join(', ')} settings of ${ns}/${ref.name} are for another load balancer`
    : undefined;
  // The class's VIP ranges: ours to allocate from, so inside the controller's (a Gateway's owner
  // may name parameters of their namespace: never an address the controller was not given).
  if (spec.vip && lb.caps.allocatesVips)
    return {
      invalid: clip(
        `${what}: vip.cidrs cannot be used: the ${lb.name} load balancer allocates VIPs from its IPAM`,
      ),
    };
  const outside = spec.vip?.cidrs.find((c) => !within(c, controllerCidrs));
  if (outside)
    return {
      invalid: clip(
        `${what}: vip.cidrs ${outside} is not inside the controller's vip.cidrs (${controllerCidrs.join(', ') || 'none'})`,
      ),
    };
  const vipCidrs = spec.vip ? { vipCidrs: spec.vip.cidrs } : {};
  const defaults = classDefaults(spec.defaults, what, `${ns}/${ref.name}`, lb);
  if ('invalid' in defaults) return defaults;
  const withNote = (placement: Placement | undefined): Resolved => ({
    placement,
    ...vipCidrs,
    ...defaults,
    ...(note ? { note } : {}),
  });
  const placed = sectionPlacement(spec, what, lb);
  return 'invalid' in placed ? placed : withNote(placed.placement);
}

/** A Gateway's placement: its own parameters' over its class's (each field), or why it has none. */
export const mergePlacement = (
  base: Placement | undefined,
  over: Placement | undefined,
): Placement | undefined => (base || over ? { ...base, ...over } : undefined);

/**
 * A Gateway's parameters: its class's (a class whose parameters cannot be used leaves its Gateways
 * unaccepted, said), with its own `spec.infrastructure.parametersRef` over them.
 */
export function gatewayParameters(
  g: Gateway,
  ofClass: Resolved | undefined,
  parametersOf: (
    ref: ParametersRef | undefined,
    at: { field: string; namespace: string | undefined },
  ) => Resolved,
): Resolved {
  if (ofClass && 'invalid' in ofClass)
    return { invalid: `its GatewayClass ${g.spec.gatewayClassName}: ${ofClass.invalid}`.slice(0, 300) };
  const own = parametersOf(g.spec.infrastructure?.parametersRef, {
    field: 'spec.infrastructure.parametersRef',
    namespace: g.metadata.namespace,
  });
  if ('invalid' in own) return own;
  const vipCidrs = own.vipCidrs ?? ofClass?.vipCidrs;
  const defaults = own.defaults ?? ofClass?.defaults;
  return {
    placement: mergePlacement(ofClass?.placement, own.placement),
    ...(vipCidrs ? { vipCidrs } : {}),
    ...(defaults ? { defaults } : {}),
  };
}
