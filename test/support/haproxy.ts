/**
 * Whether tests that drive a real HAProxy can run here: the Debian package and root (to bind the
 * documentation VIPs with `transparent`). A one-line reason when they cannot; CI has both.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderConfig } from '../../adapters/haproxy/config.ts';
import {
  adminSocket,
  configPath,
  HaproxyProcess,
  type HaproxyPaths,
  masterSocket,
  type SupervisionOptions,
} from '../../adapters/haproxy/process.ts';
import { HaproxyRuntimeAdapter, type HaproxyRuntimeOptions } from '../../adapters/haproxy/runtime-adapter.ts';

/**
 * Whether the openssl command is missing: the conformance harness reads from `openssl s_client`
 * whether a handshake asked for a client certificate (conformance/harness/client-certs.ts).
 */
export function opensslMissing(): string | false {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'openssl is not installed (apt-get install openssl)';
  }
}

/** Whether the haproxy binary is missing (for `haproxy -c` checks, which need no root). */
export function haproxyBinMissing(): string | false {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'haproxy is not installed (apt-get install haproxy)';
  }
}

export function haproxyMissing(): string | false {
  const bin = haproxyBinMissing();
  if (bin) return bin;
  if (process.getuid?.() !== 0) return 'needs root to bind VIPs that are not on this host';
  return false;
}

/**
 * TCP listeners on `port` at IPv4 addresses starting with `prefix`, from /proc/net/tcp. HAProxy
 * binds with SO_REUSEPORT, so one left running by an interrupted run shares a VIP's port with the
 * next run's HAProxy and silently takes some of its connections: runs check for one first.
 */
export function listenersOn(prefix: string, port: number): string[] {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const [, local, , state] = line.trim().split(/\s+/);
    const m = /^([0-9A-F]{8}):([0-9A-F]{4})$/.exec(local ?? '');
    if (!m || state !== '0A' || parseInt(m[2]!, 16) !== port) continue;
    // The address is the kernel's 32-bit word in host (little-endian) order.
    const ip = [3, 2, 1, 0].map((i) => parseInt(m[1]!.slice(i * 2, i * 2 + 2), 16)).join('.');
    if (ip.startsWith(prefix)) out.push(`${ip}:${port}`);
  }
  return out;
}

/**
 * Fails with a clear message when a process left from an earlier run listens where this run will.
 * A listener still closing (the HAProxy of the file's previous case, stopping) is given 5 s to go:
 * one left by an interrupted run stays, and fails the check.
 */
export function assertNoListeners(prefix: string, ports: number[], graceMs = 5000): void {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + graceMs;
  let found = ports.flatMap((p) => listenersOn(prefix, p));
  while (found.length && Date.now() < until) {
    Atomics.wait(pause, 0, 0, 100);
    found = ports.flatMap((p) => listenersOn(prefix, p));
  }
  if (found.length) {
    throw new Error(
      `${found.join(', ')} already listened on (a HAProxy left by an interrupted run? see \`ss -ltnp\`); it would share the port`,
    );
  }
}

/** A real HAProxy in a temporary directory, started with an empty configuration of ours. */
export interface HaproxyRig {
  paths: HaproxyPaths;
  proc: HaproxyProcess;
  /** An adapter on this HAProxy for an owner (the runtime transport). */
  adapter(owner: string, extra?: Partial<HaproxyRuntimeOptions>): HaproxyRuntimeAdapter;
}

export async function startHaproxy(
  t: { after: (fn: () => Promise<void>) => void },
  supervise?: SupervisionOptions,
  /** The haproxy to run (default `haproxy`; a wrapper that runs it in a network namespace). */
  bin = 'haproxy',
): Promise<HaproxyRig> {
  const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-'));
  const paths = { bin, workDir: dir };
  writeFileSync(configPath(paths), renderConfig([], [], [], { owner: '', adminSocket: adminSocket(paths) }));
  const proc = new HaproxyProcess(paths, supervise);
  t.after(async () => {
    try {
      await proc.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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

/** The CA bundle files (`ca-<hash>.pem`) under a device's folder (its certificates' directory, or the simulator's storage). */
export function caBundleFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile() && /^ca-[0-9a-f]{16}\.pem$/.test(e.name)) out.push(join(e.parentPath, e.name));
  return out;
}
