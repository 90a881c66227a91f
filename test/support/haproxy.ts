/**
 * Whether tests that drive a real HAProxy can run here: the Debian package and root (to bind the
 * documentation VIPs with `transparent`). A one-line reason when they cannot; CI has both.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderConfig } from '../../adapters/haproxy/config.ts';
import {
  adminSocket,
  configPath,
  HaproxyProcess,
  type HaproxyPaths,
  masterSocket,
} from '../../adapters/haproxy/process.ts';
import { HaproxyRuntimeAdapter, type HaproxyRuntimeOptions } from '../../adapters/haproxy/runtime-adapter.ts';

export function haproxyMissing(): string | false {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
  } catch {
    return 'haproxy is not installed (apt-get install haproxy)';
  }
  if (process.getuid?.() !== 0) return 'needs root to bind VIPs that are not on this host';
  return false;
}

/** A real HAProxy in a temporary directory, started with an empty configuration of ours. */
export interface HaproxyRig {
  paths: HaproxyPaths;
  proc: HaproxyProcess;
  /** An adapter on this HAProxy for an owner (the runtime transport). */
  adapter(owner: string, extra?: Partial<HaproxyRuntimeOptions>): HaproxyRuntimeAdapter;
}

export async function startHaproxy(t: { after: (fn: () => Promise<void>) => void }): Promise<HaproxyRig> {
  const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-'));
  const paths = { bin: 'haproxy', workDir: dir };
  writeFileSync(configPath(paths), renderConfig([], [], [], { owner: '', adminSocket: adminSocket(paths) }));
  const proc = new HaproxyProcess(paths);
  t.after(async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  await proc.start();
  return {
    paths,
    proc,
    adapter: (owner, extra = {}) =>
      new HaproxyRuntimeAdapter({
        owner,
        bin: paths.bin,
        configFile: configPath(paths),
        adminSocket: adminSocket(paths),
        masterSocket: masterSocket(paths),
        ...extra,
      }),
  };
}
