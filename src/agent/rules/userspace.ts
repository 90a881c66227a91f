/**
 * The userspace forwarder, for nodes without iptables and for the sandbox (node IPs on loopback):
 * the port reservation's own socket accepts the traffic. TCP is piped both ways with half-close,
 * backpressure (pipe) and resets carried across; UDP keeps one upstream socket per client with an
 * idle timeout. Each TCP Pod endpoint is probed (endpoint-probe.ts): while the Pod cannot be
 * reached its node port refuses connections, so a load balancer's TCP check fails as it would
 * with iptables forwarding, instead of a handshake the kernel completes for a dead Pod.
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { Socket, type SocketConstructorOpts } from 'node:net';

/** Node's stream options, which net.Socket takes though its type does not list them. */
const UPSTREAM_OPTIONS: SocketConstructorOpts & {
  readableHighWaterMark: number;
  writableHighWaterMark: number;
} = {
  allowHalfOpen: true,
  readableHighWaterMark: 256 * 1024,
  writableHighWaterMark: 256 * 1024,
};
import type { Mapping } from '../port-table.ts';
import { EndpointProber, type ProbeOptions } from './endpoint-probe.ts';
import type { ForwardingBackend } from './types.ts';

export interface UserspaceOptions {
  udpIdleMs?: number;
  /** Pod endpoint probes of TCP forwards (false: none, a node port always accepts). */
  probe?: ProbeOptions | false;
}

interface UdpSession {
  upstream: UdpSocket;
  timer: NodeJS.Timeout;
}

interface Forward {
  mapping: Mapping;
  connections: Set<Socket>;
  sessions: Map<string, UdpSession>;
}

const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

function pipeTcp(
  client: Socket,
  podIP: string,
  podPort: number,
  live: Set<Socket>,
  unreachable: () => void,
): void {
  // Buffers larger than the 16 KiB default move bulk transfers in fewer, bigger chunks.
  const upstream = new Socket(UPSTREAM_OPTIONS);
  upstream.connect({ host: podIP, port: podPort });
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  live.add(client);
  live.add(upstream);
  const forget = () => {
    live.delete(client);
    live.delete(upstream);
  };
  // A reset on either side resets the other; a clean end is passed on as a half-close by pipe().
  client.on('error', () => upstream.resetAndDestroy());
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    client.resetAndDestroy();
    if (UNREACHABLE.has(err.code ?? '')) unreachable();
  });
  client.on('close', forget);
  upstream.on('close', forget);
  client.pipe(upstream);
  upstream.pipe(client);
}

export class UserspaceBackend implements ForwardingBackend {
  readonly name = 'userspace';
  readonly bindsWildcard = false;
  private readonly forwards = new Map<string, Forward>();
  private readonly udpIdleMs: number;
  private readonly prober: EndpointProber | undefined;

  constructor(opts: UserspaceOptions = {}) {
    this.udpIdleMs = opts.udpIdleMs ?? 60_000;
    this.prober = opts.probe === false ? undefined : new EndpointProber(opts.probe ?? {});
  }

  /** Whether the Pod behind a TCP node port is taken as reachable (its port accepts). */
  reachable(m: Pick<Mapping, 'protocol' | 'family' | 'nodePort'>): boolean {
    return this.prober?.reachable(UserspaceBackend.key(m as Mapping)) ?? true;
  }

  private static key(m: Mapping): string {
    return `${m.protocol}/${m.family}/${m.nodePort}`;
  }

  async start(): Promise<void> {}

  async sync(mappings: Mapping[]): Promise<void> {
    const want = new Set<string>();
    for (const m of mappings) {
      if (m.hostPort || !m.reservation) continue;
      want.add(UserspaceBackend.key(m));
      await this.add(m);
    }
    for (const [k, f] of this.forwards) if (!want.has(k)) await this.remove(f.mapping);
  }

  async add(m: Mapping): Promise<void> {
    const res = m.reservation;
    if (m.hostPort || !res) return;
    const k = UserspaceBackend.key(m);
    const existing = this.forwards.get(k);
    if (existing && existing.mapping.podIP === m.podIP && existing.mapping.podPort === m.podPort) {
      existing.mapping = m;
      return;
    }
    if (existing) await this.remove(existing.mapping);
    const f: Forward = { mapping: m, connections: new Set(), sessions: new Map() };
    this.forwards.set(k, f);
    if (m.protocol === 'tcp') {
      const kick = () => this.prober?.kick(k);
      res.onConnection = (client) => pipeTcp(client, f.mapping.podIP, f.mapping.podPort, f.connections, kick);
      if (this.prober && res.pause && res.resume) {
        this.prober.watch(k, {
          podIP: m.podIP,
          podPort: m.podPort,
          pause: res.pause.bind(res),
          resume: res.resume.bind(res),
        });
      }
    } else {
      res.onDatagram = (msg, from) => this.datagram(f, msg, from);
    }
  }

  private datagram(f: Forward, msg: Buffer, from: RemoteInfo): void {
    const id = `${from.address}|${from.port}`;
    let s = f.sessions.get(id);
    if (!s) {
      const upstream = createSocket(f.mapping.family === 'IPv6' ? 'udp6' : 'udp4');
      upstream.on('message', (reply) => {
        f.mapping.reservation?.sendDatagram(reply, from.port, from.address);
        const cur = f.sessions.get(id);
        if (cur) cur.timer.refresh();
      });
      upstream.on('error', () => this.endSession(f, id));
      const timer = setTimeout(() => this.endSession(f, id), this.udpIdleMs);
      timer.unref();
      s = { upstream, timer };
      f.sessions.set(id, s);
    } else s.timer.refresh();
    s.upstream.send(msg, f.mapping.podPort, f.mapping.podIP);
  }

  private endSession(f: Forward, id: string): void {
    const s = f.sessions.get(id);
    if (!s) return;
    f.sessions.delete(id);
    clearTimeout(s.timer);
    s.upstream.close();
  }

  /** Open UDP sessions, for tests and metrics. */
  udpSessions(): number {
    let n = 0;
    for (const f of this.forwards.values()) n += f.sessions.size;
    return n;
  }

  async remove(m: Mapping): Promise<void> {
    const k = UserspaceBackend.key(m);
    const f = this.forwards.get(k);
    if (!f) return;
    this.forwards.delete(k);
    await this.prober?.unwatch(k);
    if (f.mapping.reservation) {
      f.mapping.reservation.onConnection = undefined;
      f.mapping.reservation.onDatagram = undefined;
    }
    for (const c of f.connections) c.destroy();
    for (const id of [...f.sessions.keys()]) this.endSession(f, id);
  }

  /** The forwarder lives in this process: stopping the agent stops forwarding, and nothing is left behind. */
  async stop(): Promise<void> {
    for (const f of [...this.forwards.values()]) await this.remove(f.mapping);
  }

  async cleanup(): Promise<void> {
    await this.stop();
  }
}
