/**
 * The upstream echo's TCP mode (echo-basic with TCP_ECHO_SERVER, its tcpserver package), played
 * by the harness: on connect it sends its welcome line, then answers `PING` with `PONG`, `IS_TLS`
 * with whether the connection is TLS, and `TEST` with the Pod's identity and, over TLS, the server
 * name the client asked for, as one JSON line. Plain on one port, TLS on another.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { type EchoIdentity, track } from './echo.ts';

export const WELCOME = 'Gateway API Test TCP Server\n';

export interface TcpAssertions {
  namespace: string;
  pod: string;
  isTLS: boolean;
  tls?: { version: string; serverName: string; cipherSuite: string };
}

function serve(socket: Socket, id: EchoIdentity, tls: TLSSocket | undefined): void {
  const assertions: TcpAssertions = {
    namespace: id.namespace,
    pod: id.pod,
    isTLS: tls !== undefined,
    ...(tls
      ? {
          tls: {
            version: tls.getProtocol() ?? '',
            serverName: (tls as TLSSocket & { servername?: string }).servername || '',
            cipherSuite: tls.getCipher()?.standardName ?? '',
          },
        }
      : {}),
  };
  socket.write(WELCOME);
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    // A bounded line: nothing sent to a test backend needs more.
    if (buffered.length > 4096) return socket.destroy();
    let nl: number;
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

function listen(server: Server, ip: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, ip, () => resolve(server));
  });
}

/** The plain TCP echo on `port`. */
export function startTcpEcho(id: EchoIdentity, ip: string, port: number): Promise<Server> {
  return listen(track(createTcpServer((s) => serve(s, id, undefined))), ip, port);
}

/** The TLS echo on `port`, with the Pod's certificate. */
export function startTlsEcho(
  id: EchoIdentity,
  ip: string,
  port: number,
  cert: { cert: string; key: string },
): Promise<Server> {
  return listen(track(createTlsServer({ cert: cert.cert, key: cert.key }, (s) => serve(s, id, s))), ip, port);
}
