/**
 * BackendPolicies -> what each Service port's pools are balanced and kept sticky by, and each
 * policy's status per target (GEP-713's PolicyAncestorStatus, the target Service as the ancestor).
 * - A policy whose spec fails the validation boundary applies nowhere: `Accepted=False/Invalid`
 *   naming the field, on every target it names.
 * - A target Service (or the port a `sectionName` names) that does not exist in the policy's
 *   namespace: `Accepted=False/TargetNotFound`.
 * - What the load balancer cannot do (its Capabilities): `Accepted=False/Invalid` saying so; the
 *   policy applies nowhere rather than in part.
 * - Two policies on one target (the same Service, or the same port of it): the oldest wins (by
 *   creationTimestamp, then namespace/name), the others are `Accepted=False/Conflicted`. A policy
 *   on a port takes precedence over one on the whole Service for that port, as GEP-713's more
 *   specific target does; that is no conflict.
 * Pure.
 */
import type { Capabilities } from '../adapter/contract.ts';
import type { Service } from '../kube/objects.ts';
import {
  type BackendPolicy,
  type BackendPolicySpec,
  backendPolicySpecSchema,
} from '../kube/policy-objects.ts';
import { statusList, statusRanges } from '../model/status-ranges.ts';
import type { HttpCheck, LbAlgorithm, PersistenceType } from '../model/types.ts';
import { cond, type ConditionSpec } from './gateway/conditions.ts';
import { headerProblem, pathProblem } from './validate.ts';

/** What a pool gets from its policy. */
export interface PoolPolicy {
  algorithm?: LbAlgorithm;
  /** The header or cookie a keyed hash reads. */
  hashKey?: string;
  persistence?: PersistenceType;
  /** The members' check, whatever the Pods' probes say: an HTTP check, or `tcp` (a connect). */
  check?: HttpCheck | 'tcp';
  maxConnections?: number;
  slowStartSeconds?: number;
  connectTimeoutSeconds?: number;
  serverTimeoutSeconds?: number;
  retries?: number;
  /** The policy (namespace/name) it comes from, for messages. */
  policy: string;
}

export interface PolicyAncestor {
  ancestorRef: { group: ''; kind: string; namespace: string; name: string; sectionName?: string };
  conditions: ConditionSpec[];
}

