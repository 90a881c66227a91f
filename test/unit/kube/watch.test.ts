/**
 * The lean watch reader: events split across chunks anywhere (mid-line, mid-character) arrive
 * whole and in order; the query reaches the server; an abort ends the watch without an error; a
 * refused watch, a broken line or an event without an object ends it with one.
 */
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { listAll, type RawObject, watchCollection } from '../../../src/kube/raw-client.ts';

async function server(t: TestContext, handle: (url: URL, res: ServerResponse) => void): Promise<KubeConfig> {
  const s = createServer((req, res) => handle(new URL(req.url ?? '/', 'http://x'), res));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    s.closeAllConnections();
    return new Promise<void>((r) => s.close(() => r()));
  });
  const kc = new KubeConfig();
  const port = (s.address() as { port: number }).port;
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const line = (type: string, name: string) =>
  `${JSON.stringify({ type, object: { metadata: { name, resourceVersion: '7' } } })}\n`;

describe('watchCollection', () => {
  it('reassembles events split anywhere; passes the query; ends when the server ends', async (t) => {
    let query = '';
    const text = line('ADDED', 'a') + line('MODIFIED', 'é-ü') + '\n' + line('DELETED', 'c');
    const bytes = Buffer.from(text, 'utf8');
    const kc = await server(t, (url, res) => {
      query = url.search;
      res.writeHead(200, { 'content-type': 'application/json' });
      // One byte at a time: every split, a multi-byte character included.
      let i = 0;
      const next = () => {
        if (i >= bytes.length) return res.end();
        res.write(bytes.subarray(i, i + 1));
        i++;
        setImmediate(next);
      };
      next();
    });
    const seen: string[] = [];
    const end = await watchCollection(
      kc,
      '/api/v1/pods',
      { resourceVersion: '5', labelSelector: 'app=web', fieldSelector: undefined },
      (type, obj: RawObject) => seen.push(`${type} ${(obj.metadata as { name: string }).name}`),
      new AbortController().signal,
    );
    assert.deepEqual(end, {});
    assert.deepEqual(seen, ['ADDED a', 'MODIFIED é-ü', 'DELETED c']);
    const q = new URLSearchParams(query);
    assert.equal(q.get('watch'), 'true');
    assert.equal(q.get('resourceVersion'), '5');
    assert.equal(q.get('labelSelector'), 'app=web');
    assert.equal(q.has('fieldSelector'), false);
  });

  it('an abort ends it quietly; a refused watch, a broken line, an event without an object end it with an error', async (t) => {
    let mode = 'hang';
    const kc = await server(t, (_url, res) => {
      if (mode === 'gone') {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ kind: 'Status', reason: 'Expired', message: 'too old resource version' }));
        return;
      }
      res.writeHead(200);
      if (mode === 'broken') res.end(`${line('ADDED', 'a')}{"type":"ADDED","object":\n`);
      else if (mode === 'shape') res.end('{"type":"ADDED"}\n');
      else res.write(line('ADDED', 'a'));
    });
    const ac = new AbortController();
    const seen: string[] = [];
    const hung = watchCollection(kc, '/api/v1/pods', {}, (type) => seen.push(type), ac.signal);
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    assert.deepEqual(await hung, {});
    assert.deepEqual(seen, ['ADDED']);
    for (const [m, expect] of [
      ['gone', /too old resource version/],
      ['broken', /JSON|Unexpected|Unterminated/],
      ['shape', /without type and object/],
    ] as const) {
      mode = m;
      const end = await watchCollection(
        kc,
        '/api/v1/pods',
        {},
        () => undefined,
        new AbortController().signal,
      );
      assert.match(String((end.error as Error | undefined)?.message), expect, m);
    }
  });
});

describe('listAll', () => {
  it('pages as client-go does and hands each page to keep as it arrives: never the whole list raw', async (t) => {
    const all = ['a', 'b', 'c', 'd', 'e'].map((name) => ({
      metadata: { name },
      spec: { big: name.repeat(50) },
    }));
    const served: string[] = [];
    const kc = await server(t, (url, res) => {
      const start = Number(url.searchParams.get('continue') || 0);
      const limit = Number(url.searchParams.get('limit'));
      served.push(`${start}+${limit}`);
      const next = start + limit < all.length ? String(start + limit) : '';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          metadata: { resourceVersion: '9', continue: next },
          items: all.slice(start, start + limit),
        }),
      );
    });
    // keep runs on each page before the next is asked for.
    const keptWhenServed: number[] = [];
    let kept = 0;
    const page = await listAll(kc, '/api/v1/pods', {}, 2, undefined, (o) => {
      keptWhenServed.push(served.length);
      kept++;
      return { metadata: o.metadata };
    });
    assert.deepEqual(served, ['0+2', '2+2', '4+2']);
    assert.deepEqual(keptWhenServed, [1, 1, 2, 2, 3]);
    assert.equal(kept, 5);
    assert.equal(page.kept, true);
    assert.equal(page.resourceVersion, '9');
    assert.deepEqual(
      page.items.map((o) => o.metadata),
      all.map((o) => o.metadata),
    );
    assert.ok(
      page.items.every((o) => !('spec' in o)),
      'only what keep made of each object',
    );
    // Without keep: the objects as served, and not marked kept.
    const raw = await listAll(kc, '/api/v1/pods', {}, 2);
    assert.equal(raw.kept, false);
    assert.deepEqual(raw.items, all);
  });
});
