/**
 * The HTTP(S) server under each load-balancer simulator: listen on a loopback port, report its
 * URL, answer JSON, and close with every connection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export class SimServer {
  private server: Server | undefined;

  constructor(private readonly tls: { cert: string; key: string } | undefined) {}

  get url(): string {
    const a = this.server?.address() as AddressInfo | undefined;
    if (!a) throw new Error('simulator not started');
    return `${this.tls ? 'https' : 'http'}://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  }

  async listen(
    handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
    onError: (res: ServerResponse, err: unknown) => void,
    port: number,
    host: string,
  ): Promise<string> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      handle(req, res).catch((err: unknown) => onError(res, err));
    };
    const server = this.tls ? createHttpsServer(this.tls, handler) : createServer(handler);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return this.url;
  }

  async close(): Promise<void> {
    const s = this.server;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  type = 'application/json',
): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
