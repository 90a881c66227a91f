/**
 * The image `registry.k8s.io/gateway-api/echo-basic` (the Gateway API conformance suite's backend),
 * as the sandbox's kubelet runs it, in its modes as the environment chooses them:
 * - HTTP (the default): every request answered with the JSON echo-basic writes (`path`, `host`,
 *   `method`, `proto`, `headers` in Go's canonical form as lists, `namespace`, `pod`), on
 *   `HTTP_PORT` (3000), HTTP/2 with prior knowledge on `H2C_PORT` (3001) and, with
 *   `TLS_SERVER_CERT`/`TLS_SERVER_PRIVKEY`, HTTPS on `HTTPS_PORT` (8443); `X-Echo-Set-Header:
 *   Name:Value,...` sets response headers, `?delay=<duration>` answers that much later (10 s at
 *   most); a WebSocket at `/ws` on `HTTP_PORT` sends each message back; `/retry/...?uuid=&succeedAfter=N`
 *   fails a request's first N attempts (its `responseCode`, else a reset connection); each request
 *   logged as echo-basic logs it (`Echoing back request made to <uri> to client (<addr>)`);
 * - `TCP_ECHO_SERVER`: a welcome line, then `PING` → `PONG`, `IS_TLS`, and `TEST` → the Pod's
 *   identity (and over TLS the server name asked for) as a JSON line; TLS on `TLS_PORT` (8443) with
 *   a certificate;
 * - `GRPC_ECHO_SERVER`: gRPC (h2c) on `HTTP_PORT`, Echo and EchoTwo answered with the method, the
 *   metadata, the authority and the Pod's identity, EchoThree unimplemented (grpcecho.proto).
 * Files named in the environment are read through the Pod's volume mounts (`NPL_LB_MOUNTS`, set by
 * the kubelet: no filesystem namespace here). SIGTERM stops it as demo-web.mjs does.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createH2cServer } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import process from 'node:process';
import { setTimeout } from 'node:timers';
import { createServer as createTlsServer } from 'node:tls';
import { fileURLToPath, URL } from 'node:url';
import { Buffer } from 'node:buffer';

const env = process.env;
const id = { namespace: env.NAMESPACE ?? '', pod: env.POD_NAME ?? '' };
const ips = (env.POD_IPS ?? env.POD_IP ?? '127.0.0.1').split(',').filter(Boolean);
const port = (name, dflt) => Number(env[name] ?? dflt);

/** A path inside the container, as the file the kubelet wrote for its mount. */
function hostPath(p) {
  const mounts = JSON.parse(env.NPL_LB_MOUNTS ?? '[]');
  for (const m of mounts)
    if (p === m.mountPath || p.startsWith(`${m.mountPath}/`)) return m.dir + p.slice(m.mountPath.length);
  return p;
}
const certPath = env.TLS_SERVER_CERT;
const keyPath = env.TLS_SERVER_PRIVKEY ?? env.TLS_SERVER_PRIV_KEY;
const cert =
  certPath && keyPath
    ? { cert: readFileSync(hostPath(certPath), 'utf8'), key: readFileSync(hostPath(keyPath), 'utf8') }
    : undefined;

// Client certificates asked over TLS and verified when given (Go's VerifyClientCertIfGiven): a
// certificate of another CA ends the handshake; the verified ones are echoed back.
const clientCaPath = env.TLS_CLIENT_CACERTS;
const clientCa = clientCaPath ? readFileSync(hostPath(clientCaPath), 'utf8') : undefined;
const httpsOptions = cert && {
  ...cert,
  ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {}),
};

