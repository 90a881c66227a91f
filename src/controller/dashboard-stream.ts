/**
 * Server-sent events for the dashboard: each client gets the dashboard document at once, again
 * shortly after each pass or health read, and whenever it changed when checked every `tickMs`
 * (leadership changes come without an event); a comment line keeps idle connections open through
 * proxies. Clients are bounded per source address (`maxPerSource`, 429 past it), so idle clients
 * of one address cannot lock every admin out, and in all (`maxClients`, a memory bound); each
 * one's timers go with its connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface StreamOptions {
  /** Streams in all (default 256). */
  maxClients?: number;
  /** Streams per client address (default 8). */
  maxPerSource?: number;
  debounceMs?: number;
  tickMs?: number;
  heartbeatMs?: number;
}

export class DashboardStream {
  private readonly clients = new Set<ServerResponse>();
  private readonly perSource = new Map<string, number>();

  constructor(
    /** The document; `generatedAt` is left out of the comparison. */
    private readonly view: () => { generatedAt?: string },
    private readonly subscribe: (fn: () => void) => () => void,
    private readonly opts: StreamOptions = {},
  ) {}

  get size(): number {
    return this.clients.size;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET' }).end('GET only\n');
      return;
    }
    const source = req.socket.remoteAddress ?? '';
    if ((this.perSource.get(source) ?? 0) >= (this.opts.maxPerSource ?? 8)) {
      res.writeHead(429, { 'Retry-After': '10' }).end('too many dashboard streams from this address\n');
      return;
    }
    if (this.clients.size >= (this.opts.maxClients ?? 256)) {
      res.writeHead(503, { 'Retry-After': '10' }).end('too many dashboard clients\n');
      return;
    }
    this.perSource.set(source, (this.perSource.get(source) ?? 0) + 1);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    this.clients.add(res);
    let last = '';
    let pending: NodeJS.Timeout | undefined;
    const send = () => {
      pending = undefined;
      const doc = this.view();
      const { generatedAt: _ignored, ...rest } = doc;
      const key = JSON.stringify(rest);
      if (key === last) return;
      last = key;
      res.write(`event: dashboard\ndata: ${JSON.stringify(doc)}\n\n`);
    };
    const soon = () => {
      pending ??= setTimeout(send, this.opts.debounceMs ?? 100);
    };
    const unsubscribe = this.subscribe(soon);
    const tick = setInterval(send, this.opts.tickMs ?? 2000);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), this.opts.heartbeatMs ?? 15_000);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      const n = (this.perSource.get(source) ?? 1) - 1;
      if (n > 0) this.perSource.set(source, n);
      else this.perSource.delete(source);
      unsubscribe();
      clearTimeout(pending);
      clearInterval(tick);
      clearInterval(heartbeat);
      this.clients.delete(res);
    };
    req.on('close', close);
    res.on('close', close);
    res.write('retry: 2000\n\n');
    send();
  }
}
