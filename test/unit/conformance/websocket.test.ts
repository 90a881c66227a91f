/**
 * The WebSocket check of HTTPRouteBackendProtocolWebSocket, held to fail: an echo passes; a reply
 * that differs, a server that never upgrades and one that closes at once each fail with why.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { type WebSocket, WebSocketServer } from 'ws';
import { webSocketEcho } from '../../../conformance/harness/websocket.ts';

async function server(
  t: TestContext,
  onSocket?: (ws: WebSocket, req: IncomingMessage) => void,
): Promise<string> {
  const http: Server = createServer((_req, res) => res.writeHead(404).end());
  if (onSocket) {
    const wss = new WebSocketServer({ server: http, path: '/ws' });
    wss.on('connection', onSocket);
    t.after(() => wss.close());
  }
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    http.closeAllConnections();
    return new Promise<void>((r) => http.close(() => r()));
  });
  return `127.0.0.1:${(http.address() as AddressInfo).port}`;
}

describe('WebSocket echo check', () => {
  it('an echo passes: the text and the binary frame come back unchanged, the Origin sent', async (t) => {
    let origin: string | undefined;
    const addr = await server(t, (ws, req) => {
      origin = req.headers.origin;
      ws.on('message', (d, binary) => ws.send(d, { binary }));
    });
    assert.equal(await webSocketEcho(addr, 'ws://gateway/x'), undefined);
    assert.equal(origin, 'ws://gateway/x');
  });

  it('a changed reply, no upgrade and a close at once each fail, saying which', async (t) => {
    const wrong = await server(t, (ws) => ws.on('message', () => ws.send('something else')));
    assert.match((await webSocketEcho(wrong, 'o', 2000))!, /^text frame: got "something else"/);
    const textOnly = await server(t, (ws) => ws.on('message', (d) => ws.send(d.toString())));
    assert.match((await webSocketEcho(textOnly, 'o', 2000))!, /^binary frame: got /);
    const plain = await server(t);
    assert.match((await webSocketEcho(plain, 'o', 2000))!, /^failed to dial/);
    const closing = await server(t, (ws) => ws.close(1011));
    assert.match((await webSocketEcho(closing, 'o', 2000))!, /closed \(1011\)|failed to dial/);
  });
});
