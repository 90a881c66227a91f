/**
 * The Pod readiness gate `npl-lb.io/load-balancer-ready` (as the AWS Load Balancer Controller's
 * and GKE's NEG gates): on a Pod that lists it in `spec.readinessGates`, a condition npl-lb sets
 * True once every pool the Pod is a member of has the member applied on the device (and, where the
 * device reports member health, up). Kubernetes' Ready waits for it, so a rolling update waits for
 * the load balancer instead of terminating old Pods before the new ones are served.
 *
 * What it decides (`gateVerdict`, pure):
 * - a gated Pod no load-balanced Service selects: True at once (`NotLoadBalanced`): a gate never
 *   holds a rollout for nothing;
 * - containers not ready yet: nothing to say (the kubelet's Ready is False anyway);
 * - the device does not answer: False (`LoadBalancerUnreachable`): the rollout pauses;
 * - a pool lacks the member, or has it disabled: False (`MemberNotApplied`);
 * - the device's health read says it is down: False (`MemberDown`); not read yet: False
 *   (`MemberHealthPending`), and a read is asked for; a read since the pool's last write that does
 *   not list it: the device does not report on it, nothing to wait for;
 * - else True (`MemberReady`).
 * Once True, a gate stays True for the life of the Pod: it guards the way in. A device outage or a
 * failed check must never take every Pod out of its Service's endpoints (cluster traffic too).
 */
import type { MemberHealth } from '../adapter/contract.ts';
import type { Pod, Service } from '../kube/objects.ts';
import { gated, LB_READY_GATE, selectorMatches } from '../kube/pod-ports.ts';
import type { Pool } from '../model/types.ts';

export { LB_READY_GATE } from '../kube/pod-ports.ts';

export type GateReason =
  | 'NotLoadBalanced'
  | 'LoadBalancerUnreachable'
  | 'MemberNotApplied'
  | 'MemberHealthPending'
  | 'MemberDown'
  | 'MemberReady';

export interface GateVerdict {
  status: 'True' | 'False';
  reason: GateReason;
  message: string;
}

/** What a pass knows, for the verdicts. */
export interface GateInputs {
  /** The desired pools (a Pod that is a member of one is selected). */
  pools: readonly Pool[];
  /** The Services of a namespace, and whether npl-lb load-balances one (its pools may not be built yet). */
  servicesIn: (namespace: string) => readonly Service[];
  loadBalanced: (svc: Service) => boolean;
  /** The pool as the device has it (what was applied), undefined when it has none. */
  observed: (pool: string) => Pool | undefined;
  /** The device's health of one member: undefined when it does not report health or has not read it. */
  health?: (pool: string, address: string, port: number) => MemberHealth['health'] | undefined;
  /** Whether the device reports member health at all. */
  healthSupported: boolean;
  /**
   * Whether a health read finished after the pool was last written: a member such a read does not
   * list is one the device does not report on (nothing to wait for), not one still unread.
   */
  healthReadSince?: (pool: string) => boolean;
  reachable: boolean;
}

const podKeyOf = (p: Pod): string => `${p.metadata.namespace ?? ''}/${p.metadata.name}`;
const condition = (p: Pod, type: string) => p.status.conditions.find((c) => c.type === type);

/** Pools by member Pod, and the Services pools come from (built once per update). */
export interface GateIndex {
  poolsOf: Map<string, Pool[]>;
  pooled: Set<string>;
}

export function gateIndex(inputs: GateInputs): GateIndex {
  const poolsOf = new Map<string, Pool[]>();
  const pooled = new Set<string>();
  for (const pool of inputs.pools) {
    if (pool.service) pooled.add(pool.service);
    for (const m of pool.members) {
      if (!m.pod) continue;
      const list = poolsOf.get(m.pod);
      if (list) {
        if (!list.includes(pool)) list.push(pool);
      } else poolsOf.set(m.pod, [pool]);
    }
  }
  return { poolsOf, pooled };
}

