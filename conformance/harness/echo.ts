/**
 * The upstream suite's echo backend (echo-basic), played by the harness: a Pod's HTTP server that
 * answers with the request it saw and who it is, in echo-basic's JSON (`path`, `host`, `method`,
 * `proto`, `headers` as lists, `namespace`, `pod`), so an assertion can say which backend and
 * namespace answered and what the load balancer changed on the way.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createH2cServer } from 'node:http2';
import type { Server as NetServer, Socket } from 'node:net';
import { durationMs } from '../../src/source/gateway/http-rules.ts';

export interface EchoIdentity {
  namespace: string;
  pod: string;
}

export interface CapturedRequest {
  path: string;
  host: string;
  method: string;
  proto: string;
  headers: Record<string, string[]>;
  namespace: string;
  pod: string;
}

/** echo-basic's request handler. */
function handler(id: EchoIdentity) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const headers: Record<string, string[]> = {};
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      // echo-basic reports headers in Go's canonical form; the Host header is its own field (and
      // HTTP/2's pseudo-headers are none).
      if (name.toLowerCase() === 'host' || name.startsWith(':')) continue;
      (headers[canonical(name)] ??= []).push(req.rawHeaders[i + 1]!);
    }
    const body: CapturedRequest = {
      path: req.url ?? '',
      host: req.headers.host ?? String(req.headers[':authority'] ?? ''),
      method: req.method ?? '',
      proto: `HTTP/${req.httpVersion}`,
      headers,
      namespace: id.namespace,
      pod: id.pod,
    };
    // As echo-basic: `X-Echo-Set-Header: Name:Value,Name2:Value2` sets response headers (a name
    // given twice gets its values joined by a comma).
    const set = new Map<string, string>();
    for (const list of headers['X-Echo-Set-Header'] ?? []) {
      for (const kv of list.split(',')) {
        const at = kv.indexOf(':');
        if (at <= 0) continue;
        const name = kv.slice(0, at).trim();
        const value = kv.slice(at + 1).trim();
        set.set(name, set.has(name) ? `${set.get(name)!},${value}` : value);
      }
    }
    const answer = () => {
      if (res.destroyed) return;
      for (const [name, value] of set) res.setHeader(name, value);
      res.writeHead(200, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
      res.end(JSON.stringify(body));
    };
    // As echo-basic: `?delay=<duration>` answers that much later (timeout tests); at most 10 s.
    const delay = new URL(req.url ?? '/', 'http://echo').searchParams.get('delay');
    const ms = delay ? (durationMs(delay) ?? 0) : 0;
    if (ms > 0) setTimeout(answer, Math.min(ms, 10_000)).unref();
    else answer();
  };
}

function listen(server: Server, ip: string, port: number): Promise<Server> {
  // Keep-alive connections from the load balancer must not hold a close open.
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve(server));
  });
}

/** echo-basic over HTTP on `port`. */
export function startEcho(id: EchoIdentity, ip: string, port: number): Promise<Server> {
  return listen(createServer(handler(id)), ip, port);
}

/** echo-basic over HTTP/2 with prior knowledge (h2c) on `port` (its H2C_PORT). */
export function startH2cEcho(id: EchoIdentity, ip: string, port: number): Promise<NetServer> {
  const h = handler(id);
  const server = track(
    createH2cServer((req, res) => h(req as unknown as IncomingMessage, res as unknown as ServerResponse)),
  );
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve(server));
  });
}

/** echo-basic over HTTPS on `port` (its TLS_SERVER_CERT mode), with the Pod's certificate. */
export function startHttpsEcho(
  id: EchoIdentity,
  ip: string,
  port: number,
  cert: { cert: string; key: string },
): Promise<Server> {
  return listen(track(createHttpsServer({ cert: cert.cert, key: cert.key }, handler(id))), ip, port);
}

/** Go's canonical MIME header key: each dash-separated word capitalised. */
export function canonical(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('-');
}

const open = new WeakMap<NetServer, Set<Socket>>();

/** Follows a server's connections, so closing it ends them (an HTTP server does that itself). */
export function track<S extends NetServer>(server: S): S {
  const set = new Set<Socket>();
  open.set(server, set);
  server.on('connection', (c: Socket) => {
    set.add(c);
    c.on('close', () => set.delete(c));
  });
  return server;
}

export function closeServer(s: NetServer): Promise<void> {
  (s as Partial<Server>).closeAllConnections?.();
  for (const c of open.get(s) ?? []) c.destroy();
  return new Promise((r) => s.close(() => r()));
}
