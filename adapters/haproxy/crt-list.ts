/**
 * The text of a frontend's crt-list (a file on the runtime transport, the Data Plane API's storage
 * on the other), and what it says back. A line per
 * certificate, the default first (HAProxy picks by SNI from the certificates' own names). Hosts
 * asking client certificates (L7VirtualService.hostClientValidation) get a line each, after the
 * others: `<cert> [ca-file <bundle> verify required] <host>`, the certificate served for that
 * server name and the CA its clients' certificates must chain to. HAProxy takes the first line of
 * an exact name, so every certificate's own line then names its names but those hosts as filters
 * (a wildcard is looked up after every exact name, so it never hides one); a certificate with no
 * name left keeps its line with a negative filter alone (the first is the default for a handshake
 * without a server name, asking nothing: its requests reach no host that asks, by the 421 rule).
 */
import type { HostClientValidation, VirtualService } from '../../src/model/types.ts';

/** What the text is written with: the files of certificates and CA bundles, a certificate's names. */
export interface CrtListFiles {
  pemFile(name: string): string;
  caFile(ca: string): string;
  /** A certificate's SNI names (undefined: not known). */
  sniNames(name: string): readonly string[] | undefined;
}

/** A host as it may stand in a crt-list's filter (a DNS name or a wildcard one; the source checks it). */
export const FILTER_HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

const VERIFY = 'verify required';

/**
 * The certificates of a frontend's crt-list: an HTTPS one's, a TLS one's in Terminate mode; none
 * for a frontend that terminates no TLS.
 */
export function crtListOf(v: VirtualService | undefined): string[] | undefined {
  if (v?.kind === 'l7') return v.protocol === 'HTTPS' ? (v.certificates ?? []) : undefined;
  return v?.certificates;
}

/** The crt-list of a frontend that terminates TLS; undefined for one that does not. */
export function crtListText(v: VirtualService, f: CrtListFiles): string | undefined {
  const certs = crtListOf(v);
  if (!certs) return undefined;
  const asked = v.kind === 'l7' ? (v.hostClientValidation ?? []) : [];
  if (asked.length === 0) return certs.map((n) => `${f.pemFile(n)}\n`).join('');
  const hosts = new Set(asked.map((h) => h.host));
  // Every line names its filters: a line without them would take its names from the certificate
  // itself, an asking host's among them, ahead of that host's own line. Names only where they are
  // DNS names (the source checks them; a sidecar edited on the device is not trusted either); a
  // certificate with none left keeps its line with a negative filter alone (the first is the
  // default, and the lines without options are the certificates in order, as read back).
  const lines = certs.map((n) => {
    const rest = (f.sniNames(n) ?? []).filter((x) => FILTER_HOST.test(x) && !hosts.has(x));
    return `${f.pemFile(n)} ${rest.length > 0 ? rest.join(' ') : `!${asked[0]!.host}`}`;
  });
  for (const h of asked)
    lines.push(`${f.pemFile(h.certificate)} [ca-file ${f.caFile(h.ca)} ${VERIFY}] ${h.host}`);
  return lines.map((l) => `${l}\n`).join('');
}

const ASKING = /^(\S+) \[ca-file (\S+) verify required\] (\S+)$/;

/** A crt-list's lines as written: the certificates' files in order, and the asking hosts' lines. */
export function crtListParts(text: string): {
  files: string[];
  asking: { file: string; caFile: string; host: string }[];
} {
  const files: string[] = [];
  const asking: { file: string; caFile: string; host: string }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line) continue;
    const m = ASKING.exec(line);
    if (m) asking.push({ file: m[1]!, caFile: m[2]!, host: m[3]! });
    else if (!line.includes('[')) files.push(line.split(/\s+/)[0]!);
  }
  return { files, asking };
}

/**
 * The hosts a crt-list asks client certificates for, from its own lines (what crtListText writes:
 * another option, or a file that is not ours, reads as none, and the frontend is written again).
 */
export function hostValidationOf(
  text: string,
  read: { certificate(file: string): string | undefined; ca(file: string): string | undefined },
): HostClientValidation[] | undefined {
  const out: HostClientValidation[] = [];
  for (const a of crtListParts(text).asking) {
    if (!FILTER_HOST.test(a.host)) continue;
    const certificate = read.certificate(a.file);
    const ca = read.ca(a.caFile);
    if (certificate !== undefined && ca !== undefined) out.push({ host: a.host, certificate, ca });
  }
  return out.length > 0 ? out.sort((a, b) => (a.host < b.host ? -1 : 1)) : undefined;
}
