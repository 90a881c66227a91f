/**
 * The image `npl-lb/demo-web`, as the sandbox's kubelet runs it: an HTTP server on each of its
 * Pod's addresses that says which Pod and node answered (and the `x-demo` header a route set).
 * Its port is `PORT` (else 8080). On SIGTERM it stops taking connections and exits once its open
 * requests are answered (at most 5 s), as a well-behaved container does; it exits too when the
 * kubelet that started it goes (its IPC channel closes).
 */
import { createServer } from 'node:http';
import process from 'node:process';
import { setTimeout } from 'node:timers';

const env = process.env;
const pod = env.POD_NAME ?? '';
const node = env.NODE_NAME ?? '';
const port = Number(env.PORT ?? '8080');
const ips = (env.POD_IPS ?? env.POD_IP ?? '127.0.0.1').split(',').filter(Boolean);

const servers = ips.map((ip) => {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    const via = req.headers['x-demo'] ? ` [x-demo: ${String(req.headers['x-demo'])}]` : '';
    res.end(`hello from pod ${pod} on ${node} (${req.headers.host ?? ''}${req.url ?? ''})${via}\n`);
  });
  server.listen(port, ip);
  return server;
});

function stop() {
  for (const s of servers) {
    s.close();
    s.closeIdleConnections();
  }
  setTimeout(() => process.exit(0), 5000).unref();
  let open = servers.length;
  for (const s of servers) s.once('close', () => --open === 0 && process.exit(0));
}
process.once('SIGTERM', stop);
process.once('disconnect', () => process.exit(0));
