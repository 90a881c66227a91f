/**
 * An Ingress's re-encryption to its backends (`npl-lb.io/backend-protocol: HTTPS`, with
 * `npl-lb.io/backend-tls-server-name` and `npl-lb.io/backend-tls-ca`): the TLS its pools speak,
 * the name sent as SNI and verified against the CA of the ConfigMap named (its `ca.crt`, in the
 * Ingress's namespace) or `System`. Anything that cannot be used (a value that does not parse, a
 * CA that does not resolve, a load balancer that does not speak TLS to members, a TLS annotation
 * without `HTTPS`) refuses the Ingress's rules whole, said on the Ingress: never clear text where
 * TLS was asked. Pure.
 */
import type { BackendTlsCapabilities } from '../../adapter/contract.ts';
import {
  BACKEND_CA_ANNOTATION,
  BACKEND_PROTOCOL_ANNOTATION,
  BACKEND_SERVER_NAME_ANNOTATION,
} from '../../kube/annotations.ts';
import type { CaConfigMap } from '../../kube/config-maps.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress } from '../../kube/objects.ts';
import { type BackendTls, SYSTEM_CA } from '../../model/types.ts';
import { caBundle, DNS_NAME } from '../gateway/backend-tls.ts';
import type { Finding } from '../types.ts';

const show = (v: string) => JSON.stringify(v.slice(0, 64));

export function ingressBackendTls(
  ing: Ingress,
  o: {
    configMap: (namespace: string, name: string) => CaConfigMap | undefined;
    can: BackendTlsCapabilities | undefined;
    adapter: string;
  },
  findings: Finding[],
): BackendTls | 'refused' | undefined {
  const a = ing.metadata.annotations;
  const protocol = a[BACKEND_PROTOCOL_ANNOTATION];
  const name = a[BACKEND_SERVER_NAME_ANNOTATION];
  const caRef = a[BACKEND_CA_ANNOTATION];
  if (protocol === undefined && name === undefined && caRef === undefined) return undefined;
  const refuse = (why: string): 'refused' => {
    findings.push({
      kind: 'Ingress',
      key: `${ing.metadata.namespace}/${ing.metadata.name}`,
      type: 'Warning',
      reason: EventReasons.InvalidBackendTLS,
      message: `${why}; its rules are not served until it is fixed (never in clear text where TLS was asked)`,
    });
    return 'refused';
  };
  if (protocol === 'HTTP' && name === undefined && caRef === undefined) return undefined;
  if (protocol !== 'HTTPS')
    return refuse(
      protocol === undefined
        ? `${name !== undefined ? BACKEND_SERVER_NAME_ANNOTATION : BACKEND_CA_ANNOTATION} without ${BACKEND_PROTOCOL_ANNOTATION}: "HTTPS"`
        : protocol === 'HTTP'
          ? `${BACKEND_PROTOCOL_ANNOTATION} is "HTTP", and TLS annotations are given`
          : `${BACKEND_PROTOCOL_ANNOTATION}: ${show(protocol)} is not "HTTP" or "HTTPS"`,
    );
  if (!o.can)
    return refuse(
      `${BACKEND_PROTOCOL_ANNOTATION}: the ${o.adapter} load balancer does not speak TLS to backends`,
    );
  if (name === undefined || !DNS_NAME.test(name))
    return refuse(
      `${BACKEND_SERVER_NAME_ANNOTATION}: ${name === undefined ? 'missing (the name sent and verified)' : `${show(name)} is not a DNS name`}`,
    );
  if (caRef === undefined) return refuse(`${BACKEND_CA_ANNOTATION}: missing (a ConfigMap's name, or System)`);
  if (caRef === SYSTEM_CA) {
    if (!o.can.systemCa)
      return refuse(`${BACKEND_CA_ANNOTATION}: the ${o.adapter} load balancer has no System CAs`);
    return { serverName: name, verifyNames: [name], ca: SYSTEM_CA };
  }
  const cm = o.configMap(ing.metadata.namespace, caRef);
  if (!cm) return refuse(`${BACKEND_CA_ANNOTATION}: ConfigMap ${show(caRef)} not found`);
  if (cm.caCrt === undefined)
    return refuse(`${BACKEND_CA_ANNOTATION}: ConfigMap ${show(caRef)} has no key ca.crt`);
  const bundle = caBundle(cm.caCrt);
  if ('problem' in bundle)
    return refuse(`${BACKEND_CA_ANNOTATION}: ConfigMap ${show(caRef)}: ${bundle.problem}`);
  return { serverName: name, verifyNames: [name], ca: bundle.pem };
}
