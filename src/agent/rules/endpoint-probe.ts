/**
 * Truthful member health for the userspace forwarder. The kernel completes a TCP handshake on the
 * node port before the forwarder knows whether the Pod answers, so a load balancer's TCP check of
 * a member whose Pod is unreachable would say UP. The prober connects to each Pod endpoint every
 * `intervalMs`; after `fall` failures in a row the node port stops accepting (its listening socket
 * closes: the LB's check is refused), after `rise` successes it accepts again. A forwarded
 * connection that cannot reach its Pod asks for a probe at once. Timers are unref'd, probes never
 * overlap per endpoint, and stop() ends them all.
 */
import { Socket } from 'node:net';
import { lagTolerantTimeout } from '../../runtime/lag-tolerant-timeout.ts';

export interface ProbeOptions {
  intervalMs?: number;
  timeoutMs?: number;
  /** Failed probes in a row before the node port stops accepting (default 2). */
  fall?: number;
  /** Successful probes in a row before it accepts again (default 1). */
  rise?: number;
  /** How a probe connects (tests inject one); true when the endpoint accepted. */
  connect?: (host: string, port: number, timeoutMs: number) => Promise<boolean>;
  /** Told whenever an endpoint turns unreachable or reachable again. */
  onChange?: (endpoint: ProbedEndpoint, reachable: boolean) => void;
}

export interface ProbedEndpoint {
  podIP: string;
  podPort: number;
  /** Stops / resumes accepting on the node port. */
  pause: () => Promise<void>;
  resume: () => Promise<boolean>;
}

interface Watched {
  ep: ProbedEndpoint;
  fails: number;
  oks: number;
  reachable: boolean;
  busy: boolean;
  timer: NodeJS.Timeout;
}

export function tcpConnect(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      s.destroy();
      resolve(ok);
    };
    // A busy process reads a connection that came in time before it calls the probe failed.
    const timer = lagTolerantTimeout(() => done(false), timeoutMs);
    s.once('error', () => done(false));
    s.connect({ host, port }, () => done(true));
  });
}

export class EndpointProber {
  private readonly watched = new Map<string, Watched>();
  private readonly o: Required<Omit<ProbeOptions, 'onChange'>> & Pick<ProbeOptions, 'onChange'>;

  constructor(opts: ProbeOptions = {}) {
    this.o = {
      intervalMs: opts.intervalMs ?? 1000,
      timeoutMs: opts.timeoutMs ?? 1000,
      fall: opts.fall ?? 2,
      rise: opts.rise ?? 1,
      connect: opts.connect ?? tcpConnect,
      onChange: opts.onChange,
    };
  }

  watch(key: string, ep: ProbedEndpoint): void {
    void this.unwatch(key);
    const timer = setInterval(() => void this.probe(key), this.o.intervalMs);
    timer.unref();
    this.watched.set(key, { ep, fails: 0, oks: 0, reachable: true, busy: false, timer });
  }

  /** Stops probing `key`; a node port left paused accepts again (it is no longer ours to judge). */
  async unwatch(key: string): Promise<void> {
    const w = this.watched.get(key);
    if (!w) return;
    clearInterval(w.timer);
    this.watched.delete(key);
    if (!w.reachable) await w.ep.resume();
  }

  /** Whether `key`'s endpoint is taken as reachable (true when not watched). */
  reachable(key: string): boolean {
    return this.watched.get(key)?.reachable ?? true;
  }

  /** Probes `key` now (a forwarded connection could not reach its Pod). */
  kick(key: string): void {
    void this.probe(key);
  }

  async probe(key: string): Promise<void> {
    const w = this.watched.get(key);
    if (!w || w.busy) return;
    w.busy = true;
    try {
      const ok = await this.o.connect(w.ep.podIP, w.ep.podPort, this.o.timeoutMs);
      if (this.watched.get(key) !== w) return;
      if (ok) {
        w.fails = 0;
        w.oks++;
        if (!w.reachable && w.oks >= this.o.rise && (await w.ep.resume())) {
          w.reachable = true;
          this.o.onChange?.(w.ep, true);
        }
      } else {
        w.oks = 0;
        w.fails++;
        if (w.reachable && w.fails >= this.o.fall) {
          w.reachable = false;
          await w.ep.pause();
          this.o.onChange?.(w.ep, false);
        }
      }
    } finally {
      w.busy = false;
    }
  }

  async stop(): Promise<void> {
    for (const key of [...this.watched.keys()]) await this.unwatch(key);
  }
}
