/**
 * Plain-JSON reads through client-node's authentication (token, client certificates, CA), for the
 * informer's list. Objects stay as the API server sent them; sources parse them with zod.
 */
import { STATUS_CODES } from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { HttpMethod, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { type Dispatcher, request } from 'undici';
import { z } from 'zod';

/** A failed API call, with the HTTP status and the Status body's reason when there is one. */
export class KubeApiError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

const statusBody = z.object({ reason: z.string().optional(), message: z.string().optional() }).loose();

export const listBody = z.object({
  metadata: z.object({ resourceVersion: z.string().optional(), continue: z.string().optional() }).loose(),
  items: z.array(z.record(z.string(), z.unknown())).nullable(),
});

export type RawObject = Record<string, unknown>;

/** The connection pool kept per KubeConfig, by cluster and user. */
const dispatchers = new WeakMap<KubeConfig, Map<string, Dispatcher>>();

async function requestContext(
  kc: KubeConfig,
  path: string,
  method: HttpMethod,
): Promise<{ url: URL; ctx: RequestContext }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeApiError(0, 'NoCluster', 'the kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/$/, '') + path);
  const ctx = new RequestContext(url.toString(), method);
  await kc.applySecurityAuthentication(ctx);
  // client-node makes a new connection pool for every request (a TCP, and with TLS a handshake,
  // each time); the first one made for a cluster and user serves every later request.
  const made = ctx.getDispatcher();
  if (made) {
    const key = `${cluster.server}|${kc.getCurrentUser()?.name ?? ''}`;
    let pools = dispatchers.get(kc);
    if (!pools) dispatchers.set(kc, (pools = new Map()));
    const kept = pools.get(key);
    if (kept) ctx.setDispatcher(kept);
    else pools.set(key, made);
  }
  return { url, ctx };
}

async function failure(res: Dispatcher.ResponseData, what: string): Promise<KubeApiError> {
  const text = await res.body.text();
  let reason = STATUS_CODES[res.statusCode] ?? '';
  let message = `${what}: HTTP ${res.statusCode}`;
  try {
    const s = statusBody.parse(JSON.parse(text));
    reason = s.reason ?? reason;
    message = `${what}: ${s.message ?? reason}`;
  } catch {
    // not a Status body
  }
  return new KubeApiError(res.statusCode, reason, message);
}

/** Sends a JSON body and drops the answer: nothing is decoded into client-node's model classes. */
async function sendJson(
  kc: KubeConfig,
  method: 'PATCH' | 'POST' | 'PUT',
  path: string,
  body: unknown,
  contentType: string,
): Promise<void> {
  const { url, ctx } = await requestContext(
    kc,
    path,
    method === 'PATCH' ? HttpMethod.PATCH : method === 'PUT' ? HttpMethod.PUT : HttpMethod.POST,
  );
  const headers = { ...ctx.getHeaders(), 'Content-Type': contentType, Accept: 'application/json' };
  const dispatcher = ctx.getDispatcher();
  const res = await request(url, {
    method,
    headers,
    body: JSON.stringify(body),
    ...(dispatcher ? { dispatcher } : {}),
  });
  if (res.statusCode >= 300) throw await failure(res, `${method} ${path}`);
  await res.body.dump();
}

/** A JSON merge patch (the agent patches a thousand Pods at once and needs none of the reply). */
export const mergePatch = (kc: KubeConfig, path: string, body: unknown): Promise<void> =>
  sendJson(kc, 'PATCH', path, body, 'application/merge-patch+json');

/**
 * A strategic merge patch: lists with a merge key (a status's `conditions`, by `type`) are merged
 * item by item, so one condition is written without touching the others.
 */
export const strategicPatch = (kc: KubeConfig, path: string, body: unknown): Promise<void> =>
  sendJson(kc, 'PATCH', path, body, 'application/strategic-merge-patch+json');

/** A replace (an update carrying the resourceVersion it read: a 409 when another writer came first). */
export const putJson = (kc: KubeConfig, path: string, body: unknown): Promise<void> =>
  sendJson(kc, 'PUT', path, body, 'application/json');

/** A create (Events are written by the thousand at a cold start; their replies are never read). */
export const postJson = (kc: KubeConfig, path: string, body: unknown): Promise<void> =>
  sendJson(kc, 'POST', path, body, 'application/json');

export async function getJson(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | undefined>,
  signal?: AbortSignal,
): Promise<unknown> {
  const { url, ctx } = await requestContext(kc, path, HttpMethod.GET);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
  const headers = { ...ctx.getHeaders(), Accept: 'application/json' };
  const dispatcher = ctx.getDispatcher();
  const res = await request(url, {
    method: 'GET',
    headers,
    ...(dispatcher ? { dispatcher } : {}),
    ...(signal ? { signal } : {}),
  });
  if (res.statusCode !== 200) throw await failure(res, `GET ${path}`);
  return (await res.body.json()) as unknown;
}

export interface ListPage {
  items: RawObject[];
  resourceVersion: string;
  /** The items are already what `keep` made of them (see `listAll`). */
  kept?: boolean;
}

/**
 * Lists a collection in pages of `pageSize`, as client-go's pager does, and returns the whole of
 * it. With `keep`, each page's objects are replaced by what `keep` makes of them as the page
 * arrives, so only one page is ever held as the server sent it (a list of 50,000 Pods held raw
 * until its end was the controller's memory peak at a cold start).
 */
export async function listAll(
  kc: KubeConfig,
  path: string,
  selectors: { labelSelector?: string | undefined; fieldSelector?: string | undefined },
  pageSize = 500,
  signal?: AbortSignal,
  keep?: (obj: RawObject) => RawObject,
): Promise<ListPage> {
  const items: RawObject[] = [];
  let cont: string | undefined;
  let resourceVersion = '';
  do {
    const body = listBody.parse(
      await getJson(kc, path, { ...selectors, limit: String(pageSize), continue: cont }, signal),
    );
    for (const item of body.items ?? []) items.push(keep ? keep(item) : item);
    resourceVersion = body.metadata.resourceVersion ?? resourceVersion;
    cont = body.metadata.continue || undefined;
  } while (cont);
  return { items, resourceVersion, kept: keep !== undefined };
}

/** How a watch ended: the server closed it (none), or the error it failed with. */
export interface WatchOutcome {
  error?: unknown;
}

/** One event of a watch stream, as far as it is read here (objects are the sources' to parse). */
const watchEvent = z.object({ type: z.string(), object: z.record(z.string(), z.unknown()) });

/**
 * A watch on a collection, read as it arrives: undici's Node stream split into lines by hand, one
 * JSON.parse per event (no WHATWG stream, no line reader, no model classes: the watch path is a
 * large share of the controller's CPU under load). Resolves when the server ends the watch, the
 * signal aborts it (no error) or it fails (with the error: a bad status, a broken line).
 */
export async function watchCollection(
  kc: KubeConfig,
  path: string,
  query: Record<string, string | undefined>,
  onEvent: (type: string, obj: RawObject) => void,
  signal: AbortSignal,
): Promise<WatchOutcome> {
  try {
    const { url, ctx } = await requestContext(kc, path, HttpMethod.GET);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, v);
    const dispatcher = ctx.getDispatcher();
    const res = await request(url, {
      method: 'GET',
      headers: { ...ctx.getHeaders(), Accept: 'application/json' },
      ...(dispatcher ? { dispatcher } : {}),
      signal,
      // A quiet watch sends nothing for minutes; the server's timeoutSeconds ends it.
      bodyTimeout: 0,
    });
    if (res.statusCode !== 200) return { error: await failure(res, `watch ${path}`) };
    // A character may be split across chunks: the decoder keeps its first bytes for the next one.
    const utf8 = new StringDecoder('utf8');
    let rest = '';
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const text = rest + utf8.write(chunk);
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (line.trim() === '') continue;
        const ev = watchEvent.safeParse(JSON.parse(line));
        if (!ev.success)
          throw new KubeApiError(0, 'BadWatchEvent', `watch ${path}: an event without type and object`);
        onEvent(ev.data.type, ev.data.object);
      }
      rest = text.slice(start);
    }
    return {};
  } catch (err) {
    return signal.aborted ? {} : { error: err };
  }
}
