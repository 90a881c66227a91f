/**
 * The bench's kubelet-and-agent stand-in for the sandbox's simulated Pods: each Pod bound to a
 * Node gets a real HTTP server on its Node's loopback address (the "container"), and, once it
 * listens, the NodePortLocal annotation an agent would write for it. The server keeps serving
 * while the Pod terminates (its preStop runs) and stops, its connections cut, when the Pod object
 * is gone, as a container stops. Polls the API every 50 ms; `live(port)` says whether the server
 * behind a node port is up (what "a member that reaches a live Pod" means in the figures).
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { Agent, request } from 'undici';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';

interface Running {
  server: Server;
  sockets: Set<Socket>;
  port: number;
  nodeIP: string;
}

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export class AppRunner {
  private readonly running = new Map<string, Running>();
  private readonly ports = new Set<number>();
  private next = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly http = new Agent({ connections: 4 });

  constructor(
    private readonly url: string,
    private readonly namespace: string,
    private readonly nodeIPs: Record<string, string>,
    private readonly basePort: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), 50);
  }

  /** Whether the server behind this node port listens (its Pod's container runs). */
  live(port: number): boolean {
    return this.ports.has(port);
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await request(`${this.url}/api/v1/namespaces/${this.namespace}/pods`, {
        dispatcher: this.http,
      });
      const pods = ((await r.body.json()) as { items?: Obj[] }).items ?? [];
      const seen = new Set<string>();
      for (const p of pods) {
        const name = String(p.metadata.name);
        seen.add(name);
        const nodeIP = this.nodeIPs[String(p.spec?.nodeName ?? '')];
        if (!nodeIP || p.status?.phase !== 'Running' || this.running.has(name)) continue;
        await this.run(name, nodeIP);
      }
      for (const [name, r] of this.running) if (!seen.has(name)) this.stopOne(name, r);
    } catch {
      // The next tick tries again.
    } finally {
      this.busy = false;
    }
  }

  private async run(name: string, nodeIP: string): Promise<void> {
    const port = this.basePort + (this.next++ % 1000);
    const sockets = new Set<Socket>();
    const server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end(name),
    );
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((res, rej) => {
      server.once('error', rej);
      server.listen(port, nodeIP, () => res());
    });
    this.running.set(name, { server, sockets, port, nodeIP });
    this.ports.add(port);
    const entries = [{ podPort: 8080, nodeIP, nodePort: port, protocol: 'tcp', ipFamily: 'IPv4' }];
    await request(`${this.url}/api/v1/namespaces/${this.namespace}/pods/${name}`, {
      method: 'PATCH',
      dispatcher: this.http,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { [NPL_POD_ANNOTATION]: JSON.stringify(entries) } } }),
    }).then((r) => r.body.dump());
  }

  private stopOne(name: string, r: Running): void {
    this.running.delete(name);
    this.ports.delete(r.port);
    r.server.close();
    for (const s of r.sockets) s.destroy();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.busy) await new Promise((res) => setTimeout(res, 10));
    for (const [name, r] of this.running) this.stopOne(name, r);
    await this.http.close();
  }
}
