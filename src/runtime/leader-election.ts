/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection: acquire
 * when the Lease is free or expired, renew every retry period, and give up leadership when a renew
 * has not succeeded within the renew deadline. Optimistic concurrency (resourceVersion) settles
 * races; times are MicroTime as the API server requires.
 */
import {
  ApiException,
  CoordinationV1Api,
  type KubeConfig,
  type V1Lease,
  V1MicroTime,
} from '@kubernetes/client-node';
import type { Clock } from './clock.ts';
import { realClock } from './clock.ts';
import { errorMessage } from './errors.ts';
import { type Logger, silentLogger } from './logger.ts';

export interface LeaderElectionOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  clock?: Clock;
  logger?: Logger;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void | Promise<void>;
}

export interface LeadershipStatus {
  role: 'leader' | 'standby';
  /** This replica. */
  identity: string;
  /** The Lease's holder ('' when none). */
  holder: string;
  /** When the holder acquired the Lease (ISO time). */
  since: string | null;
}

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly durationMs: number;
  private readonly deadlineMs: number;
  private readonly retryMs: number;
  private abort = new AbortController();
  private leading = false;
  private lastRenew = 0;
  private loop: Promise<void> | undefined;

  constructor(private readonly opts: LeaderElectionOptions) {
    this.api = opts.kubeConfig.makeApiClient(CoordinationV1Api);
    this.log = (opts.logger ?? silentLogger()).child({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
    });
    this.clock = opts.clock ?? realClock;
    this.durationMs = opts.leaseDurationMs ?? 15_000;
    this.deadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryMs = opts.retryPeriodMs ?? 2_000;
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Who holds the Lease as last read, and since when (ISO time); undefined before the first read. */
  private seen: { holder: string; since: string | undefined } | undefined;
  private running = false;

  /** Whether the election loop runs (a standby is healthy and Ready while it does). */
  get isRunning(): boolean {
    return this.running;
  }

  /** Leader or standby, with the Lease's holder and since when it holds it. */
  get status(): LeadershipStatus {
    return {
      role: this.leading ? 'leader' : 'standby',
      identity: this.opts.identity,
      holder: this.leading ? this.opts.identity : (this.seen?.holder ?? ''),
      since: this.seen?.since ?? null,
    };
  }

  start(): void {
    this.abort = new AbortController();
    this.running = true;
    this.loop = this.run(this.abort.signal).finally(() => {
      this.running = false;
    });
  }

  /** Records who holds the Lease; a standby says so in its log when that changes. */
  private observe(holder: string, acquireTime: unknown): void {
    const since = acquireTime ? new Date(String(acquireTime)).toISOString() : undefined;
    const changed = this.seen?.holder !== holder;
    this.seen = { holder, since };
    if (changed && holder !== this.opts.identity) {
      this.log.info({ holder: holder || '(none)', since }, 'standby; the Lease is held by another replica');
    }
  }

  /** Stops electing; a leader releases the Lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
    if (this.leading) {
      this.leading = false;
      await this.release();
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        this.log.warn({ err: errorMessage(err) }, 'lease update failed');
      }
      const now = this.clock.now();
      if (ok) {
        this.lastRenew = now;
        if (!this.leading) {
          this.leading = true;
          this.log.info({ since: this.seen?.since }, 'became leader');
          await this.opts.onStartedLeading();
        }
      } else if (this.leading && now - this.lastRenew > this.deadlineMs) {
        this.leading = false;
        this.log.warn('lost the lease');
        await this.opts.onStoppedLeading();
        return;
      }
      await this.clock.sleep(this.retryMs, signal);
    }
  }

  private microNow(): V1MicroTime {
    return new V1MicroTime(this.clock.now());
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    let lease: V1Lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!(err instanceof ApiException && err.code === 404)) throw err;
      const now = this.microNow();
      this.observe(identity, new Date(this.clock.now()));
      await this.api.createNamespacedLease({
        namespace,
        body: {
          metadata: { name, namespace },
          spec: {
            holderIdentity: identity,
            leaseDurationSeconds: Math.ceil(this.durationMs / 1000),
            acquireTime: now,
            renewTime: now,
            leaseTransitions: 0,
          },
        },
      });
      return true;
    }
    const spec = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewed = spec.renewTime ? new Date(String(spec.renewTime)).getTime() : 0;
    const expired = holder === '' || renewed + (spec.leaseDurationSeconds ?? 0) * 1000 < this.clock.now();
    if (holder !== identity && !expired) {
      this.observe(holder, spec.acquireTime);
      return false;
    }
    const now = this.microNow();
    lease.spec = {
      ...spec,
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.durationMs / 1000),
      renewTime: now,
      ...(holder !== identity
        ? { acquireTime: now, leaseTransitions: (spec.leaseTransitions ?? 0) + 1 }
        : {}),
    };
    if (spec.acquireTime && holder === identity)
      lease.spec.acquireTime = new V1MicroTime(new Date(String(spec.acquireTime)).getTime());
    try {
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
      this.observe(identity, lease.spec.acquireTime);
      return true;
    } catch (err) {
      if (err instanceof ApiException && err.code === 409) return false;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    try {
      const lease = await this.api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      lease.spec = { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1, renewTime: this.microNow() };
      if (lease.spec.acquireTime)
        lease.spec.acquireTime = new V1MicroTime(new Date(String(lease.spec.acquireTime)).getTime());
      await this.api.replaceNamespacedLease({ name, namespace, body: lease });
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, 'could not release the lease');
    }
  }
}
