/**
 * Certificates of the HAProxy runtime transport: files npl-lb owns in a directory of its own
 * (mode 700), one `<name>.pem` per certificate (the chain, then the key; mode 600) with a
 * `<name>.json` beside it holding what the model says of it (never the key), and one crt-list per
 * HTTPS frontend (the default certificate first; HAProxy picks by SNI from the certificates' own
 * names). A certificate HAProxy has loaded is replaced without a reload through the runtime API
 * (`set ssl cert` with the new PEM, then `commit ssl cert`), and its file is kept in step, so a
 * later reload serves the same. Keys are never logged.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Certificate, HostClientValidation, VirtualService } from '../../src/model/types.ts';
import type { Change, CoreChange } from '../../src/adapter/changes.ts';
import type { ApplyResult } from '../../src/adapter/contract.ts';
import { AdapterError, type AdapterErrorCode, isTerminalCode } from '../../src/adapter/errors.ts';
import { socketCommand } from './process.ts';
import { caFile } from './config.ts';
import { crtListOf, crtListText, hostValidationOf } from './crt-list.ts';

/** What the sidecar holds: the model's fields but the PEM texts, and where the key starts in the file. */
type Stored = Omit<Certificate, 'certPem' | 'keyPem'> & {
  layout: { certLength: number; separator: string; keyNewline: boolean };
};

/** The chain and the key in one file, each on lines of its own. */
const separator = (c: Certificate): string => (c.certPem.endsWith('\n') ? '' : '\n');
const fileText = (c: Certificate): string =>
  `${c.certPem}${separator(c)}${c.keyPem}${c.keyPem.endsWith('\n') ? '' : '\n'}`;

export class CertStore {
  constructor(readonly dir: string) {}

