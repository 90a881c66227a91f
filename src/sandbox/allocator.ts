/**
 * Cluster IPs and node ports for Services, as the API server's allocators: a configurable node
 * port range (`--service-node-port-range`, default 30000-32767) and the cluster IP range
 * 10.96.0.0/12. What is in use is kept up to date from the store's changes, so an allocation costs
 * about the same at 50,000 Services as at 5 (a cursor walks the range; a full range is known at
 * once). Exhaustion is the real API server's 422.
 */
import type { StatusCause } from './status.ts';
import type { Store, StoreEvent } from './store.ts';

export interface PortRange {
  start: number;
  end: number;
}

export const DEFAULT_NODE_PORT_RANGE: PortRange = { start: 30000, end: 32767 };

/** Parses `START-END` as kube-apiserver's --service-node-port-range. */
export function parsePortRange(text: string): PortRange | undefined {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  return start >= 1 && end <= 65535 && start <= end ? { start, end } : undefined;
}

/** A range of integers handed out from a cursor; used values are counted, not scanned. */
class RangeAllocator {
  private readonly used = new Map<number, number>();
  private cursor = 0;

  constructor(
    readonly first: number,
    readonly size: number,
    private readonly skip: (i: number) => boolean = () => false,
  ) {}

  take(v: number): void {
    this.used.set(v, (this.used.get(v) ?? 0) + 1);
  }

  release(v: number): void {
    const n = this.used.get(v) ?? 0;
    if (n <= 1) this.used.delete(v);
    else this.used.set(v, n - 1);
  }

  has(v: number): boolean {
    return this.used.has(v);
  }

  /** A free value, or undefined when the range is full. */
  next(): number | undefined {
    if (this.used.size >= this.size) return undefined;
    for (let n = 0; n < this.size; n++) {
      const i = (this.cursor + n) % this.size;
      const v = this.first + i;
      if (this.skip(i) || this.used.has(v)) continue;
      this.cursor = (i + 1) % this.size;
      return v;
    }
    return undefined;
  }
}

/** 10.96.0.0/12 as indexes: .0 and .255 of each /24 are not handed out. */
const CLUSTER_IP_SIZE = 1 << 20;
const ipOf = (i: number): string => `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const indexOf = (ip: string): number | undefined => {
  const m = /^10\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (!m) return undefined;
  const a = Number(m[1]) - 96;
  if (a < 0 || a > 15) return undefined;
  return (a << 16) | (Number(m[2]) << 8) | Number(m[3]);
};

export interface Allocations {
  /** A free cluster IP; the caller's object takes it once stored. */
  clusterIP(): string | { cause: StatusCause };
  /** A free node port not in `alsoTaken` (ports this same object takes), or the cause for a 422. */
  nodePort(alsoTaken: Set<number>, field: string): number | { cause: StatusCause };
  /** Whether a node port asked for explicitly is in range and held by no Service. */
  nodePortFree(p: number): boolean;
  readonly nodePortRange: PortRange;
}

type ServiceSpec = { clusterIP?: unknown; ports?: unknown } | undefined;

const specOf = (ev: StoreEvent['current'] | undefined): ServiceSpec => ev?.obj.spec as ServiceSpec;
const nodePortsOf = (spec: ServiceSpec): number[] =>
  (Array.isArray(spec?.ports) ? spec.ports : [])
    .map((p) => Number((p as { nodePort?: unknown } | null)?.nodePort ?? 0))
    .filter((n) => n > 0);

export class ServiceAllocator implements Allocations {
  private readonly ips = new RangeAllocator(
    0,
    CLUSTER_IP_SIZE,
    (i) => (i & 255) === 0 || (i & 255) === 255 || i < 10,
  );
  private readonly ports: RangeAllocator;

  constructor(
    store: Store,
    storage: string,
    readonly nodePortRange: PortRange = DEFAULT_NODE_PORT_RANGE,
  ) {
    this.ports = new RangeAllocator(nodePortRange.start, nodePortRange.end - nodePortRange.start + 1);
    for (const s of store.list(storage)) this.add(s.obj.spec as ServiceSpec);
    store.subscribe((ev) => {
      if (ev.storage !== storage) return;
      if (ev.previous) this.remove(specOf(ev.previous));
      if (ev.type !== 'DELETED') this.add(specOf(ev.current));
    });
  }

  private add(spec: ServiceSpec): void {
    const i = indexOf(String(spec?.clusterIP ?? ''));
    if (i !== undefined) this.ips.take(i);
    for (const p of nodePortsOf(spec)) if (this.inRange(p)) this.ports.take(p);
  }

  private remove(spec: ServiceSpec): void {
    const i = indexOf(String(spec?.clusterIP ?? ''));
    if (i !== undefined) this.ips.release(i);
    for (const p of nodePortsOf(spec)) if (this.inRange(p)) this.ports.release(p);
  }

  private inRange(p: number): boolean {
    return p >= this.nodePortRange.start && p <= this.nodePortRange.end;
  }

  clusterIP(): string | { cause: StatusCause } {
    const i = this.ips.next();
    if (i === undefined) {
      return {
        cause: {
          reason: 'FieldValueInvalid',
          field: 'spec.clusterIPs',
          message: 'Internal error: failed to allocate a serviceIP: range is full',
        },
      };
    }
    return ipOf(i);
  }

  nodePort(alsoTaken: Set<number>, field: string): number | { cause: StatusCause } {
    // Ports this object already took in this request are not in the store yet.
    for (const p of alsoTaken) this.ports.take(p);
    try {
      const p = this.ports.next();
      if (p !== undefined) return p;
    } finally {
      for (const p of alsoTaken) this.ports.release(p);
    }
    return {
      cause: {
        reason: 'FieldValueInvalid',
        field,
        message: 'Internal error: failed to allocate a nodePort: range is full',
      },
    };
  }

  /** Whether a node port (asked for explicitly) is in range and free. */
  nodePortFree(p: number): boolean {
    return this.inRange(p) && !this.ports.has(p);
  }
}
