/**
 * The strict in-memory adapter: the reference implementation of the adapter contract, and the
 * load balancer of dry runs and tests. Optional latency and fault injection stand in for a slow or
 * failing device.
 */
import { capabilityProblem } from '../../src/adapter/preflight.ts';
import { AVI_PARAMETERS } from '../avi/parameters.ts';
import type {
  ApplyError,
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../src/adapter/contract.ts';
import type { Change, Observed } from '../../src/adapter/changes.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';
import { DeviceError, MemoryLoadBalancer } from './device.ts';

export interface MemoryAdapterOptions {
  owner: string;
  device?: MemoryLoadBalancer;
  /** Simulated time per apply call (one batch), for benchmarks. */
  latencyMs?: number;
  /** Apply calls the simulated device takes at once (default 8). */
  applyConcurrency?: number;
  /** Returns an error to fail one change with, for tests of partial failure. */
  fault?: (change: Change) => ApplyError | undefined;
  /** Says why the device does not answer (its probe and reads fail), for tests of outages. */
  unreachable?: () => string | undefined;
}

export class MemoryAdapter implements LoadBalancerAdapter {
  readonly name = 'memory';
  readonly owner: string;
  readonly device: MemoryLoadBalancer;

  constructor(private readonly opts: MemoryAdapterOptions) {
    this.owner = opts.owner;
    this.device = opts.device ?? new MemoryLoadBalancer();
  }

  capabilities(): Capabilities {
    return {
      l4: { tcp: true, udp: true },
      l7: true,
      memberNodeTag: true,
      drainingMembers: true,
      applyConcurrency: this.opts.applyConcurrency ?? 8,
      certificates: true,
      tlsPassthrough: true,
      // It keeps the model as given, HTTP/2 included (no traffic to speak of).
      http: { ...ALL_HTTP, http2: true, sourceRanges: true, cors: true },
      httpChecks: true,
      httpsChecks: true,
      checkHeaders: true,
      checkMethods: true,
      // It keeps a placement as given (Avi's section, read by Avi's schema: class placement is
      // tested without a device), as it keeps the rest.
      parameters: { ...AVI_PARAMETERS, applies: ['serviceEngineGroup'] },
      checkStatuses: 'any',
      algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash', 'HeaderHash', 'CookieHash'],
      persistence: ['Cookie', 'SourceIP'],
      maxConnections: true,
      retries: 'any',
      timeouts: { connect: true, server: true },
      slowStart: { stepSeconds: 1 },
      sourceRanges: true,
      ipv6: true,
    };
  }

  /** Answers unless `unreachable` says the device is down. */
  async probe(): Promise<void> {
    const why = this.opts.unreachable?.();
    if (why) throw new DeviceError('Unavailable', why);
  }

  async observe(): Promise<Observed> {
    await this.probe();
    const observed: Observed = { owned: { pools: [], virtualServices: [], certificates: [] }, foreign: [] };
    for (const { owner, pool } of this.device.pools.values()) {
      if (owner === this.owner) observed.owned.pools.push(structuredClone(pool));
      else observed.foreign.push({ kind: 'pool', name: pool.name, owner });
    }
    for (const { owner, vs } of this.device.virtualServices.values()) {
      if (owner === this.owner) observed.owned.virtualServices.push(structuredClone(vs));
      else observed.foreign.push({ kind: 'virtualService', name: vs.name, owner });
    }
    for (const { owner, cert } of this.device.certificates.values()) {
      if (owner === this.owner) observed.owned.certificates!.push(structuredClone(cert));
      else observed.foreign.push({ kind: 'certificate', name: cert.name, owner });
    }
    return observed;
  }

  private applyOne(c: Change): void {
    const d = this.device;
    if (c.kind === 'pool') {
      if (c.op === 'create') d.createPool(this.owner, c.desired);
      else if (c.op === 'update') d.updatePool(this.owner, c.desired);
      else d.deletePool(this.owner, c.name);
    } else if (c.kind === 'certificate') {
      if (c.op === 'create') d.createCertificate(this.owner, c.desired);
      else if (c.op === 'update') d.updateCertificate(this.owner, c.desired);
      else d.deleteCertificate(this.owner, c.name);
    } else if (c.op === 'create') d.createVirtualService(this.owner, c.desired);
    else if (c.op === 'update') d.updateVirtualService(this.owner, c.desired);
    else d.deleteVirtualService(this.owner, c.name);
  }

  async apply(changes: Change[]): Promise<ApplyResult[]> {
    if (this.opts.latencyMs) await new Promise((r) => setTimeout(r, this.opts.latencyMs));
    const results: ApplyResult[] = [];
    const down = this.opts.unreachable?.();
    for (const change of changes) {
      const fault: ApplyError | undefined = down
        ? { code: 'Unavailable', message: down, terminal: false }
        : this.opts.fault?.(change);
      if (fault) {
        results.push({ change, ok: false, error: fault });
        continue;
      }
      // What it does not apply (a BIG-IP partition): refused, never kept as if served.
      const refused = capabilityProblem(change, this.capabilities(), 'memory');
      if (refused) {
        results.push({ change, ok: false, error: refused });
        continue;
      }
      try {
        this.applyOne(change);
        results.push({ change, ok: true });
      } catch (err) {
        if (!(err instanceof DeviceError)) throw err;
        results.push({
          change,
          ok: false,
          error: { code: err.code, message: err.message, terminal: err.terminal },
        });
      }
    }
    return results;
  }

  /** Health by the device's TCP check (loopback members only; see src/runtime/member-prober.ts). */
  async health(): Promise<MemberHealth[]> {
    const members = [...this.device.pools.values()]
      .filter((p) => p.owner === this.owner)
      .flatMap(({ pool }) => pool.members.map((m) => ({ pool: pool.name, m })));
    const probed = await this.device.prober.states(members.map(({ m }) => m));
    return members.map(({ pool, m }, i) => ({
      pool,
      address: m.address,
      port: m.port,
      admin: m.enabled ? 'enabled' : 'draining',
      health: probed[i]!.health,
      reason: probed[i]!.reason,
    }));
  }

  async close(): Promise<void> {}
}
