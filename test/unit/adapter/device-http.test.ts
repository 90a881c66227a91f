/**
 * The REST adapters' shared wire: JSON both ways, text and empty answers, every status returned,
 * no answer turned into the adapter's own error (refused, timed out), a read that failed on its
 * socket retried once on a fresh connection while a write never is, and an injected dispatcher
 * used and left open.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { Agent } from 'undici';
import { DeviceHttp } from '../../../src/adapter/device-http.ts';

class Unreachable extends Error {
  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

async function serve(
  t: TestContext,
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<string> {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handle(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const client = (t: TestContext, url: string, timeoutMs = 5000) => {
  const http = new DeviceHttp({ url, timeoutMs, unreachable: (m, c) => new Unreachable(m, c) });
  t.after(() => http.close());
  return http;
};

describe('DeviceHttp', () => {
  it('sends JSON with its headers and reads JSON, text and empty answers; any status comes back', async (t) => {
    const seen: { method?: string; url?: string; type?: string; token?: string; body?: string }[] = [];
    const url = await serve(t, (req, body, res) => {
      seen.push({
        method: req.method!,
        url: req.url!,
        type: req.headers['content-type']!,
        token: req.headers['x-token'] as string,
        body,
      });
      if (req.url === '/json') res.writeHead(201, { 'content-type': 'application/json' }).end('{"a":1}');
      else if (req.url === '/text') res.writeHead(503).end('busy, try later');
      else res.writeHead(204).end();
    });
    const http = client(t, url);
    const r1 = await http.send('POST', '/json', { json: { b: [2] } }, { 'x-token': 'tok' });
    assert.equal(r1.status, 201);
    assert.deepEqual(r1.body, { a: 1 });
    const r2 = await http.send('GET', '/text');
    assert.equal(r2.status, 503);
    assert.equal(r2.body, 'busy, try later');
    const r3 = await http.send('PUT', '/empty?x=1', { text: 'plain' });
    assert.equal(r3.status, 204);
    assert.equal(r3.body, undefined);
    assert.deepEqual(seen, [
      { method: 'POST', url: '/json', type: 'application/json', token: 'tok', body: '{"b":[2]}' },
      { method: 'GET', url: '/text', type: undefined, token: undefined, body: '' },
      { method: 'PUT', url: '/empty?x=1', type: 'text/plain', token: undefined, body: 'plain' },
    ]);
  });

  it("no answer is the adapter's own error: a refused connection, and a device slower than the timeout", async (t) => {
    // Port 1 on loopback: nothing listens there.
    const refused = client(t, 'http://127.0.0.1:1');
    await assert.rejects(refused.send('GET', '/x'), (err: unknown) => {
      assert.ok(err instanceof Unreachable);
      assert.match(err.message, /^GET \/x: /);
      return true;
    });
    const silent = await serve(t, () => {});
    const slow = client(t, silent, 200);
    await assert.rejects(slow.send('GET', '/never'), (err: unknown) => {
      assert.ok(err instanceof Unreachable);
      assert.match(err.message, /^GET \/never: .*[Tt]imeout/);
      return true;
    });
  });

  it('a read whose socket is reset is sent once more on a fresh connection; a write is not', async (t) => {
    let n = 0;
    const url = await serve(t, (req, _body, res) => {
      n++;
      if (n === 1 || n === 3) req.socket.destroy();
      else res.writeHead(200).end('{"ok":true}');
    });
    const http = client(t, url);
    const read = await http.send('GET', '/r');
    assert.deepEqual(read.body, { ok: true });
    assert.equal(n, 2);
    await assert.rejects(http.send('POST', '/w', { json: {} }), Unreachable);
    assert.equal(n, 3, 'a write that may have been taken is not sent twice');
  });

  it('an injected dispatcher is used and left open when the client closes', async (t) => {
    const url = await serve(t, (_req, _body, res) => res.writeHead(200).end('1'));
    const agent = new Agent();
    t.after(() => agent.close());
    let dispatched = 0;
    const counting = agent.compose((dispatch) => (opts, handler) => {
      dispatched++;
      return dispatch(opts, handler);
    });
    const http = new DeviceHttp({
      url,
      dispatcher: counting,
      timeoutMs: 5000,
      unreachable: (m, c) => new Unreachable(m, c),
    });
    assert.equal((await http.send('GET', '/')).body, 1);
    await http.close();
    assert.equal(dispatched, 1);
    assert.equal(
      (
        await new DeviceHttp({
          url,
          dispatcher: agent,
          timeoutMs: 5000,
          unreachable: (m, c) => new Unreachable(m, c),
        }).send('GET', '/')
      ).status,
      200,
      'still open',
    );
  });
});
