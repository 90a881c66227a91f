/**
 * The upstream suite's echo backend (echo-basic), played by the harness: a Pod's HTTP server that
 * answers with the request it saw and who it is, in echo-basic's JSON (`path`, `host`, `method`,
 * `proto`, `headers` as lists, `namespace`, `pod`), so an assertion can say which backend and
 * namespace answered and what the load balancer changed on the way.
 */
import { createServer, type Server } from 'node:http';

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

export function startEcho(id: EchoIdentity, ip: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    const headers: Record<string, string[]> = {};
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      // echo-basic reports headers in Go's canonical form; the Host header is its own field.
      if (name.toLowerCase() === 'host') continue;
      (headers[canonical(name)] ??= []).push(req.rawHeaders[i + 1]!);
    }
    const body: CapturedRequest = {
      path: req.url ?? '',
      host: req.headers.host ?? '',
      method: req.method ?? '',
      proto: `HTTP/${req.httpVersion}`,
      headers,
      namespace: id.namespace,
      pod: id.pod,
    };
    res.writeHead(200, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
    res.end(JSON.stringify(body));
  });
  // Keep-alive connections from the load balancer must not hold a close open.
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve(server));
  });
}

/** Go's canonical MIME header key: each dash-separated word capitalised. */
export function canonical(name: string): string {
  return name
    .toLowerCase()
    .split('-')
    .map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join('-');
}

export function closeServer(s: Server): Promise<void> {
  s.closeAllConnections();
  return new Promise((r) => s.close(() => r()));
}
