/**
 * The CA bundles of pools spoken to over TLS (Pool.backendTls) and of HTTPS virtual services that
 * ask clients for certificates (L7VirtualService.clientValidation) on the runtime transport: one file
 * per bundle in the certificates' directory, named by its content (`ca-<tag>.pem`, config.ts
 * `caFile`), written before the file that names it is checked, and removed once neither the
 * running file nor the next one names it. A bundle changed there by hand reads as its new
 * content, so the pool reads as drifted and its file is written again.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { caTag, TAG_PREFIX } from '../../src/adapter/ca-bundles.ts';
import type { CoreChange } from '../../src/adapter/changes.ts';
import { type Pool, SYSTEM_CA, type VirtualService } from '../../src/model/types.ts';
import { caFile } from './config.ts';
import { CRT_PREFIX, FILE_PREFIX } from './policy-read.ts';

const CA_FILE = /^ca-[0-9a-f]{16}\.pem$/;

/** What a batch's creates and updates ask for: its pools and its virtual services (for bundlesOf). */
export function desiredOf(changes: readonly CoreChange[]): [Pool[], VirtualService[]] {
  const pools: Pool[] = [];
  const vss: VirtualService[] = [];
  for (const c of changes)
    if (c.op !== 'delete') {
      if (c.kind === 'pool') pools.push(c.desired);
      else vss.push(c.desired);
    }
  return [pools, vss];
}

/** The bundles (not the system's) that pools and virtual services name. */
export function bundlesOf(pools: Iterable<Pool>, vss: Iterable<VirtualService> = []): Set<string> {
  const out = new Set<string>();
  for (const p of pools) if (p.backendTls && p.backendTls.ca !== SYSTEM_CA) out.add(p.backendTls.ca);
  for (const v of vss) {
    if (v.kind !== 'l7') continue;
    if (v.clientValidation) out.add(v.clientValidation.ca);
    for (const h of v.hostClientValidation ?? []) out.add(h.ca);
  }
  return out;
}

export class CaFiles {
  constructor(readonly dir: string) {}

  /** Writes each bundle (bundlesOf) whose file is missing or differs. */
  write(bundles: Iterable<string>): void {
    for (const ca of bundles) {
      const file = caFile(ca, this.dir);
      if (existsSync(file) && readFileSync(file, 'utf8') === ca) continue;
      if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      writeFileSync(file, ca, { mode: 0o600 });
    }
  }

  /**
   * A pool's bundle loaded in the running HAProxy, where no server of the file names it yet (a
   * pool that had none at the last reload): `add server ... ca-file` takes only a loaded one.
   * `command` sends one runtime command and throws CommandRefused unless its answer matches.
   */
  async load(
    p: Pool,
    command: (line: string, ok: RegExp) => Promise<void>,
    show: () => Promise<string>,
  ): Promise<void> {
    const ca = p.backendTls?.ca;
    if (!ca || ca === SYSTEM_CA) return;
    const file = caFile(ca, this.dir);
    if ((await show()).split('\n').some((l) => l.split(' - ')[0]?.trim() === file)) return;
    await command(`new ssl ca-file ${file}`, /New CA file created/);
    await command(`set ssl ca-file ${file} <<\n${ca}`, /transaction (created|updated)/i);
    await command(`commit ssl ca-file ${file}`, /Success/);
  }

  /** Removes the bundle files none of these sets (bundlesOf) holds. */
  prune(...keep: ReadonlySet<string>[]): void {
    if (!existsSync(this.dir)) return;
    const used = new Set(keep.flatMap((k) => [...k].map((ca) => `ca-${caTag(ca)}.pem`)));
    for (const f of readdirSync(this.dir))
      if (CA_FILE.test(f) && !used.has(f)) rmSync(join(this.dir, f), { force: true });
  }

  /**
   * A bundle's content from what the file names it by (config-parse.ts CaReader): a file of this
   * directory, our note's tag, or the system's. Nothing outside the directory is read.
   */
  read = (ref: string): string | undefined => {
    if (ref === SYSTEM_CA) return SYSTEM_CA;
    // A server's `crt`: the certificate's name where it is a PEM of the certificate store here.
    if (ref.startsWith(CRT_PREFIX)) {
      const file = ref.slice(CRT_PREFIX.length);
      const name = basename(file, '.pem');
      return dirname(file) === this.dir && file.endsWith('.pem') && !CA_FILE.test(basename(file))
        ? name
        : undefined;
    }
    const file = ref.startsWith(FILE_PREFIX)
      ? ref.slice(FILE_PREFIX.length)
      : ref.startsWith(TAG_PREFIX)
        ? join(this.dir, `ca-${ref.slice(TAG_PREFIX.length)}.pem`)
        : undefined;
    if (!file || dirname(file) !== this.dir || !CA_FILE.test(basename(file))) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
}
