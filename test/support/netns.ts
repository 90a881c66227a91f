/**
 * Network namespaces for tests that need real iptables: created with unique names, every one
 * deleted when the test ends (which removes its veths), processes in them killed.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';

/** Why these tests cannot run here, or undefined when they can. */
export function netnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'needs root for network namespaces and iptables';
  for (const tool of ['ip', 'iptables', 'iptables-restore']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0)
      return `needs ${tool} (Debian iproute2/iptables)`;
  }
  const probe = `npl-probe-${randomBytes(3).toString('hex')}`;
  const r = spawnSync('ip', ['netns', 'add', probe]);
  if (r.status !== 0) return `cannot create network namespaces: ${r.stderr.toString().trim()}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return undefined;
}

export class Netns {
  readonly names: string[] = [];
  private readonly procs: ChildProcess[] = [];
  private readonly tag = randomBytes(2).toString('hex');

  constructor(t: Pick<TestContext, 'after'>) {
    t.after(() => this.cleanup());
  }

  add(role: string): string {
    const name = `npl-${role}-${this.tag}`;
    execFileSync('ip', ['netns', 'add', name]);
    this.names.push(name);
    this.exec(name, 'ip', 'link', 'set', 'lo', 'up');
    return name;
  }

  exec(ns: string, ...cmd: string[]): string {
    return execFileSync('ip', ['netns', 'exec', ns, ...cmd], { encoding: 'utf8' });
  }

  tryExec(ns: string, ...cmd: string[]): { code: number; out: string } {
    const r = spawnSync('ip', ['netns', 'exec', ns, ...cmd], { encoding: 'utf8' });
    return { code: r.status ?? 1, out: `${r.stdout}${r.stderr}` };
  }

  /**
   * A veth pair between two namespaces with an address on each end (a /24), and an IPv6 one on
   * each (a /64, without duplicate address detection, so it is usable at once) when given.
   */
  link(a: string, aAddr: string, b: string, bAddr: string, v6?: [string, string]): void {
    const ia = `v${this.tag}${this.names.indexOf(a)}${this.names.indexOf(b)}a`;
    const ib = `v${this.tag}${this.names.indexOf(a)}${this.names.indexOf(b)}b`;
    execFileSync('ip', ['link', 'add', ia, 'netns', a, 'type', 'veth', 'peer', 'name', ib, 'netns', b]);
    this.exec(a, 'ip', 'addr', 'add', `${aAddr}/24`, 'dev', ia);
    this.exec(b, 'ip', 'addr', 'add', `${bAddr}/24`, 'dev', ib);
    if (v6) {
      this.exec(a, 'ip', '-6', 'addr', 'add', `${v6[0]}/64`, 'dev', ia, 'nodad');
      this.exec(b, 'ip', '-6', 'addr', 'add', `${v6[1]}/64`, 'dev', ib, 'nodad');
    }
    this.exec(a, 'ip', 'link', 'set', ia, 'up');
    this.exec(b, 'ip', 'link', 'set', ib, 'up');
  }

  /** Starts a process inside a namespace; killed at cleanup. */
  spawn(ns: string, cmd: string, args: string[]): ChildProcess {
    const p = spawn('ip', ['netns', 'exec', ns, cmd, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.procs.push(p);
    return p;
  }

  cleanup(): void {
    for (const p of this.procs) if (p.exitCode === null) p.kill('SIGKILL');
    for (const n of this.names.reverse()) spawnSync('ip', ['netns', 'del', n]);
    this.names.length = 0;
  }
}
