/**
 * One watch: newline-delimited JSON events, replayed from the store's history or started from the
 * current state, filtered by namespace and selectors (objects that stop matching arrive as DELETED,
 * objects that start matching as ADDED), with bookmarks and a server-side timeout.
 */
import type { ServerResponse } from 'node:http';
import { apiVersionOf, type ResourceType, storageKey } from './kinds.ts';
import type { Registry } from './registry.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import { ApiError, badRequest } from './status.ts';
import { metadataOf, type StoredObject, type StoreEvent } from './store.ts';

export interface WatchRequest {
  type: ResourceType;
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldSelector;
  /** '' or '0': start with the current state as ADDED events. */
  resourceVersion: string;
  /**
   * sendInitialEvents=true (a streaming list, KEP-3157): the current state as ADDED events whatever
   * the resourceVersion (the store is never older), then a bookmark annotated
   * `k8s.io/initial-events-end`.
   */
  initialEvents?: boolean;
  timeoutSeconds: number;
  bookmarks: boolean;
  bookmarkIntervalMs: number;
  /** Turns an object into the JSON the client asked for (plain, or a Table row). */
  render: (obj: StoredObject) => string;
}

/**
 * Where a watch starts, from its query: the resourceVersion (digits, or '' for now), a streaming
 * list (sendInitialEvents), bookmarks. As ValidateListOptions (apimachinery), a streaming list
 * needs resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true.
 */
export function watchStart(
  q: URLSearchParams,
): Pick<WatchRequest, 'resourceVersion' | 'initialEvents' | 'bookmarks'> {
  const resourceVersion = q.get('resourceVersion') ?? '';
  if (resourceVersion !== '' && !/^\d+$/.test(resourceVersion))
    throw badRequest(`resourceVersion: Invalid value: "${resourceVersion}": must be a non-negative integer`);
  const initialEvents = q.get('sendInitialEvents') === 'true';
  const bookmarks = q.get('allowWatchBookmarks') === 'true';
  if (initialEvents && q.get('resourceVersionMatch') !== 'NotOlderThan')
    throw badRequest(
      'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
    );
  if (initialEvents && !bookmarks)
    throw badRequest(
      'allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
    );
  return { resourceVersion, initialEvents, bookmarks };
}

/** Beyond this much unsent output the watcher is too slow and is closed, as the real server does. */
const MAX_BUFFERED = 32 * 1024 * 1024;

/** A BOOKMARK's object: the kind and the resourceVersion (and the end of a streaming list's state). */
function bookmarkJson(t: ResourceType, rv: number, initialEnd: boolean): string {
  return JSON.stringify({
    kind: t.kind,
    apiVersion: apiVersionOf(t),
    metadata: {
      resourceVersion: String(rv),
      ...(initialEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
    },
  });
}

/** The stream's headers, sent at once (a client waits for them before its first event). */
function startStream(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
  res.flushHeaders();
  res.socket?.setNoDelay(true);
}

export function serveWatch(registry: Registry, res: ServerResponse, w: WatchRequest): () => void {
  const storage = storageKey(w.type);
  const store = registry.store;
  startStream(res);
  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe = (): void => {};
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    for (const t of timers) clearTimeout(t);
    res.end();
  };
  const send = (type: string, objectJson: string): void => {
    if (closed) return;
    res.write(`{"type":"${type}","object":${objectJson}}\n`);
    if (res.writableLength > MAX_BUFFERED) close();
  };
  const matches = (o: StoredObject | undefined, ns: string): boolean =>
    o !== undefined &&
    (w.namespace === undefined || ns === w.namespace) &&
    registry.matches(w.type, o.obj, w.labels, w.fields);

  const onEvent = (ev: StoreEvent): void => {
    if (ev.storage !== storage) return;
    const now = ev.type !== 'DELETED' && matches(ev.current, ev.namespace);
    const before = ev.type !== 'ADDED' && matches(ev.previous, ev.namespace);
    if (ev.type === 'DELETED') {
      if (matches(ev.current, ev.namespace)) send('DELETED', w.render(ev.current));
      return;
    }
    if (now && before) send('MODIFIED', w.render(ev.current));
    else if (now) send('ADDED', w.render(ev.current));
    else if (before && ev.previous) {
      // Left the selection: DELETED with the previous content at the new resourceVersion.
      const prev = structuredClone(ev.previous.obj);
      metadataOf(prev).resourceVersion = String(ev.rv);
      send('DELETED', w.render({ obj: prev, json: JSON.stringify(prev) }));
    }
  };

  const bookmark = (initialEnd = false): void =>
    send('BOOKMARK', bookmarkJson(w.type, store.currentRV(), initialEnd));
  try {
    if (w.initialEvents || w.resourceVersion === '' || w.resourceVersion === '0') {
      for (const s of store.list(storage, w.namespace)) {
        if (registry.matches(w.type, s.obj, w.labels, w.fields)) send('ADDED', w.render(s));
      }
      if (w.initialEvents) bookmark(true);
    } else {
      const rv = Number(w.resourceVersion);
      for (const ev of store.since(rv)) onEvent(ev);
    }
  } catch (err) {
    if (err instanceof ApiError) {
      send('ERROR', JSON.stringify(err.status));
      close();
      return close;
    }
    throw err;
  }
  unsubscribe = store.subscribe(onEvent);
  if (w.bookmarks) {
    const tick = (): void => {
      bookmark();
      timers[0] = setTimeout(tick, w.bookmarkIntervalMs);
    };
    timers[0] = setTimeout(tick, w.bookmarkIntervalMs);
  }
  timers.push(
    setTimeout(() => {
      if (w.bookmarks) bookmark();
      close();
    }, w.timeoutSeconds * 1000),
  );
  res.on('close', close);
  return close;
}
