/**
 * Test plumbing for the controller's HTTP side and for member backends: the controller's routes
 * served on loopback (closed after the test), and TCP servers standing in for a Pod's node port.
 */
import { createServer, type Server } from 'node:net';
import type { TestContext } from 'node:test';
import type { StreamOptions } from '../../src/controller/dashboard-stream.ts';
import type { NplController } from '../../src/controller/controller.ts';
import { serveController as serve } from '../../src/main/controller-http.ts';

/** Serves the controller's state API, dashboard and stream on 127.0.0.1; returns the base URL. */
export async function serveController(
  t: Pick<TestContext, 'after'>,
  ctl: NplController,
  stream: StreamOptions = {},
): Promise<string> {
  const http = await serve(ctl, { host: '127.0.0.1', port: 0 }, () => ctl.isReady, stream);
  t.after(() => http.close());
  return http.url;
}

/** A TCP server that accepts and closes: a backend a health check finds up. */
export async function tcpBackend(address: string, port: number): Promise<Server> {
  const s = createServer((c) => c.end());
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.listen(port, address, () => resolve());
  });
  return s;
}

/** Stops a server (no-op when it is not listening). */
export const closeServer = (s: Server): Promise<void> =>
  new Promise((r) => (s.listening ? s.close(() => r()) : r()));