/** The gate's condition for one gated Pod, or undefined when there is nothing to say yet. */
export function gateVerdict(pod: Pod, inputs: GateInputs, index: GateIndex): GateVerdict | undefined {
  const key = podKeyOf(pod);
  const pools = index.poolsOf.get(key) ?? [];
  const ns = pod.metadata.namespace;
  const selected =
    pools.length > 0 ||
    inputs
      .servicesIn(ns)
      .some(
        (s) =>
          selectorMatches(s.spec.selector, pod.metadata.labels) &&
          (index.pooled.has(`${ns}/${s.metadata.name}`) || inputs.loadBalanced(s)),
      );
  if (!selected)
    return {
      status: 'True',
      reason: 'NotLoadBalanced',
      message: 'no load-balanced Service, Ingress or route selects this Pod',
    };
  if (condition(pod, 'ContainersReady')?.status !== 'True') return undefined;
  if (!inputs.reachable)
    return {
      status: 'False',
      reason: 'LoadBalancerUnreachable',
      message: 'the load balancer does not answer: the Pod is not known to be served',
    };
  if (pools.length === 0)
    return {
      status: 'False',
      reason: 'MemberNotApplied',
      message:
        'selected by a load-balanced Service, but not yet a member of its pool (NodePortLocal mapping pending)',
    };
  for (const pool of pools) {
    const wanted = pool.members.filter((m) => m.pod === key);
    const live = inputs.observed(pool.name);
    for (const m of wanted) {
      const there = live?.members.find((x) => x.address === m.address && x.port === m.port);
      if (!m.enabled || !there?.enabled)
        return {
          status: 'False',
          reason: 'MemberNotApplied',
          message: `member ${m.address}:${m.port} is not yet enabled in pool ${pool.name} on the load balancer`,
        };
      if (!inputs.healthSupported) continue;
      const h = inputs.health?.(pool.name, m.address, m.port);
      if (h === undefined && inputs.healthReadSince?.(pool.name)) continue;
      if (h === undefined)
        return {
          status: 'False',
          reason: 'MemberHealthPending',
          message: `member ${m.address}:${m.port} of pool ${pool.name} is applied; waiting for the load balancer's health check`,
        };
      if (h === 'down')
        return {
          status: 'False',
          reason: 'MemberDown',
          message: `member ${m.address}:${m.port} of pool ${pool.name} is down by the load balancer's health check`,
        };
    }
  }
  return {
    status: 'True',
    reason: 'MemberReady',
    message: `served by the load balancer in ${pools.length} pool(s): ${pools
      .map((p) => p.name)
      .slice(0, 3)
      .join(', ')}${pools.length > 3 ? ', …' : ''}`,
  };
}

export interface GateChanges {
  /** Every gated Pod not yet True with a verdict; `changed`: its condition must be written. */
  verdicts: { pod: Pod; verdict: GateVerdict; changed: boolean }[];
  /** Some gate waits for the device's health read of its member (a read should be asked for). */
  waitingOnHealth: boolean;
}

/** The verdict of every gated Pod whose gate is not True yet (True is sticky). */
export function gateChangesFor(pods: Iterable<Pod>, inputs: GateInputs): GateChanges {
  const verdicts: GateChanges['verdicts'] = [];
  let waitingOnHealth = false;
  let index: GateIndex | undefined;
  for (const pod of pods) {
    if (!gated(pod) || pod.metadata.deletionTimestamp !== undefined) continue;
    const now = condition(pod, LB_READY_GATE);
    if (now?.status === 'True') continue;
    index ??= gateIndex(inputs);
    const v = gateVerdict(pod, inputs, index);
    if (!v) continue;
    // A member not yet seen up, or seen down: the next health read may open it.
    if (v.reason === 'MemberHealthPending' || v.reason === 'MemberDown') waitingOnHealth = true;
    const same = now?.status === v.status && now.reason === v.reason && now.message === v.message;
    verdicts.push({ pod, verdict: v, changed: !same });
  }
  return { verdicts, waitingOnHealth };
}
