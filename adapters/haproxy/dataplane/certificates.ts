/**
 * Certificates and crt-lists of the Data Plane transport, through the storage endpoints as the v2
 * and v3 specs define them. A certificate is `<name>.pem` in `storage/ssl_certificates` (the chain,
 * then the key): created with POST, rotated with PUT, which the API pushes into the running HAProxy
 * (`set ssl cert` + `commit ssl cert`) so a rotation never reloads. The API never gives a key back,
 * so what the model says of a certificate (never the key: its digest, keyDigest) is kept beside it
 * as `<name>.json` in `storage/general`, marked with our owner. An HTTPS frontend's crt-list is
 * `<frontend>.crtlist` (v3 `storage/ssl_crt_lists`, v2 `storage/general`), the default certificate
 * first. A certificate a frontend gains or loses past its default changes the crt-list file (no
 * reload) and, in v3, the running HAProxy's crt-list through `runtime/ssl_crt_lists/entries`; v2
 * has no runtime crt-list endpoint, so there it costs one reload (`force_reload`).
 */
import type { Certificate, HostClientValidation, VirtualService } from '../../../src/model/types.ts';
import { crtListParts, crtListText, hostValidationOf } from '../crt-list.ts';
import { FILE_PREFIX } from '../policy-read.ts';
import { keyDigest } from '../../../src/model/normalize.ts';
import type { Observed } from '../../../src/adapter/changes.ts';
import { DataplaneClient, DataplaneError, type Query } from './client.ts';
import { dpStoredFileSchema, type DpStoredFile } from './models.ts';
import { z } from 'zod';

const STORAGE = '/services/haproxy/storage';
const seg = encodeURIComponent;

/** The chain and the key in one file, each on lines of its own. */
export const pemFile = (c: Certificate): string =>
  `${c.certPem}${c.certPem.endsWith('\n') ? '' : '\n'}${c.keyPem}${c.keyPem.endsWith('\n') ? '' : '\n'}`;

const sidecarSchema = z
  .object({
    owner: z.string(),
    name: z.string(),
    source: z.string(),
    certPem: z.string(),
    keyDigest: z.string(),
    subject: z.string(),
    sniNames: z.array(z.string()),
    fingerprint: z.string(),
    notAfter: z.string(),
  })
  .loose();

const sidecarName = (cert: string) => `${cert}.json`;
const certFileName = (cert: string) => `${cert}.pem`;
const crtListName = (vs: string) => `${vs}.crtlist`;

/** What a write answered: a reload HAProxy does (wait for it) or none. */
export type Reloaded = string | undefined;

export class DpCertificates {
  /** Path on the device of each certificate and crt-list we know of (storage name -> file). */
  private readonly files = new Map<string, string>();
  /** Each certificate's SNI names (its sidecar), for crt-lists that name hosts. */
  private readonly names = new Map<string, string[]>();
  /** Each crt-list's text as last read or written (storage name -> text). */
  private readonly texts = new Map<string, string>();

  constructor(
    private readonly client: DataplaneClient,
    private readonly owner: string,
    private readonly awaitReload: (id: string) => Promise<void>,
  ) {}

  private get v3(): boolean {
    return this.client.apiVersion === 'v3';
  }

  private async list(area: string): Promise<DpStoredFile[]> {
    const r = await this.client.send('GET', `${STORAGE}/${area}`);
    return z.array(dpStoredFileSchema).parse(r.body ?? []);
  }

  private async contents(area: string, name: string): Promise<string> {
    const r = await this.client.send('GET', `${STORAGE}/${area}/${seg(name)}`);
    return typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  }

  private async settle(headers: Record<string, string | string[] | undefined>, status: number) {
    const id = headers['reload-id'];
    if (status === 202 && id) await this.awaitReload(Array.isArray(id) ? id[0]! : id);
  }

  private remember(f: DpStoredFile): void {
    if (f.storage_name && f.file) this.files.set(f.storage_name, f.file);
  }

  /** Our certificates (with the key's digest) and the names of everyone else's. */
  async observe(): Promise<{ owned: Certificate[]; foreign: Observed['foreign'] }> {
    const [certs, general, lists] = await Promise.all([
      this.list('ssl_certificates'),
      this.list('general'),
      this.v3 ? this.list('ssl_crt_lists') : Promise.resolve([]),
    ]);
    for (const f of [...certs, ...general, ...lists]) this.remember(f);
    const sidecars = new Map<string, z.infer<typeof sidecarSchema>>();
    for (const g of general.filter((f) => f.storage_name?.endsWith('.json'))) {
      try {
        const s = sidecarSchema.parse(JSON.parse(await this.contents('general', g.storage_name!)));
        sidecars.set(s.name, s);
        this.names.set(s.name, s.sniNames);
      } catch {
        // Not one of ours, or half-written: left alone.
      }
    }
    const owned: Certificate[] = [];
    const foreign: Observed['foreign'] = [];
    for (const c of certs) {
      const name = c.storage_name?.replace(/\.pem$/, '') ?? '';
      const s = sidecars.get(name);
      if (s?.owner === this.owner) {
        const { owner: _o, keyDigest: digest, ...model } = s;
        owned.push({ ...model, keyPem: digest });
      } else {
        const owner = s?.owner ?? (name.includes('--') ? name.split('--')[0]! : 'unknown');
        foreign.push({ kind: 'certificate', name, owner });
      }
    }
    return { owned, foreign };
  }

