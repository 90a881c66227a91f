/**
 * Server-sent events for the dashboard: each client gets the dashboard document at once, again
 * shortly after each pass or health read, and whenever it changed when checked every `tickMs`
 * (leadership changes come without an event); a comment line keeps idle connections open through
 * proxies. Clients are bounded; each one's timers go with its connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface StreamOptions {
  maxClients?: number;
  debounceMs?: number;
  tickMs?: number;
  heartbeatMs?: number;
}

export class DashboardStream {
  private readonly clients = new Set<ServerResponse>();

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
    if (this.clients.size >= (this.opts.maxClients ?? 32)) {
      res.writeHead(503, { 'Retry-After': '10' }).end('too many dashboard clients\n');
      return;
    }
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
    const close = () => {
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
