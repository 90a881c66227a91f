/**
 * A Secret of type kubernetes.io/tls -> a Certificate the load balancer can hold, or the problem in
 * words. The checks are the ones a device makes (some refuse the last two): PEM that parses,
 * a key that matches the leaf, a leaf not expired, a leaf with a CN or a SAN. The PEM is re-encoded
 * from what parsed, so nothing but certificates and a key reaches a device. Pure but for the clock
 * passed in.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { TlsSecret } from '../kube/objects.ts';
import type { Certificate } from '../model/types.ts';
import { hostProblem } from './validate.ts';

export const TLS_SECRET_TYPE = 'kubernetes.io/tls';
/** A chain longer than this is refused (a leaf and a few intermediates are a few KiB). */
const MAX_PEM = 64 * 1024;
const PEM_BLOCK = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export type CertificateResult = { certificate: Certificate } | { problem: string };

/** The DNS names a leaf is for: its SAN DNS names, else its CN; only names valid as hosts, lower case. */
export function leafNames(leaf: X509Certificate): { cn: string | undefined; names: string[] } {
  const cn = /^CN=(.*)$/m.exec(leaf.subject)?.[1];
  const sans = [...(leaf.subjectAltName ?? '').matchAll(/(?:^|, )DNS:([^,]*)/g)].map((m) => m[1]!);
  const valid = (n: string) => n !== '' && hostProblem(n.toLowerCase()) === undefined;
  const names = (sans.length > 0 ? sans : cn !== undefined ? [cn] : []).map((n) => n.toLowerCase());
  return { cn, names: [...new Set(names.filter(valid))] };
}

/** Whether a certificate for these names serves this host (a wildcard covers one label). */
export function namesCover(names: readonly string[], host: string): boolean {
  if (host === '') return true;
  return names.some((n) => {
    if (n === host) return true;
    if (!n.startsWith('*.')) return false;
    const dot = host.indexOf('.');
    return dot > 0 && host.slice(dot + 1) === n.slice(2) && !host.startsWith('*.');
  });
}

const decode = (b64: string | undefined): string =>
  b64 === undefined ? '' : Buffer.from(b64, 'base64').toString('utf8');

export function certificateFromSecret(secret: TlsSecret, name: string, now: number): CertificateResult {
  const key = `${secret.metadata.namespace}/${secret.metadata.name}`;
  if (secret.type !== TLS_SECRET_TYPE) return { problem: `Secret ${key} is not of type ${TLS_SECRET_TYPE}` };
  const crtText = decode(secret.data['tls.crt']);
  const keyText = decode(secret.data['tls.key']);
  if (crtText === '') return { problem: `Secret ${key} has no tls.crt` };
  if (keyText === '') return { problem: `Secret ${key} has no tls.key` };
  if (crtText.length > MAX_PEM) return { problem: `Secret ${key}: tls.crt is over ${MAX_PEM} bytes` };
  const blocks = crtText.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) return { problem: `Secret ${key}: tls.crt holds no PEM certificate` };
  let chain: X509Certificate[];
  try {
    chain = blocks.map((b) => new X509Certificate(b));
  } catch {
    return { problem: `Secret ${key}: tls.crt holds a certificate that does not parse` };
  }
  const leaf = chain[0]!;
  let keyPem: string;
  try {
    const k = createPrivateKey(keyText);
    if (!leaf.checkPrivateKey(k)) return { problem: `Secret ${key}: tls.key does not match the certificate` };
    keyPem = k.export({ type: 'pkcs8', format: 'pem' }).toString();
  } catch {
    return { problem: `Secret ${key}: tls.key is not an unencrypted PEM private key` };
  }
  const notAfter = new Date(leaf.validTo);
  if (!(notAfter.getTime() > now)) {
    return { problem: `Secret ${key}: the certificate expired on ${notAfter.toISOString()}` };
  }
  const { cn, names } = leafNames(leaf);
  if (cn === undefined && names.length === 0 && !leaf.subjectAltName) {
    return {
      problem: `Secret ${key}: the certificate has neither a common name nor a subject alternative name`,
    };
  }
  return {
    certificate: {
      name,
      source: key,
      certPem: chain.map((c) => c.toString()).join(''),
      keyPem,
      subject: leaf.subject.replaceAll('\n', ', '),
      sniNames: names,
      fingerprint: leaf.fingerprint256,
      notAfter: notAfter.toISOString(),
    },
  };
}
