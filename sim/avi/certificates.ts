/**
 * What the simulated controller checks of an `sslkeyandcertificate` and fills in, as Avi does: the
 * PEM must parse, name a common name or a subject alternative name (refused since 31.2.1, and
 * never useful for SNI), and its key must match; the parsed certificate's fields are filled in
 * (subject, SANs, validity, fingerprint). It keeps the key; reads never show it (store.ts).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';

type Json = Record<string, unknown>;

/** The object with the certificate's fields filled in, or the controller's refusal. */
export function checkedCertificate(o: Json): Json | string {
  const pem = (o.certificate as { certificate?: unknown } | undefined)?.certificate;
  if (typeof pem !== 'string') return 'certificate.certificate: field is required';
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(pem);
  } catch {
    return 'Invalid certificate: cannot parse the PEM';
  }
  const cn = /(?:^|\n)CN=([^\n]+)/.exec(leaf.subject)?.[1];
  const sans = (leaf.subjectAltName ?? '')
    .split(', ')
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4));
  if (!cn && sans.length === 0) return 'Certificate must have a Common Name or a Subject Alternative Name';
  if (typeof o.key !== 'string') return 'key: a private key is required';
  try {
    if (!leaf.checkPrivateKey(createPrivateKey(o.key))) return 'Private key does not match the certificate';
  } catch {
    return 'Invalid private key: cannot parse the PEM';
  }
  return {
    ...o,
    certificate: {
      certificate: pem,
      subject: { common_name: cn ?? '' },
      subject_alt_names: sans,
      not_before: leaf.validFrom,
      not_after: leaf.validTo,
      fingerprint: leaf.fingerprint,
      self_signed: leaf.issuer === leaf.subject,
    },
  };
}
