/**
 * A pool's TLS to its members (Pool.backendTls) as adapters keep it: the CA bundle by a short tag
 * of its content (a file name, a device object's name), and the whole value as one word beside
 * the other stored policy words, for a pool whose device has no field left to read it from (a
 * backend without servers). The tag names content, so a bundle changed on the device reads as
 * another one and is written again. Pure.
 */
import { createHash } from 'node:crypto';
import { type BackendTls, SYSTEM_CA } from '../model/types.ts';

/** A CA bundle's tag: SYSTEM_CA, or the first 16 hex digits of its SHA-256. */
export const caTag = (ca: string): string =>
  ca === SYSTEM_CA ? SYSTEM_CA : createHash('sha256').update(ca).digest('hex').slice(0, 16);

/** What a read gives for a bundle known by its tag alone: the adapter reads the content it names. */
export const TAG_PREFIX = 'tag:';

const NAME = /^[a-z0-9.-]{1,253}$/;
const TAG = /^(System|[0-9a-f]{16})$/;

/**
 * The stored word's value: `<serverName>~<name>+<name>~<tag>`, then `~<certificate>` where the
 * members are presented one (DNS names and model names, validated, hold none of `~+`).
 */
export const tlsWord = (t: BackendTls): string =>
  `${t.serverName}~${t.verifyNames.join('+')}~${caTag(t.ca)}${t.clientCertificate ? `~${t.clientCertificate}` : ''}`;

/**
 * The stored word read back; the CA as `tag:<hex>` (or SYSTEM_CA) for the adapter to resolve.
 * Anything else reads as no TLS, and the next pass writes it again.
 */
export function readTlsWord(v: string | undefined): BackendTls | undefined {
  const [serverName = '', names = '', tag = '', crt, ...more] = (v ?? '').split('~');
  const verifyNames = names.split('+');
  if (!NAME.test(serverName) || !verifyNames.every((n) => NAME.test(n)) || !TAG.test(tag)) return undefined;
  if ((crt !== undefined && !NAME.test(crt)) || more.length > 0) return undefined;
  return {
    serverName,
    verifyNames,
    ca: tag === SYSTEM_CA ? SYSTEM_CA : `${TAG_PREFIX}${tag}`,
    ...(crt !== undefined ? { clientCertificate: crt } : {}),
  };
}
