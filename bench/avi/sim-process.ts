/**
 * Starts the Avi Controller simulator as a process of its own (bench/avi/sim-child.ts) and drives
 * it over IPC: the benchmarks' device, so that the simulator's work runs beside the controller, as
 * a real controller's does, not inside its event loop. Write times come back on this process's
 * performance.now() clock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

type Json = Record<string, unknown>;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export type SimRequest = { id: number } & (
  | { op: 'start' }
  | { op: 'latency'; ms: number }
  | { op: 'stats' }
  | { op: 'writeLog'; from: number }
  | { op: 'count'; type: string; field?: string; equals?: unknown }
  | { op: 'get'; type: string; name: string }
  | { op: 'close' }
);
type Op = SimRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

export interface SimWrite {
  method: string;
  type: string;
  name: string;
  /** performance.now() of this process when the write was answered. */
  at: number;
}

export class AviSimulatorProcess {
  private readonly child: ChildProcess;
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly stop = () => void (this.child.exitCode === null && this.child.kill('SIGTERM'));
  url = '';

  constructor() {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'bench/avi/sim-child.ts'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const w = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      if (m.error !== undefined) w?.reject(new Error(`Avi simulator: ${m.error}`));
      else w?.resolve(m.result);
    });
    this.child.once('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`Avi simulator exited (${code})`));
      this.waiting.clear();
      process.off('exit', this.stop);
    });
    // A benchmark that fails before its own clean-up must not leave the simulator running.
    process.once('exit', this.stop);
  }

  private ask<T>(op: Op): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, ...op });
    });
  }

  async start(): Promise<string> {
    this.url = await this.ask<string>({ op: 'start' });
    return this.url;
  }

  setLatency(ms: number): Promise<void> {
    return this.ask({ op: 'latency', ms });
  }

  stats(): Promise<{ calls: number; writes: number; maxInflight: number }> {
    return this.ask({ op: 'stats' });
  }

  /** The writes answered since the `from`-th, with their times on this process's clock. */
  async writeLog(from = 0): Promise<SimWrite[]> {
    const r = await this.ask<{ timeOrigin: number; log: SimWrite[] }>({ op: 'writeLog', from });
    const shift = r.timeOrigin - performance.timeOrigin;
    return r.log.map((w) => ({ ...w, at: w.at + shift }));
  }

  /** How many objects of a type there are (those with `field` equal to `equals`, if given). */
  count(type: string, field?: string, equals?: unknown): Promise<number> {
    return this.ask({ op: 'count', type, ...(field === undefined ? {} : { field, equals }) });
  }

  get(type: string, name: string): Promise<Json | null> {
    return this.ask({ op: 'get', type, name });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    await this.ask({ op: 'close' }).catch(() => undefined);
    await exited;
  }
}
