/**
 * The health checks of the memory adapter and the simulated devices: a TCP connect
 * to each member, as a device's TCP monitor does. Only loopback members are probed (tests put their backends
 * there); any other address is reported `unknown`, so a simulator never sends a packet off the
 * machine. Probes run when a state is read and are older than the interval, never on a timer of
 * their own, so a simulator holds no handle open.
 */
import { isIP, Socket } from 'node:net';
import { lagTolerantTimeout } from './lag-tolerant-timeout.ts';

export interface ProbeResult {
  health: 'up' | 'down' | 'unknown';
  reason: string;
  at: number;
}

export function isLoopback(address: string): boolean {
  if (isIP(address) === 4) return address.startsWith('127.');
  return address === '::1';
}

function connect(address: string, port: number, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = new Socket();
    let settled = false;
    const done = (reason: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(reason);
    };
    // A busy process reads a connection that came in time before it calls the member down.
    const timer = lagTolerantTimeout(() => done('timeout'), timeoutMs);
    s.once('connect', () => done(undefined));
    s.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    s.connect({ host: address, port });
  });
}

export class MemberProber {
  private readonly results = new Map<string, ProbeResult>();
  private readonly inflight = new Map<string, Promise<ProbeResult>>();

  constructor(private readonly opts: { intervalMs?: number; timeoutMs?: number; now?: () => number } = {}) {}

  private probe(address: string, port: number): Promise<ProbeResult> {
    const key = `${address}|${port}`;
    const now = this.opts.now ?? Date.now;
    const last = this.results.get(key);
    if (last && now() - last.at < (this.opts.intervalMs ?? 1000)) return Promise.resolve(last);
    if (!isLoopback(address)) {
      const r: ProbeResult = { health: 'unknown', reason: 'not probed: not a loopback address', at: now() };
      this.results.set(key, r);
      return Promise.resolve(r);
    }
    const running = this.inflight.get(key);
    if (running) return running;
    const p = connect(address, port, this.opts.timeoutMs ?? 500).then((err) => {
      const r: ProbeResult = err
        ? { health: 'down', reason: err, at: now() }
        : { health: 'up', reason: 'connected', at: now() };
      this.results.set(key, r);
      this.inflight.delete(key);
      return r;
    });
    this.inflight.set(key, p);
    return p;
  }

  /** The state of each target, probing those not probed within the interval (32 at a time). */
  async states(targets: { address: string; port: number }[]): Promise<ProbeResult[]> {
    const out: ProbeResult[] = new Array(targets.length);
    let next = 0;
    const worker = async () => {
      while (next < targets.length) {
        const i = next++;
        out[i] = await this.probe(targets[i]!.address, targets[i]!.port);
      }
    };
    await Promise.all(Array.from({ length: Math.min(32, targets.length) }, worker));
    return out;
  }
}
