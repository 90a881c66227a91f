/**
 * An Ingress's client certificates (`npl-lb.io/client-ca: <ConfigMap>`): the CA bundle (the
 * ConfigMap's `ca.crt`, in the Ingress's namespace) a client's certificate must chain to on the
 * Ingress's hosts over HTTPS. Anything that cannot be used (a ConfigMap missing, without `ca.crt`
 * or not PEM, a load balancer that cannot ask per host) refuses the Ingress's rules whole, said on
 * the Ingress: never served to clients without a certificate where one was asked. Pure.
 */
import { CLIENT_CA_ANNOTATION } from '../../kube/annotations.ts';
import type { CaConfigMap } from '../../kube/config-maps.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress } from '../../kube/objects.ts';
import type { HostClientValidation, HttpRoute } from '../../model/types.ts';
import { caBundle } from '../gateway/backend-tls.ts';
import type { Finding } from '../types.ts';
import { certificateForHost, type IngressTls } from './tls.ts';

const show = (v: string) => JSON.stringify(v.slice(0, 64));
/** A ConfigMap's name (RFC 1123 subdomain). */
const CONFIG_MAP_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export interface ClientCaContext {
  configMap: (namespace: string, name: string) => CaConfigMap | undefined;
  /** Whether the load balancer asks client certificates per host (Capabilities.http.clientValidationByHost). */
  can: boolean;
  adapter: string;
}

/** A finding on the Ingress for its client-certificate annotation. */
export const clientCaFinding = (ing: Ingress, message: string): Finding => ({
  kind: 'Ingress',
  key: `${ing.metadata.namespace}/${ing.metadata.name}`,
  type: 'Warning',
  reason: EventReasons.InvalidClientCA,
  message,
});

/** The CA bundle asked (PEM), 'refused' (said), or undefined where the annotation is absent. */
export function ingressClientCa(
  ing: Ingress,
  o: ClientCaContext,
  findings: Finding[],
): string | 'refused' | undefined {
  const ref = ing.metadata.annotations[CLIENT_CA_ANNOTATION];
  if (ref === undefined) return undefined;
  const refuse = (why: string): 'refused' => {
    findings.push(
      clientCaFinding(
        ing,
        `${CLIENT_CA_ANNOTATION}: ${why}; its rules are not served until it is fixed (never to clients without a certificate)`,
      ),
    );
    return 'refused';
  };
  if (!o.can)
    return refuse(`the ${o.adapter} load balancer does not ask client certificates for some hosts alone`);
  if (!CONFIG_MAP_NAME.test(ref)) return refuse(`${show(ref)} is not a ConfigMap's name`);
  const cm = o.configMap(ing.metadata.namespace, ref);
  if (!cm) return refuse(`ConfigMap ${show(ref)} not found`);
  if (cm.caCrt === undefined) return refuse(`ConfigMap ${show(ref)} has no key ca.crt`);
  const bundle = caBundle(cm.caCrt);
  if ('problem' in bundle) return refuse(`ConfigMap ${show(ref)}: ${bundle.problem}`);
  return bundle.pem;
}

/** What clientCaClaims reads of each Ingress (ingress/class.ts). */
export interface ClaimingIngress {
  ing: Ingress;
  key: string;
  r: { routes: HttpRoute[] };
  tls: IngressTls;
  /** Its client CA (PEM), undefined where it asks none (or was refused). */
  clientCa: string | undefined;
}

export interface ClientCaClaims {
  /** The hosts whose handshakes ask client certificates, by host. */
  hosts: Map<string, HostClientValidation>;
  /** An Ingress's routes less those that cannot be served as it asks. */
  servable(routes: HttpRoute[]): HttpRoute[];
}

/**
 * The hosts asking client certificates, in the Ingresses' order (namespace/name): the first to
 * ask a host gives its certificate. One CA per class: its hosts share one HTTPS listener, whose
 * TLS sessions a client may resume under another host's name (TLS 1.3), and a session verified
 * against one CA must not open a host asking another; the first Ingress to ask gives it, a later
 * one asking another CA has its rules refused. A rule without a host, or whose host has no
 * certificate in `tls:`, cannot ask by server name: refused too. An Ingress that asks nothing,
 * on a host another asks for, is served to verified clients only there (said).
 */
export function clientCaClaims(read: readonly ClaimingIngress[], findings: Finding[]): ClientCaClaims {
  const hosts = new Map<string, HostClientValidation & { from: string }>();
  const refused = new Set<HttpRoute>();
  let first: { ca: string; from: string } | undefined;
  for (const { ing, key, r, tls, clientCa } of read) {
    if (clientCa === undefined) continue;
    first ??= { ca: clientCa, from: key };
    const why = new Set<string>();
    for (const route of r.routes) {
      const cert = certificateForHost(tls, route.host);
      const held = hosts.get(route.host);
      const problem =
        route.host === ''
          ? 'a rule without a host cannot ask by TLS server name'
          : !cert
            ? `no certificate in tls: for ${route.host}`
            : first.ca !== clientCa
              ? `the class asks another CA (Ingress ${first.from}): one CA per IngressClass, as TLS sessions resume across its hosts`
              : undefined;
      if (problem) {
        why.add(problem);
        refused.add(route);
      } else if (!held)
        hosts.set(route.host, { host: route.host, certificate: cert!.name, ca: clientCa, from: key });
    }
    if (why.size > 0)
      findings.push(
        clientCaFinding(
          ing,
          `${CLIENT_CA_ANNOTATION}: ${[...why].slice(0, 5).join('; ')}; those rules are not served (never to clients without a certificate)`,
        ),
      );
  }
  for (const { ing, r, clientCa } of read) {
    if (clientCa !== undefined) continue;
    const on = [...new Set(r.routes.map((x) => x.host))].filter((h) => hosts.has(h));
    if (on.length > 0)
      findings.push(
        clientCaFinding(
          ing,
          `${on.slice(0, 5).join(', ')}: client certificates are asked there (${CLIENT_CA_ANNOTATION} of Ingress ${hosts.get(on[0]!)!.from}); this Ingress's rules on it are served to verified clients over HTTPS only`,
        ),
      );
  }
  return {
    hosts: new Map([...hosts].map(([h, { from: _from, ...v }]) => [h, v])),
    servable: (routes) => routes.filter((x) => !refused.has(x)),
  };
}
