/**
 * The simulated Data Plane API's storage, as the real one behaves (dataplaneapi's storage
 * handlers): files in directories of their own (mode 700, files 600). SSL certificates: a new or
 * replaced one is pushed to the running HAProxy through the runtime API (`new ssl cert`, `set ssl
 * cert`, `commit ssl cert`) and only when that fails does HAProxy reload (202 + Reload-ID);
 * `skip_reload` writes the file alone. A certificate that does not parse or whose key does not
 * match is refused (400) and nothing is written. Deleting a file the configuration still names is
 * refused (409). crt-lists (v3 `ssl_crt_lists`; v2 keeps them in `general`): a created one reloads,
 * a replaced one reloads unless `skip_reload`; the v3 runtime endpoints add and delete crt-list
 * entries in the running HAProxy (`add ssl crt-list`, `del ssl crt-list`).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import { DpError } from './config-crud.ts';

export interface Upload {
  /** The multipart `file_upload` part: its filename and contents. */
  file?: { filename: string; content: string } | undefined;
  /** A text/plain body. */
  text?: string | undefined;
}

export interface StorageReply {
  status: number;
  body?: unknown;
  /** A file's contents, sent as they are. */
  raw?: string;
  headers?: Record<string, string>;
}

export interface StorageHooks {
  /** Runtime API commands; the answer of each. */
  runtime: (line: string) => Promise<string>;
  /** Queues a reload and returns its id. */
  reload: () => string;
  /** Reloads now (force_reload). */
  forceReload: () => Promise<void>;
  /** The configuration as rendered now (deletes of files it names are refused). */
  configText: () => string;
}

type Area = 'ssl_certificates' | 'ssl_crt_lists' | 'general';

const NAME = /^[A-Za-z0-9_.-]+$/;
const bool = (q: Record<string, string>, k: string) => q[k] === 'true' || q[k] === '1';

/** What HAProxy would refuse in a certificate file: no certificate, no key, a key that does not match. */
export function pemProblem(pem: string): string | undefined {
  const cert = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(pem)?.[0];
  const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]+?-----END [A-Z ]*PRIVATE KEY-----/.exec(pem)?.[0];
  if (!cert) return 'no certificate in the file';
  if (!key) return 'no private key in the file';
  try {
    if (!new X509Certificate(cert).checkPrivateKey(createPrivateKey(key))) {
      return 'the private key does not match the certificate';
    }
  } catch (err) {
    return (err as Error).message;
  }
  return undefined;
}

function certInfo(file: string, pem: string, storageName: string): Record<string, unknown> {
  const info: Record<string, unknown> = { file, storage_name: storageName, description: 'managed SSL file' };
  try {
    const leaf = new X509Certificate(pem);
    info.subject = leaf.subject.replaceAll('\n', ',');
    info.domains = (leaf.subjectAltName ?? '').replaceAll('DNS:', '').replaceAll(', ', ',');
    info.not_after = new Date(leaf.validTo).toISOString();
    info.not_before = new Date(leaf.validFrom).toISOString();
    info.serial = leaf.serialNumber;
    info.size = Buffer.byteLength(pem);
  } catch {
    // Listed without details.
  }
  return info;
}

export class SimStorage {
  constructor(
    private readonly root: string,
    private readonly hooks: StorageHooks,
  ) {}

  dir(area: Area): string {
    const d = join(this.root, area);
    if (!existsSync(d)) mkdirSync(d, { recursive: true, mode: 0o700 });
    return d;
  }

  private path(area: Area, name: string): string {
    if (!NAME.test(name)) throw new DpError(400, `${name.slice(0, 80)}: not a valid file name`);
    return join(this.dir(area), name);
  }

  private write(file: string, content: string): void {
    writeFileSync(file, content, { mode: 0o600 });
    chmodSync(file, 0o600);
  }

  private listing(area: Area): Record<string, unknown>[] {
    const d = this.dir(area);
    return readdirSync(d)
      .sort()
      .map((n) => {
        const file = join(d, n);
        return area === 'ssl_certificates'
          ? certInfo(file, readFileSync(file, 'utf8'), n)
          : {
              file,
              storage_name: n,
              description: area === 'general' ? 'managed file' : 'managed certificate list',
              size: Buffer.byteLength(readFileSync(file)),
            };
      });
  }

  /** The `storage/...` routes (`rest`: the path after storage/) and v3's runtime crt-list entries. */
  async route(
    v: ApiVersion,
    method: string,
    rest: string[],
    query: Record<string, string>,
    up: Upload,
    body: unknown,
  ): Promise<StorageReply> {
    const [areaName, name, sub] = rest;
    if (areaName === 'runtime_crt_list_entries') return this.runtimeEntries(v, method, query, body);
    const area = areaName as Area;
    if (
      !(area === 'ssl_certificates' || area === 'general' || (area === 'ssl_crt_lists' && v === 'v3')) ||
      sub !== undefined
    ) {
      throw new DpError(404, `storage/${rest.join('/')}: not found in this simulator`);
    }
    if (name === undefined) {
      if (method === 'GET') return { status: 200, body: this.listing(area) };
      if (method !== 'POST') throw new DpError(405, `${method} not allowed`);
      if (!up.file) throw new DpError(400, 'file_upload is required');
      return this.create(area, up.file.filename, up.file.content, query);
    }
    const file = this.path(area, name);
    if (!existsSync(file)) throw new DpError(404, `${area} ${name} not found`);
    if (method === 'GET') {
      const content = readFileSync(file, 'utf8');
      return area === 'ssl_certificates'
        ? { status: 200, body: certInfo(file, content, name) }
        : { status: 200, raw: content };
    }
    if (method === 'PUT') {
      const content = v === 'v3' && area === 'general' ? up.file?.content : up.text;
      if (content === undefined) throw new DpError(400, 'the new contents are required');
      return this.replace(area, name, file, content, query);
    }
    if (method === 'DELETE') return this.remove(area, name, file, query);
    throw new DpError(405, `${method} not allowed`);
  }

