/**
 * The policy annotations of Ingresses (`npl-lb.io/load-balance`, `npl-lb.io/session-persistence`,
 * `npl-lb.io/server-timeout-seconds`): the common BackendPolicy settings for Ingress authors, on
 * the HTTP pools of the Services (ports) the Ingress routes to, in its own namespace as an Ingress
 * only routes there. They pass the same boundary as a BackendPolicy: a bad value, or one the load
 * balancer cannot do, is a Warning on the Ingress and applies nowhere. Two Ingresses asking one
 * Service port different settings: the oldest (creationTimestamp, then namespace/name) wins, the
 * other is told. A BackendPolicy on the Service wins over them all (frontends.ts says so). Pure.
 */
import type { Capabilities } from '../../adapter/contract.ts';
import {
  LOAD_BALANCE_ANNOTATION,
  SERVER_TIMEOUT_ANNOTATION,
  SESSION_PERSISTENCE_ANNOTATION,
} from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, IngressBackend, Service } from '../../kube/objects.ts';
import { checkPolicySpec, type PolicyResolution, type PoolPolicy, unsupported } from '../backend-policies.ts';
import type { Finding } from '../types.ts';

export const POLICY_ANNOTATIONS = [
  LOAD_BALANCE_ANNOTATION,
  SESSION_PERSISTENCE_ANNOTATION,
  SERVER_TIMEOUT_ANNOTATION,
] as const;

