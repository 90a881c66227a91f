/**
 * Certificates as AS3 objects: a `Certificate` (the chain and the key) in our application, and the
 * model's fields beside it in the application's `constants` (`npl_lb_certificates`: JSON by name,
 * with our owner and the key's digest), since a Certificate has no metadata and a BIG-IP need not
 * give the key back as it was sent. A certificate is checked before it is sent: PEM that parses
 * and a key that matches.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Certificate } from '../../src/model/types.ts';
import { keyDigest } from '../../src/model/normalize.ts';
import { remark } from './as3-text.ts';

type Json = Record<string, unknown>;

export const CERTS_CONSTANT = 'npl_lb_certificates';

interface CertMeta {
  owner: string;
  source: string;
  subject: string;
  sniNames: string[];
  fingerprint: string;
  notAfter: string;
  keyDigest: string;
}

export function renderCertificate(c: Certificate): Json {
  return {
    class: 'Certificate',
    remark: remark(`npl-lb ${c.source}`),
    certificate: c.certPem,
    privateKey: c.keyPem,
  };
}

/** Why a certificate cannot be sent (undefined when it can). */
export function certificateProblem(c: Certificate): string | undefined {
  try {
    const leaf = new X509Certificate(c.certPem);
    if (!leaf.checkPrivateKey(createPrivateKey(c.keyPem)))
      return `certificate ${c.name}: the private key does not match the certificate`;
  } catch (err) {
    return `certificate ${c.name}: ${(err as Error).message}`;
  }
  return undefined;
}

function readMeta(app: Json): Record<string, CertMeta> {
  const text = (app.constants as Json | undefined)?.[CERTS_CONSTANT];
  if (typeof text !== 'string') return {};
  try {
    return JSON.parse(text) as Record<string, CertMeta>;
  } catch {
    return {};
  }
}

/**
 * An application's `constants` with our certificates' fields for these certificates (others'
 * entries and other constants kept); undefined when nothing is left.
 */
export function certConstants(app: Json, certs: Certificate[], owner: string): Json | undefined {
  const others = Object.fromEntries(Object.entries(readMeta(app)).filter(([, m]) => m.owner !== owner));
  const ours = Object.fromEntries(
    certs.map((c) => [
      c.name,
      {
        owner,
        source: c.source,
        subject: c.subject,
        sniNames: c.sniNames,
        fingerprint: c.fingerprint,
        notAfter: c.notAfter,
        keyDigest: keyDigest(c.keyPem),
      } satisfies CertMeta,
    ]),
  );
  const all = { ...others, ...ours };
  const { class: _c, [CERTS_CONSTANT]: _m, ...rest } = (app.constants as Json | undefined) ?? {};
  if (Object.keys(all).length === 0 && Object.keys(rest).length === 0) return undefined;
  return {
    class: 'Constants',
    ...rest,
    ...(Object.keys(all).length > 0 ? { [CERTS_CONSTANT]: JSON.stringify(all) } : {}),
  };
}

/** The certificates of an application: ours (listed with our owner), and the names of the others. */
export function parseCertificates(app: Json, owner: string): { owned: Certificate[]; foreign: string[] } {
  const meta = readMeta(app);
  const owned: Certificate[] = [];
  const foreign: string[] = [];
  for (const [name, o] of Object.entries(app)) {
    if ((o as Json | null)?.class !== 'Certificate') continue;
    const m = meta[name];
    if (!m || m.owner !== owner) {
      foreign.push(name);
      continue;
    }
    owned.push({
      name,
      source: m.source,
      certPem: String((o as Json).certificate ?? ''),
      // What a BIG-IP gives back for the key need not be what was sent: its digest stands for it.
      keyPem: m.keyDigest,
      subject: m.subject,
      sniNames: m.sniNames,
      fingerprint: m.fingerprint,
      notAfter: m.notAfter,
    });
  }
  return { owned, foreign };
}