  private async create(
    area: Area,
    filename: string,
    content: string,
    query: Record<string, string>,
  ): Promise<StorageReply> {
    const file = this.path(area, filename);
    if (existsSync(file)) throw new DpError(409, `${area} ${filename} already exists`);
    if (area === 'ssl_certificates') {
      const bad = pemProblem(content);
      if (bad) throw new DpError(400, `${filename}: ${bad}`);
    }
    this.write(file, content);
    const info =
      area === 'ssl_certificates'
        ? certInfo(file, content, filename)
        : { file, storage_name: filename, size: Buffer.byteLength(content) };
    if (area === 'general' || bool(query, 'skip_reload')) return { status: 201, body: info };
    if (bool(query, 'force_reload')) {
      await this.hooks.forceReload();
      return { status: 201, body: info };
    }
    if (area === 'ssl_certificates' && (await this.push(file, content, true)))
      return { status: 201, body: info };
    return { status: 202, body: info, headers: { 'reload-id': this.hooks.reload() } };
  }

  private async replace(
    area: Area,
    name: string,
    file: string,
    content: string,
    query: Record<string, string>,
  ): Promise<StorageReply> {
    if (area === 'ssl_certificates') {
      const bad = pemProblem(content);
      if (bad) throw new DpError(400, `${name}: ${bad}`);
    }
    this.write(file, content);
    const info =
      area === 'ssl_certificates'
        ? certInfo(file, content, name)
        : { file, storage_name: name, size: Buffer.byteLength(content) };
    // general answers without a body (204), the others with the file's description (200).
    const done = area === 'general' ? { status: 204 } : { status: 200, body: info };
    if (bool(query, 'skip_reload')) return done;
    if (bool(query, 'force_reload')) {
      await this.hooks.forceReload();
      return done;
    }
    if (area === 'general') return done;
    if (area === 'ssl_certificates' && (await this.push(file, content, false))) return done;
    return { status: 202, body: info, headers: { 'reload-id': this.hooks.reload() } };
  }

  private async remove(
    area: Area,
    name: string,
    file: string,
    query: Record<string, string>,
  ): Promise<StorageReply> {
    const line = this.hooks
      .configText()
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l && !l.startsWith('#') && l.includes(file));
    if (line)
      throw new DpError(409, `rejecting attempt to delete file ${file} referenced in haproxy conf: ${line}`);
    rmSync(file, { force: true });
    if (area === 'general' || bool(query, 'skip_reload')) return { status: 204 };
    if (bool(query, 'force_reload')) {
      await this.hooks.forceReload();
      return { status: 204 };
    }
    if (
      area === 'ssl_certificates' &&
      /Success|deleted/i.test(await this.hooks.runtime(`del ssl cert ${file}`))
    ) {
      return { status: 204 };
    }
    return { status: 202, headers: { 'reload-id': this.hooks.reload() } };
  }

  /** A certificate into the running HAProxy without a reload; false when HAProxy refused a step. */
  private async push(file: string, content: string, created: boolean): Promise<boolean> {
    if (created && !/New empty certificate store/i.test(await this.hooks.runtime(`new ssl cert ${file}`))) {
      return false;
    }
    const payload = content.endsWith('\n') ? content : `${content}\n`;
    const set = await this.hooks.runtime(`set ssl cert ${file} <<\n${payload}`);
    if (!/Transaction (created|updated)/i.test(set)) {
      await this.hooks.runtime(`abort ssl cert ${file}`).catch(() => '');
      return false;
    }
    return /Success/i.test(await this.hooks.runtime(`commit ssl cert ${file}`));
  }

  /** v3 `runtime/ssl_crt_lists/entries`: the running HAProxy's crt-lists. */
  private async runtimeEntries(
    v: ApiVersion,
    method: string,
    query: Record<string, string>,
    body: unknown,
  ): Promise<StorageReply> {
    if (v !== 'v3') throw new DpError(404, 'runtime/ssl_crt_lists: not in v2');
    const list = query.name;
    if (!list) throw new DpError(400, 'name is required');
    const plain = /^[^\s<>]+$/;
    if (method === 'POST') {
      const file = (body as { file?: unknown } | undefined)?.file;
      if (typeof file !== 'string' || !plain.test(file) || !plain.test(list)) {
        throw new DpError(400, 'file (a path) is required');
      }
      const out = await this.hooks.runtime(`add ssl crt-list ${list} ${file}`);
      if (!/Success|Inserting/i.test(out)) throw new DpError(400, out.trim().split('\n')[0] ?? 'refused');
      return { status: 201 };
    }
    if (method === 'DELETE') {
      const cert = query.cert_file;
      if (!cert || !plain.test(cert) || !plain.test(list)) throw new DpError(400, 'cert_file is required');
      const out = await this.hooks.runtime(`del ssl crt-list ${list} ${cert}`);
      if (!/deleted|removed|Success/i.test(out)) {
        throw new DpError(/not found|doesn't exist/i.test(out) ? 404 : 400, out.trim().split('\n')[0] ?? '');
      }
      return { status: 204 };
    }
    throw new DpError(405, `${method} not allowed`);
  }
}
