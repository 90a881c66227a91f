/**
 * A keyed work queue after client-go's workqueue: event handlers add keys; a key queued twice runs
 * once; a key is never processed by two workers at once (a key added while it runs runs again
 * after); a failed key is retried with per-key exponential backoff, a success forgets it.
 */
import PQueue from 'p-queue';
import { Backoff, type BackoffOptions } from './backoff.ts';
import { errorMessage } from './errors.ts';
import { type Logger, silentLogger } from './logger.ts';

export type Reconcile = (key: string) => Promise<void>;

export interface WorkQueueOptions {
  name: string;
  reconcile: Reconcile;
  concurrency?: number;
  backoff?: BackoffOptions;
  logger?: Logger;
  /** Called with each failure, for metrics. */
  onError?: (key: string, err: unknown) => void;
}

export class WorkQueue {
  private readonly queuedKeys = new Set<string>();
  private readonly runningKeys = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly backoffs = new Map<string, Backoff>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly pq: PQueue;
  private readonly log: Logger;
  private started = false;
  private stopped = false;

  constructor(private readonly opts: WorkQueueOptions) {
    this.pq = new PQueue({ concurrency: opts.concurrency ?? 4, autoStart: false });
    this.log = (opts.logger ?? silentLogger()).child({ queue: opts.name });
  }

  add(key: string): void {
    if (this.stopped) return;
    if (this.runningKeys.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queuedKeys.has(key)) return;
    this.queuedKeys.add(key);
    void this.pq.add(() => this.process(key));
  }

  /** Adds the key after `ms`, unless it is added sooner. */
  addAfter(key: string, ms: number): void {
    if (this.stopped || this.timers.has(key)) return;
    const t = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    t.unref();
    this.timers.set(key, t);
  }

  /** Whether the key is queued to run (not waiting for a delay, not running). */
  queued(key: string): boolean {
    return this.queuedKeys.has(key);
  }

  /** Whether the key is being processed now. */
  running(key: string): boolean {
    return this.runningKeys.has(key);
  }

  get length(): number {
    return this.queuedKeys.size;
  }

  /** Failures in a row for a key (0 once it succeeds). */
  failures(key: string): number {
    return this.backoffs.get(key)?.failures ?? 0;
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.pq.start();
  }

  /** Resolves when nothing is queued or running. */
  async idle(): Promise<void> {
    while (this.pq.size > 0 || this.pq.pending > 0) await this.pq.onIdle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    this.pq.clear();
    this.queuedKeys.clear();
    await this.pq.onIdle();
  }

  private async process(key: string): Promise<void> {
    this.queuedKeys.delete(key);
    if (this.stopped) return;
    this.runningKeys.add(key);
    try {
      await this.opts.reconcile(key);
      this.backoffs.delete(key);
    } catch (err) {
      this.opts.onError?.(key, err);
      let b = this.backoffs.get(key);
      if (!b) {
        b = new Backoff({ initialMs: 100, maxMs: 60_000, ...this.opts.backoff });
        this.backoffs.set(key, b);
      }
      const wait = b.next();
      this.log.warn({ key, err: errorMessage(err), retryInMs: wait }, 'reconcile failed; retrying');
      this.addAfter(key, wait);
    } finally {
      this.runningKeys.delete(key);
      if (this.dirty.delete(key)) this.add(key);
    }
  }
}
