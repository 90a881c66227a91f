/**
 * A restartable informer: list, then watch from the list's resourceVersion with the same label and
 * field selectors, forever. Unlike client-node's informer it never stops on an error: it backs off
 * and resumes the watch, relists on 410 Gone (and on a resourceVersion the server does not have
 * yet), and reconciles a relist against its cache so handlers see every change exactly once.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Backoff, type BackoffOptions } from '../runtime/backoff.ts';
import { type Clock, realClock } from '../runtime/clock.ts';
import { ErrorCodes, errorMessage } from '../runtime/errors.ts';
import { type Logger, silentLogger } from '../runtime/logger.ts';
import { collectionPath, type ResourceRef } from './paths.ts';
import { type ListPage, listAll, type RawObject, watchCollection } from './raw-client.ts';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/** How a watch ended: `error` undefined for a normal close (server timeout, idle timeout). */
export interface WatchEnd {
  error?: unknown;
}

/** Where the informer lists and watches: the API server in production, a fake in unit tests. */
export interface ListWatchSource {
  /**
   * The whole collection. A source may apply `keep` (the informer's transform) to each object as
   * it arrives and say so (`kept`); the informer applies it to the items of a list that did not.
   */
  list(signal: AbortSignal, keep?: (obj: RawObject) => RawObject): Promise<ListPage>;
  watch(
    resourceVersion: string,
    onEvent: (type: WatchEventType, obj: RawObject) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd>;
}

export interface InformerHandlers {
  add?(obj: RawObject): void;
  update?(oldObj: RawObject, newObj: RawObject): void;
  delete?(obj: RawObject): void;
}

export interface InformerOptions {
  source: ListWatchSource;
  name: string;
  logger?: Logger;
  clock?: Clock;
  backoff?: BackoffOptions;
  /**
   * A kind the cluster may not serve (a CRD not installed): a list answered 404 counts as synced
   * and empty, and is tried again every `absentRetryMs` (30 s), so installing the CRD later is
   * picked up without a restart.
   */
  optional?: boolean;
  absentRetryMs?: number;
  /**
   * What is kept of each object (client-go's SetTransform): applied once as the object arrives,
   * before it is cached and handed to the handlers, so the cache holds what the handlers use (for
   * the controller, the validated object) and not a second copy of the raw one.
   */
  transform?: (obj: RawObject) => RawObject;
}

const statusOf = (err: unknown): number | undefined =>
  (err as { statusCode?: number } | undefined)?.statusCode;
const notServed = (err: unknown): boolean => statusOf(err) === 404;
/** A list the controller's role does not allow (an upgrade whose RBAC was not applied). */
const forbidden = (err: unknown): boolean => statusOf(err) === 403;

interface Meta {
  name: string;
  namespace: string;
  resourceVersion: string;
}

export function metaOf(obj: RawObject): Meta {
  const m = (obj.metadata ?? {}) as Record<string, unknown>;
  return {
    name: typeof m.name === 'string' ? m.name : '',
    namespace: typeof m.namespace === 'string' ? m.namespace : '',
    resourceVersion: typeof m.resourceVersion === 'string' ? m.resourceVersion : '',
  };
}

export const objectKey = (obj: RawObject): string => {
  const m = metaOf(obj);
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
};

/** The server no longer has (410) or does not yet have (504 ResourceVersionTooLarge) our resourceVersion. */
function needsRelist(err: unknown): boolean {
  const code = (err as { statusCode?: number; code?: number } | undefined)?.statusCode;
  return code === 410 || code === 504;
}

function isIdleTimeout(err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError';
}

export class Informer {
  private readonly cache = new Map<string, RawObject>();
  private readonly handlers: InformerHandlers[] = [];
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private abort = new AbortController();
  private running: Promise<void> | undefined;
  private resourceVersion = '';
  private syncedResolve!: () => void;
  private readonly syncedPromise: Promise<void>;
  private isSynced = false;
  /** An optional kind the cluster does not serve (its last list was 404). */
  private absent = false;
  /** Counts for status and tests: lists done, watches started, errors seen. */
  readonly stats = { lists: 0, watches: 0, errors: 0 };

  constructor(private readonly opts: InformerOptions) {
    this.log = (opts.logger ?? silentLogger()).child({ informer: opts.name });
    this.clock = opts.clock ?? realClock;
    this.backoff = new Backoff(opts.backoff);
    this.syncedPromise = new Promise((resolve) => {
      this.syncedResolve = resolve;
    });
  }

  on(handlers: InformerHandlers): void {
    this.handlers.push(handlers);
  }

  get(key: string): RawObject | undefined {
    return this.cache.get(key);
  }

  list(): RawObject[] {
    return [...this.cache.values()];
  }

  get synced(): boolean {
    return this.isSynced;
  }

  /** Resolves once the first list has been delivered to the handlers. */
  waitForSync(): Promise<void> {
    return this.syncedPromise;
  }

  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  start(): void {
    if (this.running) return;
    this.abort = new AbortController();
    this.running = this.run(this.abort.signal);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    this.running = undefined;
  }