  /** The files stored (storage name -> path on the device), as observe() and writes left them. */
  storedFiles(): ReadonlyMap<string, string> {
    return this.files;
  }

  /** A general file's content. */
  readGeneral(name: string): Promise<string> {
    return this.contents('general', name);
  }

  /**
   * Creates or replaces a general file (no reload of its own, but for a replacement asked to
   * reload: `force_reload`); its path on the device.
   */
  writeGeneral(name: string, content: string, query: Query = {}): Promise<string> {
    return this.putGeneral(name, content, this.files.has(name), this.files.has(name) ? query : {});
  }

  /** Deletes a general file, gone already or not. */
  async deleteGeneral(name: string): Promise<void> {
    await this.client.send('DELETE', `${STORAGE}/general/${seg(name)}`).catch((err: unknown) => {
      if (!(err instanceof DataplaneError && err.status === 404)) throw err;
    });
    this.files.delete(name);
  }

  /** The path of a stored certificate, for crt-lists. */
  certPath(name: string): string | undefined {
    return this.files.get(certFileName(name));
  }

  /**
   * What a frontend's crt-list says (crt-list.ts): its certificates in order (names of ours only),
   * and the hosts it asks client certificates for, each CA as the file it names (`file:<path>`).
   */
  async crtListRead(vs: string): Promise<{ certificates: string[]; asking?: HostClientValidation[] }> {
    const name = crtListName(vs);
    if (!this.files.has(name)) return { certificates: [] };
    const text = await this.contents(this.v3 ? 'ssl_crt_lists' : 'general', name);
    this.texts.set(name, text);
    const byPath = new Map([...this.files].map(([storage, file]) => [file, storage]));
    const certName = (file: string) =>
      (byPath.get(file) ?? file.split('/').pop() ?? '').replace(/\.pem$/, '');
    const asking = hostValidationOf(text, {
      certificate: (file) => (byPath.has(file) ? certName(file) : undefined),
      ca: (file) => `${FILE_PREFIX}${file}`,
    });
    return { certificates: crtListParts(text).files.map(certName), ...(asking ? { asking } : {}) };
  }

  /** Creates or replaces a certificate; HAProxy takes it without a reload when it can. */
  async put(c: Certificate, exists: boolean): Promise<void> {
    const file = certFileName(c.name);
    const r = exists
      ? await this.client.send('PUT', `${STORAGE}/ssl_certificates/${seg(file)}`, {}, { text: pemFile(c) })
      : await this.client.send(
          'POST',
          `${STORAGE}/ssl_certificates`,
          {},
          { form: { field: 'file_upload', filename: file, content: pemFile(c) } },
        );
    const stored = dpStoredFileSchema.safeParse(r.body);
    if (stored.success) this.remember(stored.data);
    await this.settle(r.headers, r.status);
    this.names.set(c.name, c.sniNames);
    const { keyPem, certPem, ...model } = c;
    const sidecar = JSON.stringify({ owner: this.owner, ...model, certPem, keyDigest: keyDigest(keyPem) });
    await this.putGeneral(sidecarName(c.name), sidecar, this.files.has(sidecarName(c.name)), {});
  }

  /**
   * Deletes a certificate no frontend of ours serves any more (their crt-lists changed first), with
   * `skip_reload`: a running HAProxy that still holds it holds it unused until its next reload,
   * where asking the API to drop it from the runtime reloads whenever HAProxy no longer has it.
   */
  async remove(name: string): Promise<void> {
    const r = await this.client
      .send('DELETE', `${STORAGE}/ssl_certificates/${seg(certFileName(name))}`, { skip_reload: true })
      .catch((err: unknown) => {
        if (err instanceof DataplaneError && err.status === 404) return undefined;
        throw err;
      });
    if (r) await this.settle(r.headers, r.status);
    this.files.delete(certFileName(name));
    await this.client.send('DELETE', `${STORAGE}/general/${seg(sidecarName(name))}`).catch((err: unknown) => {
      if (!(err instanceof DataplaneError && err.status === 404)) throw err;
    });
    this.files.delete(sidecarName(name));
  }

