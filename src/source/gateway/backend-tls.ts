/**
 * BackendTLSPolicy (gateway.networking.k8s.io/v1, GEP-1897) read so that it is never ignored:
 * while the load balancer does not speak TLS to backends, a Service port a policy targets is not
 * a backend a route may use in clear text. Its backendRefs do not resolve (ResolvedRefs=False,
 * UnsupportedProtocol, naming the policy) and their share of the traffic answers 500; the policy
 * says so in its ancestors' status (each Gateway of a route that sends there: Accepted=False). Of
 * two policies on one target, the older one is named (GEP-713's rule). Pure.
 */
import type { BackendTlsPolicy } from '../../kube/backend-tls-objects.ts';
import { GATEWAY_GROUP } from '../../kube/gateway-objects.ts';
import { cond, type ConditionSpec } from './conditions.ts';

export interface TlsPolicyAncestor {
  ancestorRef: { group: string; kind: 'Gateway'; namespace: string; name: string };
  conditions: ConditionSpec[];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/**
 * The policy (namespace/name) over a Service port: one naming the port (its `sectionName`, the
 * port's name) or the whole Service; the oldest first (creation time, then name).
 */
export function backendTlsLookup(
  policies: readonly BackendTlsPolicy[],
): (namespace: string, service: string, portName: string) => string | undefined {
  const byTarget = new Map<string, string>();
  const ordered = [...policies].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      key(a.metadata).localeCompare(key(b.metadata)),
  );
  for (const p of ordered)
    for (const t of p.spec.targetRefs) {
      if (t.group !== '' || t.kind !== 'Service') continue;
      const k = `${p.metadata.namespace}/${t.name}/${t.sectionName ?? ''}`;
      if (!byTarget.has(k)) byTarget.set(k, key(p.metadata));
    }
  if (byTarget.size === 0) return () => undefined;
  return (ns, svc, port) => byTarget.get(`${ns}/${svc}/${port}`) ?? byTarget.get(`${ns}/${svc}/`);
}

/** The ancestors' status of each policy a route hit: Accepted=False on each of its Gateways. */
export function backendTlsStatuses(
  hits: ReadonlyMap<string, ReadonlySet<string>>,
  adapter: string,
): Map<string, TlsPolicyAncestor[]> {
  const out = new Map<string, TlsPolicyAncestor[]>();
  for (const [policy, gateways] of hits)
    out.set(
      policy,
      [...gateways].sort().map((gw) => {
        const [namespace = '', name = ''] = gw.split('/');
        return {
          ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
          conditions: [
            cond(
              'Accepted',
              false,
              'Invalid',
              `the ${adapter} load balancer does not speak TLS to backends yet: requests for the Services this policy targets answer 500, never in clear text`,
            ),
          ],
        };
      }),
    );
  return out;
}
