/**
 * A real HAProxy in master-worker mode: started from a configuration file, driven through its
 * admin (stats) socket for runtime changes and through the master socket for reloads, stopped by
 * the PID it was started with. `check()` runs `haproxy -c` so that a bad file never reaches a
 * reload. Reloads are counted, for tests and benchmarks.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { AdapterError } from '../../src/adapter/errors.ts';

const exec = promisify(execFile);

export class HaproxyError extends AdapterError {
  constructor(
    override readonly code:
      'ConfigInvalid' | 'StartFailed' | 'SocketFailed' | 'ReloadFailed' | 'CommandRefused',
    message: string,
  ) {
    super(code, message);
    this.name = 'HaproxyError';
  }
}

export interface HaproxyPaths {
  bin: string;
  /** Directory for haproxy.cfg, the sockets and the PID file. */
  workDir: string;
}

export const configPath = (p: HaproxyPaths): string => join(p.workDir, 'haproxy.cfg');
export const adminSocket = (p: HaproxyPaths): string => join(p.workDir, 'admin.sock');
export const masterSocket = (p: HaproxyPaths): string => join(p.workDir, 'master.sock');

/** Sends one line of commands (`;`-separated) to a unix socket and returns the whole answer. */
export function socketCommand(path: string, line: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let out = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(
        new HaproxyError('SocketFailed', `${path}: no answer to "${line.slice(0, 80)}" in ${timeoutMs} ms`),
      );
    }, timeoutMs);
    s.setEncoding('utf8');
    s.on('connect', () => s.end(`${line}\n`));
    s.on('data', (d: string) => (out += d));
    s.on('error', (err) => {
      clearTimeout(timer);
      reject(new HaproxyError('SocketFailed', `${path}: ${err.message}`));
    });
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
  });
}

/**
 * A command on the master socket. The master re-executes itself on each reload and its socket is
 * closed for that moment: a refused or missing socket is tried again (every 100 ms, up to
 * `waitMs`); an answer, a timeout after connecting, or the wait spent is final.
 */
export async function masterCommand(path: string, line: string, waitMs = 5000): Promise<string> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await socketCommand(path, line);
    } catch (err) {
      if (Date.now() >= until || !/ECONNREFUSED|ENOENT/.test((err as Error).message)) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export async function checkConfig(bin: string, file: string): Promise<void> {
  try {
    // Not `-q`: it keeps HAProxy's reasons (the ALERT lines) from stderr too.
    await exec(bin, ['-c', '-f', file]);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    // HAProxy's own reasons, without its prefix (`[ALERT]    (pid) : config : `) or the summary.
    const lines = (e.stderr ?? e.message)
      .split('\n')
      .filter((l) => /\[ALERT\]/.test(l) && !/(Error\(s\)|Fatal errors) found in configuration/.test(l))
      .map((l) => l.replace(/^\[ALERT\]\s*\(\d+\)\s*:\s*(config\s*:\s*)?/, ''));
    throw new HaproxyError(
      'ConfigInvalid',
      `haproxy -c: ${(lines.length ? lines : [e.message.split('\n')[0]!]).join(' | ').slice(0, 2000)}`,
    );
  }
}

/** What a supervised HAProxy tells its owner (for Events, metrics and logs). */
export type SupervisionEvent =
  | { type: 'died'; code: number | null; signal: string | null; stderr: string }
  | { type: 'restarted'; pid: number | undefined; afterMs: number }
  | { type: 'restartFailed'; message: string; retryInMs: number };

export interface SupervisionOptions {
  onEvent: (e: SupervisionEvent) => void;
  /** First wait before a restart (doubles per failed try, at most maxBackoffMs). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

export class HaproxyProcess {
  private child: ChildProcess | undefined;
  private stderr = '';
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Reloads done through the master socket since start. */
  reloads = 0;
  /** Restarts after HAProxy died (supervised only). */
  restarts = 0;

  /**
   * `supervise`: when HAProxy dies on its own (a crash, kill -9 of the master, or of the worker,
   * which takes the master with it), it is started again from the current configuration file,
   * with backoff while that fails (a configuration HAProxy refuses is reported, not forced).
   */
  constructor(
    readonly paths: HaproxyPaths,
    private readonly supervise?: SupervisionOptions,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    this.stopping = false;
    await checkConfig(this.paths.bin, configPath(this.paths));
    const child = spawn(
      this.paths.bin,
      ['-W', '-db', '-S', `${masterSocket(this.paths)},mode,600`, '-f', configPath(this.paths)],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child = child;
    // HAProxy outlives a Node process that exits without stop() (process.exit, a crash) and would
    // keep its ports: SO_REUSEPORT lets the next HAProxy share them. Stop it on the way out.
    const reap = () => void child.kill('SIGTERM');
    process.once('exit', reap);
    child.once('exit', (code, signal) => {
      process.removeListener('exit', reap);
      if (this.supervise && !this.stopping && this.child === child) this.died(code, signal);
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-8000);
    });
    const until = Date.now() + 10_000;
    while (Date.now() < until) {
      if (child.exitCode !== null) {
        throw new HaproxyError(
          'StartFailed',
          `haproxy exited with ${child.exitCode}: ${this.stderr.trim().slice(-1000)}`,
        );
      }
      if (existsSync(adminSocket(this.paths))) {
        const info = await this.runtime('show info').catch(() => '');
        if (info.includes('Pid:')) return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new HaproxyError(
      'StartFailed',
      `haproxy did not answer on ${adminSocket(this.paths)}: ${this.stderr.slice(-1000)}`,
    );
  }

  /** Runtime commands on the admin socket (several per line, `;`-separated). */
  runtime(line: string): Promise<string> {
    return socketCommand(adminSocket(this.paths), line);
  }

  private async workerPid(): Promise<string | undefined> {
    const info = await this.runtime('show info').catch(() => '');
    return /^Pid: (\d+)/m.exec(info)?.[1];
  }

  /**
   * Reloads the configuration file through the master socket; resolves once the new worker
   * answers. `checked`: the caller has just checked this very file (it is not checked twice).
   */
  async reload(o: { checked?: boolean } = {}): Promise<void> {
    if (!o.checked) await checkConfig(this.paths.bin, configPath(this.paths));
    const before = await this.workerPid();
    await masterCommand(masterSocket(this.paths), 'reload');
    this.reloads++;
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      const now = await this.workerPid();
      if (now !== undefined && now !== before) return;
      if (this.child?.exitCode !== null && this.child?.exitCode !== undefined) {
        throw new HaproxyError('ReloadFailed', `haproxy exited during a reload: ${this.stderr.slice(-1000)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new HaproxyError(
      'ReloadFailed',
      `no new worker answered after a reload: ${this.stderr.slice(-1000)}`,
    );
  }

  private died(code: number | null, signal: string | null): void {
    const s = this.supervise!;
    s.onEvent({ type: 'died', code, signal, stderr: this.stderr.trim().slice(-500) });
    const since = Date.now();
    const attempt = (wait: number) => {
      this.restartTimer = setTimeout(() => {
        if (this.stopping) return;
        this.start().then(
          () => {
            this.restarts++;
            s.onEvent({ type: 'restarted', pid: this.pid, afterMs: Date.now() - since });
          },
          (err: Error) => {
            const next = Math.min(wait * 2, s.maxBackoffMs ?? 10_000);
            s.onEvent({ type: 'restartFailed', message: err.message, retryInMs: next });
            attempt(next);
          },
        );
      }, wait);
      this.restartTimer.unref();
    };
    attempt(s.backoffMs ?? 200);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