  private async putGeneral(name: string, content: string, exists: boolean, query: Query): Promise<string> {
    const r = !exists
      ? await this.client.send(
          'POST',
          `${STORAGE}/general`,
          {},
          { form: { field: 'file_upload', filename: name, content } },
        )
      : await this.client.send(
          'PUT',
          `${STORAGE}/general/${seg(name)}`,
          query,
          this.v3 ? { form: { field: 'file_upload', filename: name, content } } : { text: content },
        );
    const stored = dpStoredFileSchema.safeParse(r.body);
    if (stored.success) this.remember(stored.data);
    await this.settle(r.headers, r.status);
    return this.files.get(name) ?? '';
  }

  /** A stored certificate's path for a crt-list; a certificate not stored fails the write (424). */
  private pemPath(c: string): string {
    const path = this.certPath(c);
    if (!path) throw new DataplaneError(424, `certificate ${c} is not stored on the device`);
    return path;
  }

  private crtListText(v: VirtualService, caPath: (ca: string) => string | undefined): string {
    const text = crtListText(v, {
      pemFile: (c) => this.pemPath(c),
      caFile: (ca) => {
        const path = caPath(ca);
        if (!path) throw new DataplaneError(424, 'a client CA bundle is not stored on the device');
        return path;
      },
      sniNames: (c) => this.names.get(c),
    });
    return text ?? '';
  }

  /**
   * Writes a frontend's crt-list before the transaction that binds it, without a reload of its
   * own when the file exists (the commit that follows reloads), but where hosts asking client
   * certificates change: those are in the crt-list alone, and the commit may change nothing
   * (one reload of its own then). Returns its path on the device.
   */
  async writeCrtList(v: VirtualService, caPath: (ca: string) => string | undefined): Promise<string> {
    const name = crtListName(v.name);
    const text = this.crtListText(v, caPath);
    const was = this.texts.get(name);
    const asking = was !== undefined && was !== text && (was.includes('[') || text.includes('['));
    const query = asking ? { force_reload: true } : { skip_reload: true };
    if (!this.v3) {
      const path = await this.putGeneral(name, text, this.files.has(name), query);
      this.texts.set(name, text);
      return path;
    }
    const r = this.files.has(name)
      ? await this.client.send('PUT', `${STORAGE}/ssl_crt_lists/${seg(name)}`, query, { text })
      : await this.client.send(
          'POST',
          `${STORAGE}/ssl_crt_lists`,
          {},
          { form: { field: 'file_upload', filename: name, content: text } },
        );
    const stored = dpStoredFileSchema.safeParse(r.body);
    if (stored.success) this.remember(stored.data);
    await this.settle(r.headers, r.status);
    this.texts.set(name, text);
    return this.files.get(name) ?? '';
  }

  /**
   * A frontend that keeps its default certificate gains or loses others, with no change to the
   * configuration: the file is rewritten and (v3) the running crt-list changed entry by entry;
   * v2 reloads once.
   */
  async changeCrtList(vs: string, before: string[], after: string[]): Promise<void> {
    const name = crtListName(vs);
    const text = after.map((c) => `${this.pemPath(c)}\n`).join('');
    if (!this.v3) {
      await this.putGeneral(name, text, true, { force_reload: true });
      this.texts.set(name, text);
      return;
    }
    await this.client.send('PUT', `${STORAGE}/ssl_crt_lists/${seg(name)}`, { skip_reload: true }, { text });
    this.texts.set(name, text);
    const list = this.files.get(name) ?? '';
    const entries = '/services/haproxy/runtime/ssl_crt_lists/entries';
    for (const c of after.filter((n) => !before.includes(n))) {
      await this.client.send('POST', entries, { name: list }, { json: { file: this.certPath(c) } });
    }
    for (const c of before.filter((n) => !after.includes(n))) {
      const file = this.certPath(c);
      if (file) await this.client.send('DELETE', entries, { name: list, cert_file: file });
    }
  }

  /** A frontend's crt-list, once no frontend binds it. */
  async removeCrtList(vs: string): Promise<void> {
    const name = crtListName(vs);
    if (!this.files.has(name)) return;
    const area = this.v3 ? 'ssl_crt_lists' : 'general';
    await this.client
      .send('DELETE', `${STORAGE}/${area}/${seg(name)}`, this.v3 ? { skip_reload: true } : {})
      .catch((err: unknown) => {
        if (!(err instanceof DataplaneError && err.status === 404)) throw err;
      });
    this.files.delete(name);
  }

  /** Our crt-lists on the device (frontend names), for removing those no frontend binds. */
  crtLists(): string[] {
    return [...this.files.keys()].filter((n) => n.endsWith('.crtlist')).map((n) => n.slice(0, -8));
  }
}
