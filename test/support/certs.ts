/**
 * Real certificates for tests, made fresh (EC P-256, self-signed): for given DNS names, expired,
 * or with neither CN nor SAN; and Secrets of type kubernetes.io/tls holding them.
 */
import { X509Certificate } from 'node:crypto';
import { generate } from 'selfsigned';
import type { Certificate } from '../../src/model/types.ts';
import { caBundle } from '../../src/source/gateway/backend-tls.ts';

export interface TestCertificate {
  cert: string;
  key: string;
}

export interface CertOptions {
  /** DNS SANs; none when empty. */
  dns?: string[];
  /** The subject CN; none when null. */
  cn?: string | null;
  /** Valid until (default: a year from now); in the past for an expired one. */
  notAfter?: Date;
}

export async function testCertificate(o: CertOptions = {}): Promise<TestCertificate> {
  const dns = o.dns ?? ['a.example.com'];
  const cn = o.cn === undefined ? dns[0] : o.cn;
  const notAfter = o.notAfter ?? new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const notBefore = new Date(Math.min(Date.now(), notAfter.getTime()) - 24 * 3600 * 1000);
  const pems = await generate(
    cn ? [{ name: 'commonName', value: cn }] : [{ name: 'organizationName', value: 'npl-lb tests' }],
    {
      keyType: 'ec',
      curve: 'P-256',
      notBeforeDate: notBefore,
      notAfterDate: notAfter,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true },
        ...(dns.length > 0
          ? [{ name: 'subjectAltName' as const, altNames: dns.map((value) => ({ type: 2 as const, value })) }]
          : []),
      ],
    },
  );
  return { cert: pems.cert, key: pems.private };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** A Secret object (raw, as the API server holds it) with this certificate and key. */
export function tlsSecret(
  namespace: string,
  name: string,
  c: { cert: string; key: string },
  type = 'kubernetes.io/tls',
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name },
    type,
    data: { 'tls.crt': b64(c.cert), 'tls.key': b64(c.key) },
  };
}

/** A fresh certificate for these DNS names as the model carries it (source `gw/<name>`). */
export async function modelCertificate(name: string, dns: string[]): Promise<Certificate> {
  const c = await testCertificate({ dns });
  const leaf = new X509Certificate(c.cert);
  return {
    name,
    source: `gw/${name}`,
    certPem: leaf.toString(),
    keyPem: c.key,
    subject: leaf.subject,
    sniNames: dns,
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
  };
}

/** EC P-256 with SHA-256, valid from an hour ago for a year. */
const yearEc = () =>
  ({
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 3600 * 1000),
    notAfterDate: new Date(Date.now() + 365 * 24 * 3600 * 1000),
  }) as const;

/** A certificate authority (basicConstraints cA), for TLS to backends: it signs `signedBy`'s. */
export async function testAuthority(name = 'npl-lb test CA'): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    ...yearEc(),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/** A server certificate for these DNS names, signed by `ca`. */
export async function signedBy(ca: TestCertificate, dns: string[]): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: dns[0] ?? 'server' }], {
    ...yearEc(),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: dns.map((value) => ({ type: 2 as const, value })) },
    ],
    ca,
  });
  return { cert: pems.cert, key: pems.private };
}

/** A client certificate (extKeyUsage clientAuth) for this common name, signed by `ca`. */
export async function clientSignedBy(ca: TestCertificate, cn: string): Promise<TestCertificate> {
  const pems = await generate([{ name: 'commonName', value: cn }], {
    ...yearEc(),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    ca,
  });
  return { cert: pems.cert, key: pems.private };
}

/** A CA bundle as the validation boundary writes it again (caBundle); throws with its problem. */
export function caPem(text: string): string {
  const b = caBundle(text);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
}
