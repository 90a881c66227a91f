/**
 * The image `gcr.io/k8s-staging-gateway-api/echo-basic` (HTTP mode), as the sandbox's kubelet
 * runs it: on `HTTP_PORT` (else 3000) of each of its Pod's addresses it answers every request with
 * the JSON the upstream echo server writes (path, host, method, protocol, headers, namespace,
 * ingress, service, pod). SIGTERM and a gone kubelet stop it as demo-web.mjs says.
 */
import { createServer } from 'node:http';
import process from 'node:process';
import { setTimeout } from 'node:timers';

const env = process.env;
const port = Number(env.HTTP_PORT ?? '3000');
const ips = (env.POD_IPS ?? env.POD_IP ?? '127.0.0.1').split(',').filter(Boolean);

const servers = ips.map((ip) => {
  const server = createServer((req, res) => {
    const headers = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const k = req.rawHeaders[i].replace(/(^|-)([a-z])/g, (_m, d, c) => d + c.toUpperCase());
      (headers[k] ??= []).push(req.rawHeaders[i + 1]);
    }
    const body = JSON.stringify({
      path: req.url ?? '',
      host: req.headers.host ?? '',
      method: req.method ?? '',
      proto: `HTTP/${req.httpVersion}`,
      headers,
      namespace: env.NAMESPACE ?? '',
      ingress: env.INGRESS_NAME ?? '',
      service: env.SERVICE_NAME ?? '',
      pod: env.POD_NAME ?? '',
    });
    res.writeHead(200, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
    res.end(body);
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