  private ensureDir(): void {
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  pemFile(name: string): string {
    return join(this.dir, `${name}.pem`);
  }

  crtList(vs: string): string {
    return join(this.dir, `${vs}.crtlist`);
  }

  /** The certificates on disk, as the model has them. */
  read(): Certificate[] {
    if (!existsSync(this.dir)) return [];
    const out: Certificate[] = [];
    for (const f of readdirSync(this.dir)
      .filter((x) => x.endsWith('.json'))
      .sort()) {
      const name = f.slice(0, -5);
      try {
        const { layout, ...meta } = JSON.parse(readFileSync(join(this.dir, f), 'utf8')) as Stored;
        const pem = readFileSync(this.pemFile(name), 'utf8');
        // Exactly the texts that were written, so the device compares equal to what was asked.
        const certPem = pem.slice(0, layout.certLength);
        const keyPem = pem.slice(
          layout.certLength + layout.separator.length,
          layout.keyNewline ? -1 : undefined,
        );
        out.push({ ...meta, name, certPem, keyPem });
      } catch {
        // A half-written pair is not ours to show: the next write replaces it.
      }
    }
    return out;
  }

  /** What HAProxy would refuse, checked before it is asked: PEM that parses and a key that matches. */
  static problem(c: Certificate): string | undefined {
    try {
      const leaf = new X509Certificate(c.certPem);
      if (!leaf.checkPrivateKey(createPrivateKey(c.keyPem)))
        return `certificate ${c.name}: the key does not match`;
    } catch (err) {
      return `certificate ${c.name}: ${(err as Error).message}`;
    }
    return undefined;
  }

  write(c: Certificate): void {
    this.ensureDir();
    const { certPem: _c, keyPem: _k, ...rest } = c;
    const meta: Stored = {
      ...rest,
      layout: { certLength: c.certPem.length, separator: separator(c), keyNewline: !c.keyPem.endsWith('\n') },
    };
    writeFileSync(this.pemFile(c.name), fileText(c), { mode: 0o600 });
    chmodSync(this.pemFile(c.name), 0o600);
    writeFileSync(join(this.dir, `${c.name}.json`), JSON.stringify(meta), { mode: 0o600 });
  }

  remove(name: string): void {
    rmSync(this.pemFile(name), { force: true });
    rmSync(join(this.dir, `${name}.json`), { force: true });
  }

  /**
   * The crt-lists of the frontends that terminate TLS (HTTPS, and TLS listeners in Terminate mode),
   * written before a check or reload reads them.
   */
  writeCrtLists(vss: Iterable<VirtualService>): void {
    // The certificates' names, read from their sidecars only where a host asks client
    // certificates (crt-list.ts asks for them then alone): not on every write of the file.
    let names: Map<string, string[]> | undefined;
    for (const v of vss) {
      const text = crtListText(v, {
        pemFile: (n) => this.pemFile(n),
        caFile: (ca) => caFile(ca, this.dir),
        sniNames: (n) => (names ??= new Map(this.read().map((c) => [c.name, c.sniNames]))).get(n),
      });
      if (text === undefined) continue;
      this.ensureDir();
      writeFileSync(this.crtList(v.name), text);
    }
  }

  /** Each HTTPS frontend's hosts asking client certificates, from its crt-list (set on it where some). */
  readHostValidation(vss: VirtualService[], ca: (file: string) => string | undefined): void {
    for (const v of vss) {
      if (v.kind !== 'l7' || v.protocol !== 'HTTPS') continue;
      const asked = this.hostValidation(v.name, ca);
      if (asked) v.hostClientValidation = asked;
    }
  }

  /** The hosts a frontend's crt-list asks client certificates for (crt-list.ts), as read. */
  private hostValidation(
    vs: string,
    ca: (file: string) => string | undefined,
  ): HostClientValidation[] | undefined {
    let text: string;
    try {
      text = readFileSync(this.crtList(vs), 'utf8');
    } catch {
      return undefined;
    }
    return hostValidationOf(text, {
      certificate: (file) =>
        dirname(file) === this.dir &&
        file.endsWith('.pem') &&
        existsSync(join(this.dir, `${basename(file, '.pem')}.json`))
          ? basename(file, '.pem')
          : undefined,
      ca,
    });
  }

  /**
   * Replaces a certificate HAProxy has loaded, without a reload. False when HAProxy does not hold
   * it (no frontend uses it yet: the file alone is enough); throws with HAProxy's reason otherwise.
   */
  async replaceLive(adminSocket: string, c: Certificate): Promise<boolean> {
    const file = this.pemFile(c.name);
    const set = await socketCommand(adminSocket, `set ssl cert ${file} <<\n${fileText(c)}`);
    if (/not referenced|unknown|No such/i.test(set)) return false;
    if (!/Transaction (created|updated)/i.test(set)) {
      await socketCommand(adminSocket, `abort ssl cert ${file}`).catch(() => undefined);
      throw new AdapterError('Invalid', `certificate ${c.name}: HAProxy refused it: ${firstLine(set)}`);
    }
    const commit = await socketCommand(adminSocket, `commit ssl cert ${file}`);
    if (!/Success/i.test(commit)) {
      throw new AdapterError('Failed', `certificate ${c.name}: commit failed: ${firstLine(commit)}`);
    }
    return true;
  }
}

const firstLine = (s: string): string => s.trim().split('\n')[0]?.slice(0, 200) ?? '';

type CertChange = Extract<Change, { kind: 'certificate' }>;

/**
 * A certificate change: a new one is written; a changed one replaces the live one first (so one
 * HAProxy refuses leaves the old one serving, file and all) and then its file; a deleted one goes
 * unless a frontend still uses it. Each fails alone, with its reason.
 */
export async function applyCertificate(
  store: CertStore,
  adminSocket: string,
  c: CertChange,
  inUse: (name: string) => boolean,
): Promise<ApplyResult> {
  const fail = (code: AdapterErrorCode, message: string): ApplyResult => ({
    change: c,
    ok: false,
    error: { code, message, terminal: isTerminalCode(code) },
  });
  try {
    if (c.op === 'delete') {
      if (inUse(c.name))
        return fail('InUse', `certificate ${c.name} is still used (a frontend, or a pool's servers)`);
      store.remove(c.name);
      return { change: c, ok: true };
    }
    const problem = CertStore.problem(c.desired);
    if (problem) return fail('Invalid', problem);
    if (c.op === 'update') await store.replaceLive(adminSocket, c.desired);
    store.write(c.desired);
    return { change: c, ok: true };
  } catch (err) {
    return err instanceof AdapterError
      ? fail(err.code, err.message)
      : fail('Unavailable', `certificate ${c.name}: ${(err as Error).message}`);
  }
}

/**
 * A batch in the order a device needs it: certificates created or changed first, then pools and
 * frontends (`core`), then certificates deleted; one result per change, in the batch's order.
 */
export async function applyAround(
  changes: Change[],
  cert: (c: CertChange) => Promise<ApplyResult>,
  core: (changes: CoreChange[]) => Promise<ApplyResult[]>,
): Promise<ApplyResult[]> {
  const done = new Map<Change, ApplyResult>();
  const certs = (del: boolean) =>
    changes.filter((c): c is CertChange => c.kind === 'certificate' && (c.op === 'delete') === del);
  for (const c of certs(false)) done.set(c, await cert(c));
  const rest = changes.filter((c): c is CoreChange => c.kind !== 'certificate');
  if (rest.length > 0) for (const r of await core(rest)) done.set(r.change, r);
  for (const c of certs(true)) done.set(c, await cert(c));
  return changes.map((c) => done.get(c)!);
}

/**
 * A frontend as far as a reload is concerned: one terminating TLS with its default certificate
 * only, where the others change at runtime; one asking client certificates for some hosts keeps
 * them all (its crt-list's lines name hosts, so any change of them reloads).
 */
export function withoutExtraCertificates(v: VirtualService): VirtualService {
  const certs = crtListOf(v);
  if (v.kind === 'l7' && v.hostClientValidation) return v;
  return certs ? { ...v, certificates: certs.slice(0, 1) } : v;
}

/**
 * The certificates HTTPS frontends gained or lost past their default, at runtime: a gained one is
 * loaded (`new ssl cert`, `set ssl cert`, `commit ssl cert`, unless HAProxy already holds it) and
 * added to the frontend's crt-list (`add ssl crt-list`); a lost one is taken out of it (`del ssl
 * crt-list`) and dropped when nothing else uses it. The crt-list files are rewritten with the
 * configuration. Throws with HAProxy's answer when a command fails.
 */
export async function changeCrtLists(
  store: CertStore,
  adminSocket: string,
  before: ReadonlyMap<string, VirtualService>,
  after: ReadonlyMap<string, VirtualService>,
): Promise<void> {
  const certsOf = (v: VirtualService | undefined) => crtListOf(v) ?? [];
  const held = new Map(store.read().map((c) => [c.name, c]));
  const loaded = new Set([...before.values()].flatMap(certsOf));
  const cli = async (line: string, ok: RegExp) => {
    const out = await socketCommand(adminSocket, line);
    if (!ok.test(out)) throw new AdapterError('Failed', `${line.split('\n')[0]}: ${firstLine(out)}`);
  };
  for (const [name, v] of after) {
    const was = certsOf(before.get(name));
    if (was.length === 0) continue;
    const now = certsOf(v);
    const list = store.crtList(name);
    for (const c of now.filter((n) => !was.includes(n))) {
      const cert = store.read().find((x) => x.name === c);
      if (!cert || !held.has(c))
        throw new AdapterError('DependencyFailed', `certificate ${c} is not written`);
      const file = store.pemFile(c);
      if (!loaded.has(c)) {
        await cli(`new ssl cert ${file}`, /New empty certificate store/i);
        await cli(`set ssl cert ${file} <<\n${fileText(cert)}`, /Transaction (created|updated)/i);
        await cli(`commit ssl cert ${file}`, /Success/i);
        loaded.add(c);
      }
      await cli(`add ssl crt-list ${list} ${file}`, /Success|Inserting/i);
    }
    for (const c of was.filter((n) => !now.includes(n))) {
      await cli(`del ssl crt-list ${list} ${store.pemFile(c)}`, /deleted|removed|Success/i);
    }
  }
}
