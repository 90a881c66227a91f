/**
 * The node ports in use, per protocol and IP family: next-fit allocation over the configured range,
 * each port held by a reservation for the mapping's lifetime.
 */
import type { IpFamily, NplProtocol } from '../kube/annotations.ts';
import type { PortReserver, Reservation } from './port-reservation.ts';
import { type Target, targetKey } from './selection.ts';

export interface PortRange {
  start: number;
  end: number;
}

export interface Mapping {
  podKey: string;
  podPort: number;
  protocol: NplProtocol;
  family: IpFamily;
  podIP: string;
  nodePort: number;
  /** A hostPort mapping: published, but no reservation and no rule of ours. */
  hostPort: boolean;
  reservation: Reservation | undefined;
}

const slot = (protocol: string, family: string, port: number): string => `${protocol}/${family}/${port}`;

export class PortTable {
  private readonly byPod = new Map<string, Map<string, Mapping>>();
  private readonly used = new Map<string, Mapping>();
  private readonly cursors = new Map<string, number>();

  constructor(
    readonly range: PortRange,
    private readonly reserver: PortReserver,
    /** Where to bind a family's reservations (the node IP, or the wildcard address). */
    private readonly bindAddress: (family: IpFamily) => string | undefined,
  ) {}

  get size(): number {
    return this.range.end - this.range.start + 1;
  }

  forPod(podKey: string): Mapping[] {
    return [...(this.byPod.get(podKey)?.values() ?? [])];
  }

  pods(): string[] {
    return [...this.byPod.keys()];
  }

  all(): Mapping[] {
    return [...this.byPod.values()].flatMap((m) => [...m.values()]);
  }

  inRange(port: number): boolean {
    return port >= this.range.start && port <= this.range.end;
  }

  isUsed(protocol: NplProtocol, family: IpFamily, port: number): boolean {
    return this.used.has(slot(protocol, family, port));
  }

  /** Ports allocated (with a rule) per protocol and family. */
  counts(): { protocol: NplProtocol; family: IpFamily; allocated: number; free: number }[] {
    const out = [];
    for (const protocol of ['tcp', 'udp'] as const) {
      for (const family of ['IPv4', 'IPv6'] as const) {
        let allocated = 0;
        for (const m of this.used.values()) if (m.protocol === protocol && m.family === family) allocated++;
        out.push({ protocol, family, allocated, free: this.size - allocated });
      }
    }
    return out;
  }

  private put(m: Mapping): Mapping {
    let pod = this.byPod.get(m.podKey);
    if (!pod) {
      pod = new Map();
      this.byPod.set(m.podKey, pod);
    }
    pod.set(targetKey(m), m);
    if (!m.hostPort) this.used.set(slot(m.protocol, m.family, m.nodePort), m);
    return m;
  }

  addHostPort(podKey: string, t: Target): Mapping {
    return this.put({ podKey, ...pick(t), nodePort: t.hostPort!, hostPort: true, reservation: undefined });
  }

  /** Takes a specific port back (restart): undefined when out of range, taken, or not bindable. */
  async claim(podKey: string, t: Target, nodePort: number): Promise<Mapping | undefined> {
    if (!this.inRange(nodePort) || this.isUsed(t.protocol, t.family, nodePort)) return undefined;
    const address = this.bindAddress(t.family);
    if (!address) return undefined;
    const reservation = await this.reserver.reserve(address, nodePort, t.protocol);
    if (!reservation) return undefined;
    if (this.isUsed(t.protocol, t.family, nodePort)) {
      await reservation.release();
      return undefined;
    }
    return this.put({ podKey, ...pick(t), nodePort, hostPort: false, reservation });
  }

  /** Next-fit: the first free, bindable port after the last one given out; undefined when none is left. */
  async allocate(podKey: string, t: Target): Promise<Mapping | undefined> {
    const address = this.bindAddress(t.family);
    if (!address) return undefined;
    const cursorKey = `${t.protocol}/${t.family}`;
    const start = this.cursors.get(cursorKey) ?? this.range.start;
    for (let i = 0; i < this.size; i++) {
      const port = this.range.start + ((start - this.range.start + i) % this.size);
      if (this.isUsed(t.protocol, t.family, port)) continue;
      const reservation = await this.reserver.reserve(address, port, t.protocol);
      if (!reservation) continue;
      if (this.isUsed(t.protocol, t.family, port)) {
        await reservation.release();
        continue;
      }
      this.cursors.set(cursorKey, port === this.range.end ? this.range.start : port + 1);
      return this.put({ podKey, ...pick(t), nodePort: port, hostPort: false, reservation });
    }
    return undefined;
  }

  /** Points an existing mapping at a new Pod IP, keeping its node port. */
  repoint(m: Mapping, podIP: string): Mapping {
    const next = { ...m, podIP };
    return this.put(next);
  }

  async release(m: Mapping): Promise<void> {
    const pod = this.byPod.get(m.podKey);
    pod?.delete(targetKey(m));
    if (pod && pod.size === 0) this.byPod.delete(m.podKey);
    if (!m.hostPort) {
      const k = slot(m.protocol, m.family, m.nodePort);
      if (this.used.get(k) === m || this.used.get(k)?.podKey === m.podKey) this.used.delete(k);
    }
    await m.reservation?.release();
  }

  async releaseAll(): Promise<void> {
    for (const m of this.all()) await m.reservation?.release();
    this.byPod.clear();
    this.used.clear();
  }
}

function pick(t: Target): Pick<Mapping, 'podPort' | 'protocol' | 'family' | 'podIP'> {
  return { podPort: t.podPort, protocol: t.protocol, family: t.family, podIP: t.podIP };
}
