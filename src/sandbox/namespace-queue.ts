/**
 * The work queue of the sandbox's controllers (EndpointSlices, workloads): namespaces to look at,
 * gathered while the store changes and reconciled together on the next turn of the event loop, so
 * a burst of writes costs one pass per namespace. A pass that throws (the namespace went meanwhile,
 * or a write raced another) is tried again after a delay that doubles from 100 ms to 10 s, as a
 * controller's rate-limited work queue requeues an error, and reset by a pass that succeeds: a
 * failed pass is never simply dropped, since nothing else may change in that namespace to wake it.
 */
import type { Logger } from '../runtime/logger.ts';

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 10_000;

export class NamespaceQueue {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Immediate | undefined;
  /** The delay before the next retry of each namespace whose last pass threw, and its timer. */
  private readonly retrying = new Map<string, { delayMs: number; timer: NodeJS.Timeout | undefined }>();

  constructor(
    private readonly reconcile: (namespace: string) => void,
    /** Told of each pass that threw (for the log); the queue retries it either way. */
    private readonly onError: (namespace: string, err: unknown) => void = () => {},
  ) {}

  add(...namespaces: string[]): void {
    for (const ns of namespaces) this.pending.add(ns);
    this.timer ??= setImmediate(() => this.flush());
  }

  stop(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    this.pending.clear();
    for (const r of this.retrying.values()) if (r.timer) clearTimeout(r.timer);
    this.retrying.clear();
  }

  private flush(): void {
    this.timer = undefined;
    const namespaces = [...this.pending];
    this.pending.clear();
    for (const ns of namespaces) {
      try {
        this.reconcile(ns);
        const r = this.retrying.get(ns);
        if (r?.timer) clearTimeout(r.timer);
        this.retrying.delete(ns);
      } catch (err) {
        this.onError(ns, err);
        this.retryLater(ns);
      }
    }
  }

  private retryLater(ns: string): void {
    const was = this.retrying.get(ns);
    if (was?.timer) return;
    const delayMs = was ? Math.min(MAX_RETRY_MS, was.delayMs * 2) : FIRST_RETRY_MS;
    const entry: { delayMs: number; timer: NodeJS.Timeout | undefined } = { delayMs, timer: undefined };
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      this.add(ns);
    }, delayMs);
    entry.timer.unref();
    this.retrying.set(ns, entry);
  }
}

/** How a controller's failed pass is logged (its queue retries it). */
export function logPassFailure(log: Logger, controller: string, namespace: string, err: unknown): void {
  log.warn(
    { controller, namespace, err: (err as Error).message },
    'sandbox controller pass failed; retrying',
  );
}
