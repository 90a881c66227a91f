/**
 * Certificates as Avi `sslkeyandcertificate` objects, owned and marked like the rest
 * (`created_by`, markers), the model's fields in a marker beside them (with the key's digest, since
 * a controller never gives the key back) so a restart compares without the key. A certificate is
 * checked before it is sent as Avi 31.2.1 checks it: PEM that parses, a common name or a subject
 * alternative name, a key that matches, not expired. Pure but for the clock it is given.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import type { Certificate } from '../../src/model/types.ts';
import { keyDigest } from '../../src/model/normalize.ts';

type Json = Record<string, unknown>;

/** The marker that carries the model's fields (JSON) and the checksum of what we wrote. */
export const CERT_MARKER = 'npl-lb-certificate';

interface CertMeta {
  source: string;
  subject: string;
  sniNames: string[];
  fingerprint: string;
  notAfter: string;
  keyDigest: string;
  cksum: string;
}

/** Why the controller would refuse this certificate, or why we must not send it (undefined: fine). */
export function certificateProblem(c: Certificate, now = Date.now()): string | undefined {
  try {
    const leaf = new X509Certificate(c.certPem);
    const cn = /(?:^|\n)CN=([^\n]+)/.exec(leaf.subject)?.[1];
    if (!cn && !leaf.subjectAltName)
      return `certificate ${c.name}: neither a common name nor a subject alternative name`;
    if (!leaf.checkPrivateKey(createPrivateKey(c.keyPem)))
      return `certificate ${c.name}: the private key does not match the certificate`;
    if (Date.parse(leaf.validTo) <= now)
      return `certificate ${c.name}: expired on ${new Date(leaf.validTo).toISOString()}`;
  } catch (err) {
    return `certificate ${c.name}: ${(err as Error).message}`;
  }
  return undefined;
}

const markerOf = (o: Json, key: string): string | undefined =>
  (o.markers as { key: string; values?: string[] }[] | undefined)?.find((m) => m.key === key)?.values?.[0];

export function renderCertificate(c: Certificate, owner: string, createdBy: string): Json {
  const [namespace = '', secret = ''] = c.source.split('/');
  const body = {
    name: c.name,
    created_by: createdBy,
    type: 'SSL_CERTIFICATE_TYPE_VIRTUALSERVICE',
    format: 'SSL_PEM',
    certificate: { certificate: c.certPem },
    key: c.keyPem,
  };
  const cksum = createHash('sha256').update(JSON.stringify(body)).digest('hex').slice(0, 16);
  const meta: CertMeta = {
    source: c.source,
    subject: c.subject,
    sniNames: c.sniNames,
    fingerprint: c.fingerprint,
    notAfter: c.notAfter,
    keyDigest: keyDigest(c.keyPem),
    cksum,
  };
  return {
    ...body,
    markers: [
      { key: 'clustername', values: [owner] },
      ...(namespace ? [{ key: 'namespace', values: [namespace] }] : []),
      ...(secret ? [{ key: 'secret', values: [secret] }] : []),
      { key: CERT_MARKER, values: [JSON.stringify(meta)] },
    ],
  };
}

function metaOf(o: Json): CertMeta | undefined {
  const text = markerOf(o, CERT_MARKER);
  if (!text) return undefined;
  try {
    return JSON.parse(text) as CertMeta;
  } catch {
    return undefined;
  }
}

/** The checksum we wrote with a certificate ('' when it has none: written again). */
export const certificateSum = (o: Json): string => metaOf(o)?.cksum ?? '';

/** A certificate object back in the model, the key as its digest; undefined when it is not ours to read. */
export function parseCertificate(o: Json): Certificate | undefined {
  const meta = metaOf(o);
  const pem = (o.certificate as { certificate?: unknown } | undefined)?.certificate;
  if (!meta || typeof pem !== 'string') return undefined;
  return {
    name: String(o.name),
    source: meta.source,
    certPem: pem,
    keyPem: meta.keyDigest,
    subject: meta.subject,
    sniNames: meta.sniNames,
    fingerprint: meta.fingerprint,
    notAfter: meta.notAfter,
  };
}