export interface IngressPolicies {
  /** The annotations' policy of a Service port (`namespace/name`, the port's name), if any. */
  forPort(svcKey: string, portName: string): PoolPolicy | undefined;
  findings: Finding[];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** The annotations as a BackendPolicy spec, or why they are refused. */
function specOf(ing: Ingress): { spec: Record<string, unknown> } | { problem: string } | undefined {
  const a = ing.metadata.annotations ?? {};
  if (!POLICY_ANNOTATIONS.some((k) => k in a)) return undefined;
  const spec: Record<string, unknown> = { targetRefs: [{ group: '', kind: 'Service', name: 'annotated' }] };
  const lb = a[LOAD_BALANCE_ANNOTATION];
  if (lb !== undefined) spec.algorithm = lb;
  const persist = a[SESSION_PERSISTENCE_ANNOTATION];
  if (persist !== undefined) spec.sessionPersistence = { type: persist };
  const timeout = a[SERVER_TIMEOUT_ANNOTATION];
  if (timeout !== undefined) {
    if (!/^\d{1,6}$/.test(timeout))
      return {
        problem: `${SERVER_TIMEOUT_ANNOTATION}: ${JSON.stringify(timeout.slice(0, 40))} is not a number of seconds`,
      };
    spec.timeouts = { serverSeconds: Number(timeout) };
  }
  return { spec };
}

/** A BackendPolicy field in a problem, as the annotation that gave it. */
const FIELD_ANNOTATION: [RegExp, string][] = [
  [/^spec\.algorithm/, LOAD_BALANCE_ANNOTATION],
  [/^spec\.sessionPersistence(\.type)?/, SESSION_PERSISTENCE_ANNOTATION],
  [/^spec\.timeouts(\.serverSeconds)?/, SERVER_TIMEOUT_ANNOTATION],
];
const annotationProblem = (problem: string): string =>
  FIELD_ANNOTATION.reduce((text, [field, annotation]) => text.replace(field, annotation), problem);

/** The Service ports an Ingress routes to: `namespace/name#portName` ('' for an unnamed port). */
function targets(ing: Ingress, services: ReadonlyMap<string, Service>): string[] {
  const backends: IngressBackend[] = [
    ...(ing.spec.defaultBackend ? [ing.spec.defaultBackend] : []),
    ...ing.spec.rules.flatMap((r) => r.http?.paths.map((p) => p.backend) ?? []),
  ];
  const out = new Set<string>();
  for (const b of backends) {
    if (!b.service) continue;
    const svcKey = `${ing.metadata.namespace}/${b.service.name}`;
    const svc = services.get(svcKey);
    const port = svc?.spec.ports.find((p) =>
      b.service!.port.name !== undefined
        ? p.name === b.service!.port.name
        : p.port === b.service!.port.number,
    );
    if (port) out.add(`${svcKey}#${port.name ?? ''}`);
  }
  return [...out];
}

const older = (a: Ingress, b: Ingress): number =>
  (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
  key(a.metadata).localeCompare(key(b.metadata));

export function ingressPolicies(
  ingresses: readonly Ingress[],
  services: ReadonlyMap<string, Service>,
  caps: Capabilities,
  lbName: string,
): IngressPolicies {
  const findings: Finding[] = [];
  const winners = new Map<string, { from: string; text: string; policy: PoolPolicy }>();
  const warn = (ing: Ingress, message: string) =>
    findings.push({
      kind: 'Ingress',
      key: key(ing.metadata),
      type: 'Warning',
      reason: EventReasons.PolicyNotApplied,
      message,
    });
  for (const ing of [...ingresses].sort(older)) {
    const asked = specOf(ing);
    if (!asked) continue;
    if ('problem' in asked) {
      warn(ing, `${asked.problem}; the policy annotations apply nowhere`);
      continue;
    }
    const checked = checkPolicySpec(asked.spec);
    const cannot = 'problem' in checked ? undefined : unsupported(checked.spec, caps, lbName);
    if ('problem' in checked || cannot) {
      const why = 'problem' in checked ? annotationProblem(checked.problem) : cannot!;
      warn(ing, `${why}; the policy annotations apply nowhere`);
      continue;
    }
    const s = checked.spec;
    const policy: PoolPolicy = {
      ...(s.algorithm ? { algorithm: s.algorithm } : {}),
      ...(s.sessionPersistence ? { persistence: s.sessionPersistence.type } : {}),
      ...(s.timeouts?.serverSeconds ? { serverTimeoutSeconds: s.timeouts.serverSeconds } : {}),
      policy: `Ingress ${key(ing.metadata)} annotations`,
    };
    const text = JSON.stringify({ ...policy, policy: '' });
    for (const target of targets(ing, services)) {
      const seen = winners.get(target);
      if (!seen) winners.set(target, { from: key(ing.metadata), text, policy });
      else if (seen.text !== text)
        warn(
          ing,
          `Service ${target.split('#')[0]!} port ${target.split('#')[1] || '(unnamed)'} already takes other policy annotations from Ingress ${seen.from} (older); these do not apply to it`,
        );
    }
  }
  return { forPort: (svcKey, portName) => winners.get(`${svcKey}#${portName}`)?.policy, findings };
}

/**
 * The policy of each pool: its Service's BackendPolicy, else (HTTP pools only) the Ingress
 * annotations'. An Ingress whose annotations a BackendPolicy overrides is told, once per pool.
 */
export function poolPolicies(
  backend: Pick<PolicyResolution, 'forPort'>,
  annotated: IngressPolicies,
): { forPool(svcKey: string, portName: string, http: boolean): PoolPolicy | undefined; findings: Finding[] } {
  const findings = [...annotated.findings];
  return {
    findings,
    forPool(svcKey, portName, http) {
      const fromPolicy = backend.forPort(svcKey, portName);
      const fromIngress = http ? annotated.forPort(svcKey, portName) : undefined;
      if (fromPolicy && fromIngress)
        findings.push({
          kind: 'Ingress',
          key: fromIngress.policy.replace(/^Ingress (\S+) annotations$/, '$1'),
          type: 'Warning',
          reason: EventReasons.PolicyNotApplied,
          message: `Service ${svcKey} has BackendPolicy ${fromPolicy.policy}, which wins over the policy annotations`,
        });
      return fromPolicy ?? fromIngress;
    },
  };
}
