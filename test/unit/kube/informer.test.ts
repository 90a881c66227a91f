/**
 * The restartable informer against a scripted list/watch source and a fake clock: it never stops on
 * errors, backs off, resumes from the last resourceVersion, relists on 410, and its handlers see
 * every change once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Informer,
  type ListWatchSource,
  type WatchEnd,
  type WatchEventType,
} from '../../../src/kube/informer.ts';
import type { ListPage, RawObject } from '../../../src/kube/raw-client.ts';
import type { Clock } from '../../../src/runtime/clock.ts';
import { eventually } from '../../support/sandbox.ts';

const pod = (name: string, rv: number): RawObject => ({
  metadata: { name, namespace: 'default', resourceVersion: String(rv) },
});

class ScriptedSource implements ListWatchSource {
  lists: (ListPage | Error)[] = [];
  listCalls = 0;
  watchFrom: string[] = [];
  private current:
    { emit: (t: WatchEventType, o: RawObject) => void; end: (e: WatchEnd) => void } | undefined;

  async list(): Promise<ListPage> {
    this.listCalls++;
    const next = this.lists.shift();
    if (!next) throw new Error('no list scripted');
    if (next instanceof Error) throw next;
    return next;
  }

  watch(
    rv: string,
    onEvent: (t: WatchEventType, o: RawObject) => void,
    signal: AbortSignal,
  ): Promise<WatchEnd> {
    this.watchFrom.push(rv);
    return new Promise((resolve) => {
      this.current = { emit: onEvent, end: resolve };
      signal.addEventListener('abort', () => resolve({}));
    });
  }

  get watching(): boolean {
    return this.current !== undefined;
  }

  emit(t: WatchEventType, o: RawObject): void {
    this.current!.emit(t, o);
  }

  end(e: WatchEnd = {}): void {
    const c = this.current!;
    this.current = undefined;
    c.end(e);
  }
}

function fakeClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => 0,
    sleep: async (ms) => {
      sleeps.push(ms);
      await new Promise((r) => setImmediate(r));
    },
  };
}

function recorder(inf: Informer): string[] {
  const log: string[] = [];
  const name = (o: RawObject) => String((o.metadata as { name: string }).name);
  inf.on({
    add: (o) => log.push(`add ${name(o)}`),
    update: (_, n) => log.push(`update ${name(n)}`),
    delete: (o) => log.push(`delete ${name(o)}`),
  });
  return log;
}

describe('informer', () => {
  it('keeps what its transform makes of each object, from the list and the watch, and hands that to the handlers', async (t) => {
    const src = new ScriptedSource();
    src.lists.push({ items: [{ ...pod('a', 1), spec: { big: 'x'.repeat(100) } }], resourceVersion: '1' });
    // What the controller does: keep the validated object only (here: without the spec).
    const kept = new WeakSet<object>();
    const transform = (o: RawObject): RawObject => {
      const t = { metadata: o.metadata };
      kept.add(t);
      return t;
    };
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock(), transform });
    const seen: RawObject[] = [];
    inf.on({ add: (o) => seen.push(o), update: (o, n) => seen.push(o, n), delete: (o) => seen.push(o) });
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    await eventually(() => src.watching, 1000, 'watching');
    src.emit('MODIFIED', { ...pod('a', 2), spec: { big: 'y' } });
    src.emit('DELETED', { ...pod('a', 3), spec: {} });
    await eventually(() => seen.length === 4, 1000, 'add, update (old and new), delete');
    assert.ok(
      seen.every((o) => kept.has(o) && !('spec' in o)),
      'only transformed objects, never a raw one',
    );
    assert.equal(inf.list().length, 0);
    src.emit('ADDED', pod('b', 4));
    await eventually(() => inf.list().length === 1, 1000, 'cached');
    assert.ok(kept.has(inf.get('default/b')!), 'the cache holds the transformed object');
  });

  it('does not transform again what a paged list already kept, and transforms a list that was not', async (t) => {
    let calls = 0;
    const transform = (o: RawObject): RawObject => {
      calls++;
      return { metadata: o.metadata, kept: true };
    };
    const src = new ScriptedSource();
    // A source that applies the transform as the pages arrive (as the API source does) says so.
    src.lists.push({
      items: [transform(pod('a', 1)), transform(pod('b', 1))],
      resourceVersion: '1',
      kept: true,
    });
    calls = 0;
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock(), transform });
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    assert.equal(calls, 0, 'the kept items are cached as they are');
    assert.deepEqual(inf.get('default/a'), { metadata: pod('a', 1).metadata, kept: true });
    // A relist from a source that did not keep them: the informer transforms each item.
    src.lists.push({ items: [pod('a', 2)], resourceVersion: '2' });
    await eventually(() => src.watching, 1000, 'watching');
    src.end({ error: Object.assign(new Error('gone'), { statusCode: 410 }) });
    await eventually(() => inf.list().length === 1 && calls === 1, 1000, 'relisted and transformed');
    assert.deepEqual(inf.get('default/a'), { metadata: pod('a', 2).metadata, kept: true });
  });

  it('an optional kind the cluster does not serve (404): synced and empty, checked again, then followed once its CRD is installed; removed again, emptied', async (t) => {
    const src = new ScriptedSource();
    const notFound = () =>
      Object.assign(new Error('the server could not find the requested resource'), { statusCode: 404 });
    src.lists.push(notFound(), notFound(), { items: [pod('gw', 5)], resourceVersion: '10' });
    const clock = fakeClock();
    const inf = new Informer({ source: src, name: 'gateways', clock, optional: true, absentRetryMs: 7000 });
    const log = recorder(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    await eventually(() => src.watching, 1000, 'watch once served');
    assert.deepEqual(clock.sleeps.slice(0, 2), [7000, 7000], 'checked again at its own pace, not backed off');
    assert.deepEqual(log, ['add gw']);
    assert.equal(inf.stats.errors, 0, 'absence is not an error');
    // The CRD is deleted: the watch fails 404, the relist says 404, and the objects go.
    src.lists.push(notFound(), { items: [], resourceVersion: '20' });
    src.end({ error: notFound() });
    await eventually(() => log.length === 2, 1000, 'emptied');
    assert.deepEqual(log, ['add gw', 'delete gw']);
  });

  it('an optional kind the role may not list (403): synced and empty, said as a warning, followed once allowed', async (t) => {
    const src = new ScriptedSource();
    const forbidden = () => Object.assign(new Error('grpcroutes is forbidden'), { statusCode: 403 });
    src.lists.push(forbidden(), { items: [pod('gr', 5)], resourceVersion: '10' });
    const clock = fakeClock();
    const inf = new Informer({ source: src, name: 'grpcRoutes', clock, optional: true, absentRetryMs: 7000 });
    const log = recorder(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    await eventually(() => src.watching, 1000, 'watch once allowed');
    assert.deepEqual(clock.sleeps.slice(0, 1), [7000]);
    assert.deepEqual(log, ['add gr']);
  });

  it('a required kind answered 403 is an error retried with backoff, never synced', async (t) => {
    const src = new ScriptedSource();
    src.lists.push(Object.assign(new Error('forbidden'), { statusCode: 403 }));
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock() });
    inf.start();
    t.after(() => inf.stop());
    await eventually(() => src.listCalls >= 2, 1000, 'retried');
    assert.equal(inf.synced, false);
  });

  it('a required kind answered 404 is an error that is retried with backoff, and never counts as synced', async (t) => {
    const src = new ScriptedSource();
    src.lists.push(Object.assign(new Error('not found'), { statusCode: 404 }));
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock() });
    inf.start();
    t.after(() => inf.stop());
    await eventually(() => src.listCalls >= 2, 1000, 'retried');
    assert.equal(inf.synced, false);
    assert.ok(inf.stats.errors >= 1);
  });

  it('lists, signals synced, then applies watch events from the list resourceVersion', async (t) => {
    const src = new ScriptedSource();
    src.lists.push({ items: [pod('a', 5)], resourceVersion: '10' });
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock() });
    const log = recorder(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    await eventually(() => src.watching, 1000, 'watch');
    assert.deepEqual(src.watchFrom, ['10']);
    src.emit('ADDED', pod('b', 11));
    src.emit('MODIFIED', pod('a', 12));
    src.emit('MODIFIED', pod('a', 12));
    src.emit('BOOKMARK', { metadata: { resourceVersion: '13' } });
    src.emit('DELETED', pod('b', 14));
    assert.deepEqual(log, ['add a', 'add b', 'update a', 'delete b']);
    assert.equal(inf.lastResourceVersion, '14');
    assert.deepEqual(
      inf.list().map((o) => (o.metadata as { name: string }).name),
      ['a'],
    );
  });

  it('resumes the watch from the last resourceVersion after an error, with growing backoff', async (t) => {
    const src = new ScriptedSource();
    src.lists.push({ items: [], resourceVersion: '10' });
    const clock = fakeClock();
    const inf = new Informer({ source: src, name: 'pods', clock, backoff: { initialMs: 100, jitter: 0 } });
    inf.start();
    t.after(() => inf.stop());
    await eventually(() => src.watching, 1000, 'watch');
    src.emit('ADDED', pod('a', 11));
    src.end({ error: Object.assign(new Error('connection reset'), { statusCode: 500 }) });
    await eventually(() => src.watching, 1000, 're-watch');
    src.end({ error: new Error('ECONNREFUSED') });
    await eventually(() => src.watching, 1000, 're-watch 2');
    assert.deepEqual(src.watchFrom, ['10', '11', '11']);
    assert.equal(src.listCalls, 1, 'no relist for a plain error');
    assert.deepEqual(clock.sleeps, [100, 200]);
  });

  it('a clean close (server timeout) re-watches at once', async (t) => {
    const src = new ScriptedSource();
    src.lists.push({ items: [], resourceVersion: '3' });
    const clock = fakeClock();
    const inf = new Informer({ source: src, name: 'pods', clock });
    inf.start();
    t.after(() => inf.stop());
    await eventually(() => src.watching, 1000, 'watch');
    src.emit('BOOKMARK', { metadata: { resourceVersion: '7' } });
    src.end();
    await eventually(() => src.watching, 1000, 're-watch');
    assert.deepEqual(src.watchFrom, ['3', '7']);
    assert.deepEqual(clock.sleeps, []);
  });

  it('keeps retrying a failing list, and is synced only after one succeeds', async (t) => {
    const src = new ScriptedSource();
    src.lists.push(new Error('boom'), new Error('boom'), { items: [pod('a', 1)], resourceVersion: '2' });
    const clock = fakeClock();
    const inf = new Informer({ source: src, name: 'pods', clock, backoff: { initialMs: 10, jitter: 0 } });
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    assert.equal(src.listCalls, 3);
    assert.deepEqual(clock.sleeps, [10, 20]);
    assert.equal(inf.stats.errors, 2);
  });

  it('relists on 410 (status or ERROR event) and reconciles: deletes what went, no duplicate adds', async (t) => {
    const src = new ScriptedSource();
    src.lists.push(
      { items: [pod('a', 1), pod('b', 2), pod('c', 3)], resourceVersion: '5' },
      { items: [pod('a', 1), pod('c', 9), pod('d', 8)], resourceVersion: '10' },
      { items: [pod('a', 1), pod('c', 9), pod('d', 8)], resourceVersion: '12' },
    );
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock() });
    const log = recorder(inf);
    inf.start();
    t.after(() => inf.stop());
    await eventually(() => src.watching, 1000, 'watch');
    src.end({ error: Object.assign(new Error('Gone'), { statusCode: 410 }) });
    await eventually(() => src.watching && src.listCalls === 2, 1000, 'relist');
    assert.deepEqual(log, ['add a', 'add b', 'add c', 'update c', 'add d', 'delete b']);
    src.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired' });
    src.end();
    await eventually(() => src.watching && src.listCalls === 3, 1000, 'relist after ERROR event');
    assert.equal(log.length, 6, 'an identical relist changes nothing');
    assert.deepEqual(src.watchFrom, ['5', '10', '12']);
  });

  it('stop() ends the loop', async () => {
    const src = new ScriptedSource();
    src.lists.push({ items: [], resourceVersion: '1' });
    const inf = new Informer({ source: src, name: 'pods', clock: fakeClock() });
    inf.start();
    await eventually(() => src.watching, 1000, 'watch');
    await inf.stop();
    assert.equal(src.watchFrom.length, 1);
  });
});
