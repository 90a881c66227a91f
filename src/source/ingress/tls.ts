/**
 * The `tls:` section of one Ingress -> which of its hosts are served on HTTPS, and with which
 * certificate. A Secret that is missing or invalid is a Warning naming it, and its hosts are not
 * served on HTTPS (they stay on HTTP, as every host of the Ingress does); a certificate that does
 * not name a host is a Warning, and the host is served with it all the same. Pure.
 */
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress } from '../../kube/objects.ts';
import type { Certificate } from '../../model/types.ts';
import { type CertificateResult, namesCover } from '../certificates.ts';
import type { Finding } from '../types.ts';
import { hostProblem } from '../validate.ts';

export interface IngressTls {
  /** Host (as the rules name it) -> the certificate it is served with. */
  hosts: Map<string, Certificate>;
  /** A `tls:` entry without hosts: every rule of the Ingress, default backend included. */
  all: Certificate | undefined;
  findings: Finding[];
}

/** Looks a Secret up by namespace/name: undefined when it is not there (or not of type kubernetes.io/tls). */
export type SecretCertificates = (secretKey: string) => CertificateResult | undefined;

export function ingressTls(ing: Ingress, certificateOf: SecretCertificates): IngressTls {
  const ns = ing.metadata.namespace;
  const ingKey = `${ns}/${ing.metadata.name}`;
  const findings: Finding[] = [];
  const warn = (reason: string, message: string) =>
    findings.push({ kind: 'Ingress', key: ingKey, type: 'Warning', reason, message });
  const hosts = new Map<string, Certificate>();
  let all: Certificate | undefined;
  (ing.spec.tls ?? []).forEach((t, i) => {
    const field = `spec.tls[${i}]`;
    const named = t.hosts.filter((h, j) => {
      const p = hostProblem(h);
      if (p) warn(EventReasons.InvalidIngressRule, `${field}.hosts[${j}]: ${p}; not served on HTTPS`);
      return !p;
    });
    const which = t.hosts.length > 0 ? `hosts ${named.slice(0, 5).join(', ')}` : 'every host';
    if (!t.secretName) {
      warn(EventReasons.InvalidTLSSecret, `${field}: no secretName; ${which} not served on HTTPS`);
      return;
    }
    const secretKey = `${ns}/${t.secretName}`;
    const r = certificateOf(secretKey);
    if (!r || 'problem' in r) {
      const problem = r?.problem ?? `Secret ${secretKey} not found (or not of type kubernetes.io/tls)`;
      warn(EventReasons.InvalidTLSSecret, `${field}: ${problem}; ${which} not served on HTTPS`);
      return;
    }
    const cert = r.certificate;
    if (t.hosts.length === 0) {
      all ??= cert;
      return;
    }
    for (const h of named) {
      if (hosts.has(h)) continue;
      hosts.set(h, cert);
      if (!namesCover(cert.sniNames, h)) {
        warn(
          EventReasons.TLSHostMismatch,
          `${field}: the certificate of Secret ${secretKey} (${cert.sniNames.slice(0, 5).join(', ') || cert.subject}) does not name host ${h}; clients will see a name mismatch`,
        );
      }
    }
  });
  return { hosts, all, findings };
}

/** The certificate a route of this Ingress is served with on HTTPS, if any. */
export const certificateForHost = (tls: IngressTls, host: string): Certificate | undefined =>
  tls.hosts.get(host) ?? tls.all;
