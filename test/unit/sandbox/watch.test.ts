/**
 * Watches over HTTP: event types, replay from a resourceVersion, selector transitions, bookmarks,
 * timeoutSeconds, 410 Expired, headers flushed before any event, and streaming lists
 * (sendInitialEvents, as client-go's informers and Helm's --wait use them).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { api, eventually, useSandbox } from '../../support/sandbox.ts';

interface WatchEvent {
  type: string;
  object: {
    kind?: string;
    code?: number;
    reason?: string;
    metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> };
  };
}

interface OpenWatch {
  events: WatchEvent[];
  headersAt: number;
  ended: Promise<void>;
  close(): void;
}

function openWatch(base: string, path: string): Promise<OpenWatch> {
  return new Promise((resolve, reject) => {
    const events: WatchEvent[] = [];
    let buf = '';
    let endResolve!: () => void;
    const ended = new Promise<void>((r) => {
      endResolve = r;
    });
    const req = request(base + path, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i = buf.indexOf('\n');
        while (i >= 0) {
          events.push(JSON.parse(buf.slice(0, i)) as WatchEvent);
          buf = buf.slice(i + 1);
          i = buf.indexOf('\n');
        }
      });
      res.on('end', endResolve);
      res.on('close', endResolve);
      resolve({ events, headersAt: Date.now(), ended, close: () => req.destroy() });
    });
    req.on('error', (e) => {
      if (!(e as NodeJS.ErrnoException).code?.includes('RESET')) reject(e);
    });
    req.end();
  });
}

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, labels: Record<string, string>) => ({
  metadata: { name, labels },
  spec: { containers: [{ name: 'c', image: 'x' }] },
});
const merge = { 'Content-Type': 'application/merge-patch+json' };

describe('sandbox watch', () => {
  it('flushes headers at once, then streams ADDED, MODIFIED, DELETED', async (t) => {
    const { url } = await useSandbox(t);
    const w = await openWatch(url, `${PODS}?watch=true&resourceVersion=1`);
    t.after(() => w.close());
    assert.equal(w.events.length, 0, 'headers arrived before any event');
    await api(url, 'POST', PODS, pod('a', { app: 'web' }));
    await api(url, 'PATCH', `${PODS}/a`, { metadata: { labels: { v: '2' } } }, merge);
    await api(url, 'DELETE', `${PODS}/a`);
    await eventually(() => w.events.length === 3, 3000, 'three events');
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    const rvs = w.events.map((e) => Number(e.object.metadata?.resourceVersion));
    assert.ok(rvs[0]! < rvs[1]! && rvs[1]! < rvs[2]!, 'resourceVersions increase');
  });

  it('without a resourceVersion starts with the current objects as ADDED', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, pod('a', {}));
    await api(url, 'POST', PODS, pod('b', {}));
    const w = await openWatch(url, `${PODS}?watch=true`);
    t.after(() => w.close());
    await eventually(() => w.events.length === 2, 3000, 'initial ADDED');
    assert.deepEqual(
      w.events.map((e) => `${e.type} ${e.object.metadata?.name}`),
      ['ADDED a', 'ADDED b'],
    );
  });

  it('replays from a resourceVersion and answers a too-old one with ERROR 410 Expired', async (t) => {
    const { url, sandbox } = await useSandbox(t, { historySize: 3 });
    const first = await api(url, 'POST', PODS, pod('a', {}));
    const rv = (first.body.metadata as { resourceVersion: string }).resourceVersion;
    await api(url, 'POST', PODS, pod('b', {}));
    const replay = await openWatch(url, `${PODS}?watch=true&resourceVersion=${rv}`);
    t.after(() => replay.close());
    await eventually(() => replay.events.length === 1, 3000, 'replayed event');
    assert.equal(replay.events[0]!.object.metadata?.name, 'b');
    for (const n of ['c', 'd', 'e', 'f']) await api(url, 'POST', PODS, pod(n, {}));
    const old = await openWatch(url, `${PODS}?watch=true&resourceVersion=${rv}`);
    await old.ended;
    assert.equal(old.events.length, 1);
    assert.equal(old.events[0]!.type, 'ERROR');
    assert.equal(old.events[0]!.object.code, 410);
    assert.equal(old.events[0]!.object.reason, 'Expired');
    sandbox.store.compact();
    const compacted = await openWatch(
      url,
      `${PODS}?watch=true&resourceVersion=${sandbox.store.currentRV() - 1}`,
    );
    await compacted.ended;
    assert.equal(compacted.events[0]?.object.code, 410);
  });

  it('objects leaving the selection arrive as DELETED, entering as ADDED', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, pod('a', { app: 'web' }));
    const w = await openWatch(url, `${PODS}?watch=true&labelSelector=app%3Dweb`);
    t.after(() => w.close());
    await eventually(() => w.events.length === 1, 3000, 'initial');
    await api(url, 'PATCH', `${PODS}/a`, { metadata: { labels: { app: 'db' } } }, merge);
    await api(url, 'PATCH', `${PODS}/a`, { metadata: { labels: { other: 'x' } } }, merge);
    await api(url, 'PATCH', `${PODS}/a`, { metadata: { labels: { app: 'web' } } }, merge);
    await eventually(() => w.events.length === 3, 3000, 'transitions');
    assert.deepEqual(
      w.events.map((e) => e.type),
      ['ADDED', 'DELETED', 'ADDED'],
    );
  });

  it('filters by field selector and namespace', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'other' } });
    const w = await openWatch(url, `${PODS}?watch=true&fieldSelector=spec.nodeName%3Dn1`);
    t.after(() => w.close());
    const onNode = (name: string, node: string) => ({
      ...pod(name, {}),
      spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }] },
    });
    await api(url, 'POST', PODS, onNode('x', 'n2'));
    await api(url, 'POST', '/api/v1/namespaces/other/pods', onNode('y', 'n1'));
    await api(url, 'POST', PODS, onNode('z', 'n1'));
    await eventually(() => w.events.length >= 1, 3000, 'z');
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      w.events.map((e) => e.object.metadata?.name),
      ['z'],
    );
  });

  it('sends BOOKMARK events when asked and ends at timeoutSeconds', async (t) => {
    const { url } = await useSandbox(t, { bookmarkIntervalMs: 100 });
    const started = Date.now();
    const w = await openWatch(url, `${PODS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=1`);
    await w.ended;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 900 && elapsed < 3000, `ended after ${elapsed} ms`);
    const bookmarks = w.events.filter((e) => e.type === 'BOOKMARK');
    assert.ok(bookmarks.length >= 3, `got ${bookmarks.length} bookmarks`);
    assert.equal(bookmarks[0]!.object.kind, 'Pod');
    assert.match(String(bookmarks[0]!.object.metadata?.resourceVersion), /^\d+$/);
    const none = await openWatch(url, `${PODS}?watch=true&timeoutSeconds=1`);
    await none.ended;
    assert.equal(none.events.filter((e) => e.type === 'BOOKMARK').length, 0);
  });

  it('sendInitialEvents: the current objects, a bookmark marking their end, then changes; refused without its companions', async (t) => {
    const { url } = await useSandbox(t);
    for (const name of ['a', 'b']) assert.equal((await api(url, 'POST', PODS, pod(name, {}))).status, 201);
    const rv = ((await api(url, 'GET', PODS)).body.metadata as { resourceVersion: string }).resourceVersion;
    // Whatever resourceVersion is given (NotOlderThan): the state now, not a replay.
    const w = await openWatch(
      url,
      `${PODS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=2`,
    );
    await eventually(() => w.events.some((e) => e.type === 'BOOKMARK'), 2000, 'initial events');
    const [first, second, end] = w.events;
    assert.deepEqual(
      [first!.type, first!.object.metadata?.name, second!.type, second!.object.metadata?.name],
      ['ADDED', 'a', 'ADDED', 'b'],
    );
    assert.equal(end!.type, 'BOOKMARK');
    assert.equal(end!.object.metadata?.annotations?.['k8s.io/initial-events-end'], 'true');
    await api(url, 'POST', PODS, pod('c', {}));
    await eventually(
      () => w.events.some((e) => e.type === 'ADDED' && e.object.metadata?.name === 'c'),
      2000,
      'then changes',
    );
    w.close();
    for (const [q, why] of [
      [
        'sendInitialEvents=true&allowWatchBookmarks=true',
        /requires setting resourceVersionMatch to NotOlderThan/,
      ],
      [
        'sendInitialEvents=true&resourceVersionMatch=NotOlderThan',
        /requires setting allowWatchBookmarks to true/,
      ],
    ] as const) {
      const r = await api(url, 'GET', `${PODS}?watch=true&${q}`);
      assert.equal(r.status, 400);
      assert.match(String(r.body.message), why);
    }
  });
});