/** A certificate's DER as Go's pem.Encode writes it (64-character lines). */
const pemOf = (der) =>
  `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .replace(/.{64}/g, '$&\n')
    .replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;

/** Go's canonical MIME header key. */
const canonical = (name) =>
  name
    .toLowerCase()
    .split('-')
    .map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w))
    .join('-');

/** A Go-style duration of the Gateway API (`1s`, `500ms`, `1m30s`) in ms. */
function durationMs(v) {
  if (!/^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(v)) return 0;
  const unit = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, u] of v.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(n) * unit[u];
  return total;
}

// The retry simulation (echo-basic's /retry/, v1.6.1): each request's attempts by its `uuid`, the
// first `succeedAfter` failing (`responseCode`, else the connection reset), `delayRetry` before
// a failure. The oldest ids go first past a bound, as a test's probes come and go.
const attempts = new Map();
const MAX_RETRY_IDS = 10_000;

/** A /retry/ request's failure, if this attempt fails (true: handled). */
function retrySimulation(req, res) {
  const q = new URL(req.url ?? '/', 'http://echo').searchParams;
  const uuid = q.get('uuid');
  const succeedAfter = Number.parseInt(q.get('succeedAfter') ?? '', 10);
  if (!uuid || Number.isNaN(succeedAfter)) {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(uuid ? 'succeedAfter is required' : 'uuid is required');
    return true;
  }
  const seen = attempts.get(uuid) ?? 0;
  if (seen >= succeedAfter) return false;
  attempts.delete(uuid);
  attempts.set(uuid, seen + 1);
  if (attempts.size > MAX_RETRY_IDS) attempts.delete(attempts.keys().next().value);
  const code = Number.parseInt(q.get('responseCode') ?? '', 10);
  const fail = () => {
    if (Number.isNaN(code)) req.socket.resetAndDestroy();
    else res.writeHead(code).end();
  };
  const ms = durationMs(q.get('delayRetry') ?? '');
  if (ms > 0) setTimeout(fail, Math.min(ms, 10_000)).unref();
  else fail();
  return true;
}

function httpHandler(req, res) {
  // echo-basic's own log line, which the upstream mirror tests look for in the Pod's log.
  process.stdout.write(
    `Echoing back request made to ${req.url ?? ''} to client (${req.socket.remoteAddress}:${req.socket.remotePort})\n`,
  );
  if ((req.url ?? '').startsWith('/retry/') && retrySimulation(req, res)) return;
  const headers = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i];
    if (name.toLowerCase() === 'host' || name.startsWith(':')) continue;
    (headers[canonical(name)] ??= []).push(req.rawHeaders[i + 1]);
  }
  const body = {
    path: req.url ?? '',
    host: req.headers.host ?? String(req.headers[':authority'] ?? ''),
    method: req.method ?? '',
    proto: `HTTP/${req.httpVersion}`,
    headers,
    namespace: id.namespace,
    pod: id.pod,
    // Over TLS, what it was (echo-basic's TLSAssertions): the server name asked for, above all.
    ...(req.socket?.encrypted
      ? {
          tls: {
            version: req.socket.getProtocol?.() ?? '',
            serverName: req.socket.servername || '',
            cipherSuite: req.socket.getCipher?.()?.standardName ?? '',
            ...(req.socket.authorized && req.socket.getPeerCertificate?.()?.raw
              ? { peerCertificates: [pemOf(req.socket.getPeerCertificate().raw)] }
              : {}),
          },
        }
      : {}),
  };
  const set = new Map();
  for (const list of headers['X-Echo-Set-Header'] ?? [])
    for (const kv of list.split(',')) {
      const at = kv.indexOf(':');
      if (at <= 0) continue;
      const name = kv.slice(0, at).trim();
      const value = kv.slice(at + 1).trim();
      set.set(name, set.has(name) ? `${set.get(name)},${value}` : value);
    }
  const answer = () => {
    if (res.destroyed) return;
    for (const [name, value] of set) res.setHeader(name, value);
    res.writeHead(200, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' });
    res.end(JSON.stringify(body));
  };
  const delay = new URL(req.url ?? '/', 'http://echo').searchParams.get('delay');
  const ms = delay ? durationMs(delay) : 0;
  if (ms > 0) setTimeout(answer, Math.min(ms, 10_000)).unref();
  else answer();
}

function tcpSession(socket, tls) {
  const assertions = {
    namespace: id.namespace,
    pod: id.pod,
    isTLS: tls !== undefined,
    ...(tls
      ? {
          tls: {
            version: tls.getProtocol() ?? '',
            serverName: tls.servername || '',
            cipherSuite: tls.getCipher()?.standardName ?? '',
          },
        }
      : {}),
  };
  socket.write('Gateway API Test TCP Server\n');
  let buffered = '';
  socket.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    if (buffered.length > 4096) return socket.destroy();
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl).replace(/\r$/, '');
      buffered = buffered.slice(nl + 1);
      if (line === 'PING') socket.write('PONG\n');
      else if (line === 'IS_TLS') socket.write(`${assertions.isTLS}\n`);
      else if (line === 'TEST') socket.write(`${JSON.stringify(assertions)}\n`);
    }
  });
  socket.on('error', () => socket.destroy());
}

/** Every server started, and the connections of each (closed on SIGTERM). */
const servers = [];
function serve(server, p) {
  const open = new Set();
  server.on('connection', (c) => {
    open.add(c);
    c.on('close', () => open.delete(c));
  });
  if ('keepAliveTimeout' in server) server.keepAliveTimeout = 1000;
  servers.push({
    close: () =>
      new Promise((r) => {
        server.close(() => r());
        for (const c of open) c.destroy();
      }),
  });
  for (const ip of ips) server.listen(p, ip);
}

async function grpcMode() {
  const grpc = await import('@grpc/grpc-js');
  const { default: protobuf } = await import('protobufjs');
  const SERVICE = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';
  const root = protobuf.loadSync(fileURLToPath(new URL('./grpcecho.proto', import.meta.url)));
  const reqT = root.lookupType('gateway_api_conformance.echo_basic.grpcecho.EchoRequest');
  const resT = root.lookupType('gateway_api_conformance.echo_basic.grpcecho.EchoResponse');
  const enc = (t) => (m) => Buffer.from(t.encode(t.fromObject(m)).finish());
  const dec = (t) => (b) => t.toObject(t.decode(b), { defaults: true });
  const def = (m) => ({
    path: `/${SERVICE}/${m}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: enc(reqT),
    requestDeserialize: dec(reqT),
    responseSerialize: enc(resT),
    responseDeserialize: dec(resT),
  });
  const answer = (m) => (call, done) => {
    const headers = Object.entries(call.metadata.getMap()).map(([key, v]) => ({ key, value: String(v) }));
    done(null, {
      assertions: {
        fullyQualifiedMethod: `/${SERVICE}/${m}`,
        headers,
        authority: call.getHost(),
        context: id,
      },
      request: {},
    });
  };
  const server = new grpc.Server();
  server.addService(
    { Echo: def('Echo'), EchoTwo: def('EchoTwo'), EchoThree: def('EchoThree') },
    { Echo: answer('Echo'), EchoTwo: answer('EchoTwo') },
  );
  for (const ip of ips)
    await new Promise((resolve, reject) =>
      server.bindAsync(`${ip}:${port('HTTP_PORT', 3000)}`, grpc.ServerCredentials.createInsecure(), (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  servers.push({
    close: () =>
      new Promise((r) => {
        server.tryShutdown(() => r());
        setTimeout(() => {
          server.forceShutdown();
          r();
        }, 1000).unref();
      }),
  });
}

if (env.GRPC_ECHO_SERVER !== undefined) await grpcMode();
else if (env.TCP_ECHO_SERVER !== undefined) {
  serve(
    createTcpServer((s) => tcpSession(s, undefined)),
    port('HTTP_PORT', 3000),
  );
  if (cert)
    serve(
      createTlsServer(cert, (s) => tcpSession(s, s)),
      port('TLS_PORT', 8443),
    );
} else {
  const http = createServer(httpHandler);
  // WebSocket at /ws, as echo-basic: each text or binary message sent back as it came.
  http.on('upgrade', (req, socket, head) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/ws') return socket.destroy();
    void import('ws').then(({ WebSocketServer }) => {
      const wss = new WebSocketServer({ noServer: true });
      wss.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary })),
      );
    });
  });
  serve(http, port('HTTP_PORT', 3000));
  serve(createH2cServer(httpHandler), port('H2C_PORT', 3001));
  if (httpsOptions) {
    const https = createHttpsServer(httpsOptions, httpHandler);
    // A certificate given that does not verify: the connection ends (as Go's handshake fails).
    https.on('secureConnection', (s) => {
      if (clientCa && !s.authorized && s.getPeerCertificate()?.raw) s.destroy();
    });
    serve(https, port('HTTPS_PORT', 8443));
  }
}

process.once('SIGTERM', () => {
  setTimeout(() => process.exit(0), 5000).unref();
  void Promise.all(servers.map((s) => s.close())).then(() => process.exit(0));
});
process.once('disconnect', () => process.exit(0));