  /** An optional kind not served (404) or not allowed (403): empty and synced, said once. */
  private markAbsent(err: unknown): void {
    if (!this.absent) {
      if (forbidden(err))
        this.log.warn(
          { code: ErrorCodes.INFORMER_LIST_FAILED, err: errorMessage(err) },
          'not allowed to list it (RBAC: apply the chart’s ClusterRole); served as absent, checking again',
        );
      else
        this.log.info(
          { err: errorMessage(err) },
          'not served by the cluster (CRD not installed?); checking again',
        );
    }
    this.absent = true;
    this.replace([]);
    if (!this.isSynced) {
      this.isSynced = true;
      this.syncedResolve();
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    let needList = true;
    while (!signal.aborted) {
      if (needList) {
        try {
          if (!(await this.relist(signal))) return;
          needList = false;
          if (this.absent) this.log.info('now served by the cluster');
          this.absent = false;
          this.backoff.reset();
          if (!this.isSynced) {
            this.isSynced = true;
            this.syncedResolve();
          }
        } catch (err) {
          if (signal.aborted) return;
          // An optional kind the role may not list is served as absent, said as a warning: the other
          // kinds are not held up by it (an upgrade whose RBAC was not applied yet).
          if (this.opts.optional && (notServed(err) || forbidden(err))) {
            this.markAbsent(err);
            await this.clock.sleep(this.opts.absentRetryMs ?? 30_000, signal);
            continue;
          }
          this.stats.errors++;
          const wait = this.backoff.next();
          this.log.warn(
            { code: ErrorCodes.INFORMER_LIST_FAILED, err: errorMessage(err), retryInMs: wait },
            'list failed; retrying',
          );
          await this.clock.sleep(wait, signal);
          continue;
        }
      }
      this.stats.watches++;
      let delivered = false;
      const end = await this.opts.source.watch(
        this.resourceVersion,
        (type, obj) => {
          delivered = true;
          this.apply(type, obj, () => {
            needList = true;
          });
        },
        signal,
      );
      if (signal.aborted) return;
      if (end.error === undefined || isIdleTimeout(end.error)) {
        if (delivered) this.backoff.reset();
        // A watch that closes at once, over and over, must not spin.
        if (!delivered && !needList) await this.clock.sleep(this.backoff.next(), signal);
        continue;
      }
      this.stats.errors++;
      if (needsRelist(end.error) || (this.opts.optional && notServed(end.error))) {
        this.log.info({ err: errorMessage(end.error) }, 'resourceVersion expired; relisting');
        needList = true;
        continue;
      }
      const wait = this.backoff.next();
      this.log.warn(
        { code: ErrorCodes.INFORMER_WATCH_FAILED, err: errorMessage(end.error), retryInMs: wait },
        'watch failed; resuming',
      );
      await this.clock.sleep(wait, signal);
    }
  }

  /**
   * Lists and replaces the cache; false if stopped meanwhile. A function of its own, so the list
   * (every object as it came, before the transform) is garbage once it returns: an async function
   * suspended in its watch keeps its frame, and with it whatever its locals last held.
   */
  private async relist(signal: AbortSignal): Promise<boolean> {
    const page = await this.opts.source.list(signal, this.opts.transform);
    if (signal.aborted) return false;
    this.stats.lists++;
    this.replace(page.items, page.kept === true);
    this.resourceVersion = page.resourceVersion;
    return true;
  }

  private apply(type: WatchEventType, obj: RawObject, expired: () => void): void {
    if (type === 'ERROR') {
      const code = (obj as { code?: number }).code;
      if (code === 410) expired();
      else this.log.warn({ status: obj }, 'watch error event');
      return;
    }
    const rv = metaOf(obj).resourceVersion;
    if (rv) this.resourceVersion = rv;
    if (type === 'BOOKMARK') return;
    if (this.opts.transform) obj = this.opts.transform(obj);
    const key = objectKey(obj);
    const old = this.cache.get(key);
    if (type === 'DELETED') {
      if (!old) return;
      this.cache.delete(key);
      for (const h of this.handlers) h.delete?.(obj);
      return;
    }
    this.upsert(key, old, obj);
  }

  private upsert(key: string, old: RawObject | undefined, obj: RawObject): void {
    this.cache.set(key, obj);
    if (!old) {
      for (const h of this.handlers) h.add?.(obj);
    } else if (metaOf(old).resourceVersion !== metaOf(obj).resourceVersion) {
      for (const h of this.handlers) h.update?.(old, obj);
    }
  }

  /** A (re)list: adds and updates for what is new or changed, deletes for what is gone. */
  private replace(items: RawObject[], kept = false): void {
    const seen = new Set<string>();
    for (const raw of items) {
      const obj = this.opts.transform && !kept ? this.opts.transform(raw) : raw;
      const key = objectKey(obj);
      seen.add(key);
      this.upsert(key, this.cache.get(key), obj);
    }
    for (const [key, obj] of this.cache) {
      if (seen.has(key)) continue;
      this.cache.delete(key);
      for (const h of this.handlers) h.delete?.(obj);
    }
  }
}

export interface ApiSourceOptions {
  kubeConfig: KubeConfig;
  resource: ResourceRef;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Server-side watch timeout, randomised per watch as client-go does (5 to 10 minutes). */
  watchTimeoutSeconds?: () => number;
}

/** List and watch on a real API server, with the same selectors on both. */
export function apiServerSource(o: ApiSourceOptions): ListWatchSource {
  const path = collectionPath(o.resource, o.namespace);
  const selectors = { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector };
  const timeout = o.watchTimeoutSeconds ?? (() => 300 + Math.floor(Math.random() * 300));
  return {
    list: (signal, keep) => listAll(o.kubeConfig, path, selectors, 500, signal, keep),
    watch: (resourceVersion, onEvent, signal) =>
      watchCollection(
        o.kubeConfig,
        path,
        { ...selectors, resourceVersion, allowWatchBookmarks: 'true', timeoutSeconds: String(timeout()) },
        (type, obj) => onEvent(type as WatchEventType, obj),
        signal,
      ),
  };
}