export interface PolicyResolution {
  /** The policy of a Service's port: one on that port first, else one on the whole Service. */
  forPort(svcKey: string, portName: string): PoolPolicy | undefined;
  /** Per policy (namespace/name): its status per target. */
  statuses: Map<string, PolicyAncestor[]>;
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** Oldest first: creationTimestamp (RFC 3339, compared as text), then namespace/name. */
const older = (a: BackendPolicy, b: BackendPolicy): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  key(a.metadata).localeCompare(key(b.metadata));

function zodMessage(issues: readonly { path: PropertyKey[]; message: string }[]): string {
  const i = issues[0];
  return i ? `spec.${i.path.map(String).join('.')}: ${i.message}`.slice(0, 300) : 'invalid spec';
}

/**
 * A BackendPolicy's spec at the validation boundary: its parsed form, or why it is refused (the
 * field named). The check's path and headers pass the same boundary as a probe's.
 */
export function checkPolicySpec(raw: unknown): { spec: BackendPolicySpec } | { problem: string } {
  const parsed = backendPolicySpecSchema.safeParse(raw);
  if (!parsed.success) return { problem: zodMessage(parsed.error.issues) };
  const spec = parsed.data;
  const path = spec.healthCheck?.path;
  const pathBad = path === undefined ? undefined : pathProblem(path, 'Exact');
  const headersBad = headerProblem(spec.healthCheck?.headers ?? []);
  const bad = pathBad ? `path: ${pathBad}` : headersBad ? `headers: ${headersBad}` : undefined;
  return bad ? { problem: `spec.healthCheck.${bad}` } : { spec };
}

/** The targets a policy names, read as far as they can be for its status (the spec may be bad). */
function rawTargets(p: BackendPolicy): PolicyAncestor['ancestorRef'][] {
  const refs = Array.isArray(p.spec.targetRefs) ? (p.spec.targetRefs as unknown[]).slice(0, 16) : [];
  return refs.flatMap((r) => {
    const o = (r ?? {}) as Record<string, unknown>;
    if (typeof o.name !== 'string') return [];
    return [
      {
        group: '' as const,
        kind: typeof o.kind === 'string' ? o.kind.slice(0, 63) : 'Service',
        namespace: p.metadata.namespace,
        name: o.name.slice(0, 253),
        ...(typeof o.sectionName === 'string' ? { sectionName: o.sectionName.slice(0, 253) } : {}),
      },
    ];
  });
}

/** Why the load balancer cannot do what the policy asks, or undefined. */
/** What of a policy the load balancer cannot do, in words (undefined: it can do all of it). */
export function unsupported(spec: BackendPolicySpec, caps: Capabilities, lbName: string): string | undefined {
  const algorithms = caps.algorithms ?? ['RoundRobin'];
  if (spec.algorithm && !algorithms.includes(spec.algorithm))
    return `the ${lbName} load balancer cannot balance by ${spec.algorithm} (it can: ${algorithms.join(', ')})`;
  if (spec.healthCheck?.type === 'HTTP' && !caps.httpChecks)
    return `the ${lbName} load balancer does not run HTTP checks`;
  if (spec.healthCheck?.headers?.length && !caps.checkHeaders)
    return `the ${lbName} load balancer's checks send no headers yet`;
  const statuses = checkStatusesProblem(spec.healthCheck, caps, lbName);
  if (statuses) return statuses;
  if (spec.maxConnectionsPerMember !== undefined && !caps.maxConnections)
    return `the ${lbName} load balancer cannot limit connections per member`;
  const slow = spec.slowStartSeconds;
  if (slow !== undefined && !caps.slowStart) return `the ${lbName} load balancer cannot ramp members up`;
  if (slow !== undefined && caps.slowStart && slow % caps.slowStart.stepSeconds !== 0)
    return `the ${lbName} load balancer ramps members up in steps of ${caps.slowStart.stepSeconds} s: slowStartSeconds ${slow} is not a multiple`;
  if (spec.timeouts?.connectSeconds !== undefined && !caps.timeouts?.connect)
    return `the ${lbName} load balancer cannot set a pool's connect timeout`;
  if (spec.timeouts?.serverSeconds !== undefined && !caps.timeouts?.server)
    return `the ${lbName} load balancer cannot set a pool's server timeout`;
  if (spec.retries !== undefined && !caps.retries)
    return `the ${lbName} load balancer cannot set how often a failed connection is tried again`;
  const kinds = caps.persistence ?? [];
  const want = spec.sessionPersistence?.type;
  if (want && !kinds.includes(want))
    return `the ${lbName} load balancer cannot keep sessions by ${want}${kinds.length ? ` (it can: ${kinds.join(', ')})` : ''}`;
  return undefined;
}

/** What of a check's method and statuses the load balancer cannot do, in words. */
function checkStatusesProblem(
  hc: BackendPolicySpec['healthCheck'],
  caps: Capabilities,
  lbName: string,
): string | undefined {
  if (hc?.method === 'HEAD' && !caps.checkMethods)
    return `the ${lbName} load balancer's checks send GET only (healthCheck.method HEAD)`;
  const expect = statusRanges(hc?.expectedStatuses);
  if (!expect) return undefined;
  const said = statusList(expect);
  if (!caps.checkStatuses)
    return `the ${lbName} load balancer's checks expect 2xx or 3xx only (healthCheck.expectedStatuses ${said})`;
  if (caps.checkStatuses === 'classes' && expect.some((r) => r.from % 100 !== 0 || r.to % 100 !== 99))
    return `the ${lbName} load balancer's checks expect whole classes of statuses only (100-199 ... 500-599), not ${said}`;
  return undefined;
}

/** A policy's check in the model's terms: `tcp` for a connect check. */
export function poolCheck(hc: NonNullable<BackendPolicySpec['healthCheck']>): HttpCheck | 'tcp' {
  if (hc.type === 'TCP' || hc.path === undefined) return 'tcp';
  const expect = statusRanges(hc.expectedStatuses);
  return {
    type: 'http',
    path: hc.path,
    intervalSeconds: hc.intervalSeconds,
    timeoutSeconds: hc.timeoutSeconds,
    rise: hc.healthyThreshold,
    fall: hc.unhealthyThreshold,
    ...(hc.headers?.length ? { headers: hc.headers.map((h) => ({ name: h.name, value: h.value })) } : {}),
    ...(hc.method === 'HEAD' ? { method: 'HEAD' as const } : {}),
    ...(expect ? { expect } : {}),
  };
}

type Claims = Map<string, { policy: BackendPolicy; spec: BackendPolicySpec; at: PolicyAncestor }[]>;

/**
 * A valid policy's targets: each one's status, and a claim on each target it may apply to (the
 * Service or port exists, the load balancer can do what it asks: `cannot` says why not).
 */
function claimTargets(
  p: BackendPolicy,
  spec: BackendPolicySpec,
  svcs: ReadonlyMap<string, Service>,
  cannot: string | undefined,
  claims: Claims,
): PolicyAncestor[] {
  const out: PolicyAncestor[] = [];
  for (const t of spec.targetRefs) {
    const at: PolicyAncestor = {
      ancestorRef: {
        group: '',
        kind: 'Service',
        namespace: p.metadata.namespace,
        name: t.name,
        ...(t.sectionName ? { sectionName: t.sectionName } : {}),
      },
      conditions: [],
    };
    out.push(at);
    const svc = svcs.get(`${p.metadata.namespace}/${t.name}`);
    if (!svc) {
      at.conditions = [
        cond('Accepted', false, 'TargetNotFound', `Service ${p.metadata.namespace}/${t.name} does not exist`),
      ];
      continue;
    }
    if (t.sectionName && !svc.spec.ports.some((port) => port.name === t.sectionName)) {
      at.conditions = [
        cond('Accepted', false, 'TargetNotFound', `Service ${t.name} has no port named ${t.sectionName}`),
      ];
      continue;
    }
    if (cannot) {
      at.conditions = [cond('Accepted', false, 'Invalid', cannot)];
      continue;
    }
    const target = `${p.metadata.namespace}/${t.name}${t.sectionName ? `#${t.sectionName}` : ''}`;
    const list = claims.get(target) ?? [];
    list.push({ policy: p, spec, at });
    claims.set(target, list);
  }
  return out;
}

/** The winner of each target: the oldest claim; the others are Conflicted. */
function pickWinners(claims: Claims): Map<string, PoolPolicy> {
  const winners = new Map<string, PoolPolicy>();
  for (const [target, list] of claims) {
    // Policies were visited oldest first: the first claim wins.
    const [first, ...rest] = list;
    first!.at.conditions = [cond('Accepted', true, 'Accepted', 'applied to the pools of this target')];
    for (const c of rest)
      c.at.conditions = [
        cond(
          'Accepted',
          false,
          'Conflicted',
          `BackendPolicy ${first!.policy.metadata.name} (older) already targets this ${target.includes('#') ? 'port' : 'Service'}`,
        ),
      ];
    winners.set(target, {
      ...(first!.spec.algorithm ? { algorithm: first!.spec.algorithm } : {}),
      ...(first!.spec.hashKey ? { hashKey: first!.spec.hashKey } : {}),
      ...(first!.spec.sessionPersistence ? { persistence: first!.spec.sessionPersistence.type } : {}),
      ...(first!.spec.healthCheck ? { check: poolCheck(first!.spec.healthCheck) } : {}),
      ...(first!.spec.maxConnectionsPerMember ? { maxConnections: first!.spec.maxConnectionsPerMember } : {}),
      ...(first!.spec.slowStartSeconds ? { slowStartSeconds: first!.spec.slowStartSeconds } : {}),
      ...(first!.spec.timeouts?.connectSeconds
        ? { connectTimeoutSeconds: first!.spec.timeouts.connectSeconds }
        : {}),
      ...(first!.spec.timeouts?.serverSeconds
        ? { serverTimeoutSeconds: first!.spec.timeouts.serverSeconds }
        : {}),
      ...(first!.spec.retries ? { retries: first!.spec.retries.attempts } : {}),
      policy: key(first!.policy.metadata),
    });
  }
  return winners;
}

export function resolveBackendPolicies(
  policies: readonly BackendPolicy[],
  services: readonly Service[],
  caps: Capabilities,
  lbName: string,
): PolicyResolution {
  // Most clusters have none: a pass then pays nothing here.
  if (policies.length === 0) return { forPort: () => undefined, statuses: new Map() };
  const svcs = new Map(services.map((s) => [key(s.metadata), s]));
  const statuses = new Map<string, PolicyAncestor[]>();
  /** Candidates per target (`ns/name` or `ns/name#port`), each with its place in the status. */
  const claims: Claims = new Map();

  for (const p of [...policies].sort(older)) {
    const out: PolicyAncestor[] = [];
    statuses.set(key(p.metadata), out);
    const checked = checkPolicySpec(p.spec);
    if ('problem' in checked) {
      for (const ref of rawTargets(p))
        out.push({ ancestorRef: ref, conditions: [cond('Accepted', false, 'Invalid', checked.problem)] });
      continue;
    }
    const { spec } = checked;
    out.push(...claimTargets(p, spec, svcs, unsupported(spec, caps, lbName), claims));
  }

  const winners = pickWinners(claims);
  return {
    forPort: (svcKey, portName) =>
      (portName ? winners.get(`${svcKey}#${portName}`) : undefined) ?? winners.get(svcKey),
    statuses,
  };
}
