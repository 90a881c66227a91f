/**
 * Certificates by Secret (namespace/name) for one pass, each Secret read once per version (the memo
 * keeps what was read across passes); the expiry is checked against the pass's clock every time,
 * so a certificate that expires while nothing changes is dropped at the next pass.
 */
import type { TlsSecret } from '../kube/objects.ts';
import { certificateName } from '../model/names.ts';
import { certificateFromSecret, type CertificateResult } from './certificates.ts';
import type { SecretCertificates } from './ingress/tls.ts';

export type CertificateMemo = Map<string, { version: string; result: CertificateResult }>;

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

export function secretCertificates(
  secrets: readonly TlsSecret[],
  cluster: string,
  now: number,
  memo: CertificateMemo = new Map(),
): SecretCertificates {
  const byKey = new Map(secrets.map((s) => [key(s.metadata), s]));
  for (const k of memo.keys()) if (!byKey.has(k)) memo.delete(k);
  return (secretKey) => {
    const secret = byKey.get(secretKey);
    if (!secret) return undefined;
    const version = `${secret.metadata.uid}@${secret.metadata.resourceVersion}`;
    let hit = memo.get(secretKey);
    if (!hit || hit.version !== version || !secret.metadata.resourceVersion) {
      const name = certificateName(cluster, secret.metadata.namespace, secret.metadata.name);
      hit = { version, result: certificateFromSecret(secret, name, now) };
      memo.set(secretKey, hit);
    }
    const r = hit.result;
    if ('certificate' in r && !(Date.parse(r.certificate.notAfter) > now)) {
      return { problem: `Secret ${secretKey}: the certificate expired on ${r.certificate.notAfter}` };
    }
    return r;
  };
}
