/**
 * The HTTP endpoint of the agent and the controller: /metrics (Prometheus), /healthz (the process
 * answers), /readyz (the component says it is ready), and any JSON routes the component adds.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface StatusServer {
  url: string;
  close(): Promise<void>;
}

export async function serveStatus(
  address: { host: string; port: number },
  registry: Registry,
  ready: () => boolean,
  json: Record<string, () => unknown> = {},
  html: Record<string, string> = {},
  /** Routes that answer for themselves (streams, POSTs). */
  handlers: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {},
): Promise<StatusServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'Content-Type': registry.contentType });
          res.end(text);
        },
        (err: unknown) => {
          res.writeHead(500);
          res.end(String(err));
        },
      );
      return;
    }
    const handler = path === undefined ? undefined : handlers[path];
    if (handler) {
      handler(req, res);
      return;
    }
    const route = path === undefined ? undefined : json[path];
    if (route) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(route()));
      return;
    }
    const page = path === undefined ? undefined : html[path];
    if (page !== undefined) {
      res.writeHead(200, {
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy':
          "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'",
      });
      res.end(page);
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('ok');
      return;
    }
    if (path === '/readyz') {
      const ok = ready();
      res.writeHead(ok ? 200 : 503, { 'Content-Type': 'text/plain' });
      res.end(ok ? 'ok' : 'not ready');
      return;
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
