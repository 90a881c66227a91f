/**
 * The CA bundles of pools spoken to over TLS (Pool.backendTls) and of binds that ask clients for
 * certificates (L7VirtualService.clientValidation) on the Data Plane transport: one file per
 * bundle in `storage/general`, named by its content (`ca-<tag>.pem`), uploaded before the
 * transaction whose servers or binds name it (`ssl_cafile`) and deleted once none of ours names it.
 * What a server names is read back as the stored file's content, so a bundle changed on the device
 * reads as drifted and is written again.
 */
import { caTag, TAG_PREFIX } from '../../../src/adapter/ca-bundles.ts';
import { type Pool, SYSTEM_CA, type VirtualService } from '../../../src/model/types.ts';
import { SYSTEM_CA_FILE } from '../tls-words.ts';
import { CRT_PREFIX, FILE_PREFIX } from '../policy-read.ts';
import { basename } from 'node:path';
import type { DpCertificates } from './certificates.ts';

const CA_FILE = /^ca-[0-9a-f]{16}\.pem$/;
const fileName = (ca: string) => `ca-${caTag(ca)}.pem`;

export class DpCaFiles {
  /** storage name -> content, of the bundles stored. */
  private readonly contents = new Map<string, string>();

  constructor(private readonly storage: DpCertificates) {}

  /** Reads the bundles stored (after the storage's own observe listed the files). */
  async observe(): Promise<void> {
    this.contents.clear();
    for (const name of this.storage.storedFiles().keys())
      if (CA_FILE.test(name)) this.contents.set(name, await this.storage.readGeneral(name));
  }

  /** Where a server finds the bundle (`ssl_cafile`): HAProxy's `@system-ca`, or its stored file. */
  path(ca: string): string | undefined {
    return ca === SYSTEM_CA ? SYSTEM_CA_FILE : this.storage.storedFiles().get(fileName(ca));
  }

  /** Uploads each bundle (bundlesOf) that is missing or differs. */
  async ensure(bundles: Iterable<string>): Promise<void> {
    for (const ca of bundles) {
      const name = fileName(ca);
      if (this.contents.get(name) === ca && this.storage.storedFiles().has(name)) continue;
      await this.storage.writeGeneral(name, ca);
      this.contents.set(name, ca);
    }
  }

  /**
   * Deletes the bundles none of these references names (each backend's CA as read from the device,
   * before it is resolved: `file:<path>` or `tag:<hex>`).
   */
  async prune(refs: Iterable<string>): Promise<void> {
    const used = new Set<string>();
    for (const ref of refs) {
      if (ref.startsWith(TAG_PREFIX)) used.add(`ca-${ref.slice(TAG_PREFIX.length)}.pem`);
      if (!ref.startsWith(FILE_PREFIX)) continue;
      const path = ref.slice(FILE_PREFIX.length);
      for (const [n, f] of this.storage.storedFiles()) if (f === path) used.add(n);
    }
    for (const name of [...this.contents.keys()])
      if (!used.has(name)) {
        await this.storage.deleteGeneral(name);
        this.contents.delete(name);
      }
  }

  /** A pool as read from the device, its CA the content of the file its servers name. */
  readPool(p: Pool): Pool {
    const tls = p.backendTls;
    if (!tls) return p;
    // The certificate presented: the stored certificate whose path the servers name (else as read,
    // never the desired name, so written again).
    const crt = tls.clientCertificate;
    const path = crt?.startsWith(CRT_PREFIX) ? crt.slice(CRT_PREFIX.length) : undefined;
    const name = path !== undefined ? basename(path, '.pem') : undefined;
    const named = name !== undefined && this.storage.certPath(name) === path ? name : crt;
    return {
      ...p,
      backendTls: { ...tls, ca: this.read(tls.ca) ?? '', ...(named ? { clientCertificate: named } : {}) },
    };
  }

  /** A virtual service as read from the device, its client CA the content of the file its bind names. */
  readVirtualService(v: VirtualService): VirtualService {
    if (v.kind !== 'l7') return v;
    const out = { ...v };
    if (v.clientValidation)
      out.clientValidation = { ...v.clientValidation, ca: this.read(v.clientValidation.ca) ?? '' };
    // The hosts of its crt-list asking client certificates (crt-list.ts), likewise.
    if (v.hostClientValidation)
      out.hostClientValidation = v.hostClientValidation.map((h) => ({ ...h, ca: this.read(h.ca) ?? '' }));
    return out;
  }

  /** A bundle's content from what a server or our note names it by (config-parse.ts CaReader). */
  read = (ref: string): string | undefined => {
    if (ref === SYSTEM_CA) return SYSTEM_CA;
    if (ref.startsWith(TAG_PREFIX)) return this.contents.get(`ca-${ref.slice(TAG_PREFIX.length)}.pem`);
    if (!ref.startsWith(FILE_PREFIX)) return undefined;
    const path = ref.slice(FILE_PREFIX.length);
    const name = [...this.storage.storedFiles()].find(([n, f]) => f === path && CA_FILE.test(n))?.[0];
    return name ? this.contents.get(name) : undefined;
  };
}
