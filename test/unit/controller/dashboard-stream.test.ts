/**
 * Issue 30, item 7: the dashboard's live stream is bounded per source address, so idle streams of
 * one client cannot lock every admin out: past `maxPerSource` an address gets 429, another address
 * still gets its stream, and a stream that closes frees its place. Real HTTP on loopback.
 */
import assert from 'node:assert/strict';
import { type ClientRequest, createServer, get, type IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { DashboardStream } from '../../../src/controller/dashboard-stream.ts';

describe('dashboard stream limits', () => {
  it('per source address: 429 past the limit, other addresses served, a closed stream frees its place', async (t) => {
    const stream = new DashboardStream(
      () => ({ generatedAt: 'now' }),
      () => () => {},
      {
        maxPerSource: 3,
        maxClients: 10,
        tickMs: 60_000,
        heartbeatMs: 60_000,
      },
    );
    const server = createServer((req, res) => stream.handle(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const open: ClientRequest[] = [];
    t.after(
      () =>
        new Promise<void>((r) => {
          for (const c of open) c.destroy();
          server.closeAllConnections();
          server.close(() => r());
        }),
    );
    const port = (server.address() as { port: number }).port;
    const connect = (localAddress: string) =>
      new Promise<{ status: number; req: ClientRequest; res: IncomingMessage }>((resolve, reject) => {
        const req = get({ host: '127.0.0.1', port, path: '/', localAddress, agent: false }, (res) =>
          resolve({ status: res.statusCode!, req, res }),
        );
        req.on('error', reject);
        open.push(req);
      });
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await connect('127.0.0.1'));
    assert.deepEqual(
      mine.map((m) => m.status),
      [200, 200, 200],
    );
    const refused = await connect('127.0.0.1');
    assert.equal(refused.status, 429);
    assert.equal(refused.res.headers['retry-after'], '10');
    refused.res.resume();
    const other = await connect('127.0.0.2');
    assert.equal(other.status, 200, 'another admin still gets the stream');
    assert.equal(stream.size, 4);
    const size = (): number => stream.size;
    mine[0]!.req.destroy();
    const deadline = Date.now() + 2000;
    while (size() !== 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await connect('127.0.0.1')).status, 200, 'a closed stream frees its place');
  });
});
