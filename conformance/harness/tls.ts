/**
 * The upstream suite's TLS assertions (conformance/utils/tcp and utils/tls), written again: a TLS
 * connection to a Gateway's address with a server name, through TLS passthrough to the TCP echo,
 * must greet, answer PING, say it is TLS and report the Pod, namespace and server name it saw
 * (eventually, within a bound); a server name no route takes must see its connection reset or
 * closed during the handshake (never refused: something listens).
 */
import { connect, type TLSSocket } from 'node:tls';
import { goHostnameCheck } from './http.ts';
import { ConformanceFailure, type Timeouts } from './status.ts';
import { type TcpAssertions, WELCOME } from './tcp-echo.ts';

export interface TcpExpected {
  backendIsTLS: boolean;
  /** The answering Pod's name starts with `<backend>-`. */
  backend: string;
  namespace: string;
  /** The server name the backend saw, when given. */
  hostname?: string;
}

function split(addr: string): { host: string; port: number } {
  const at = addr.lastIndexOf(':');
  return { host: addr.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(addr.slice(at + 1)) };
}

function dial(addr: string, servername: string, ca: string | undefined): Promise<TLSSocket> {
  const { host, port } = split(addr);
  return new Promise((resolve, reject) => {
    const s = connect({
      host,
      port,
      servername,
      minVersion: 'TLSv1.2',
      ...(ca ? { ca, checkServerIdentity: goHostnameCheck } : { rejectUnauthorized: true }),
      timeout: 5000,
    });
    s.once('secureConnect', () => resolve(s));
    s.once('error', reject);
    s.once('timeout', () => {
      s.destroy();
      reject(new Error('timed out'));
    });
  });
}

/** Reads one line (the TCP echo answers line by line). */
function line(s: TLSSocket, send?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        cleanup();
        resolve(buf.slice(0, nl + 1));
      }
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(`connection ended after ${JSON.stringify(buf)}`));
    };
    const cleanup = () => {
      s.off('data', onData);
      s.off('end', onEnd);
      s.off('error', onEnd);
    };
    s.on('data', onData);
    s.once('end', onEnd);
    s.once('error', onEnd);
    if (send) s.write(send);
  });
}

async function exchange(
  addr: string,
  servername: string,
  ca: string,
  e: TcpExpected,
): Promise<string | undefined> {
  const s = await dial(addr, servername, ca);
  try {
    if ((await line(s)) !== WELCOME) return 'no welcome from the TCP echo';
    if ((await line(s, 'PING\n')) !== 'PONG\n') return 'no PONG';
    const isTls = (await line(s, 'IS_TLS\n')).trim();
    if (isTls !== String(e.backendIsTLS)) return `backend TLS ${isTls}, want ${e.backendIsTLS}`;
    const got = JSON.parse(await line(s, 'TEST\n')) as TcpAssertions;
    if (got.namespace !== e.namespace) return `answered from namespace ${got.namespace}, want ${e.namespace}`;
    if (!got.pod.startsWith(`${e.backend}-`)) return `answered by Pod ${got.pod}, want ${e.backend}-*`;
    if (e.hostname && got.tls?.serverName !== e.hostname)
      return `backend saw server name ${got.tls?.serverName ?? '(none)'}, want ${e.hostname}`;
    return undefined;
  } finally {
    s.destroy();
  }
}

/** MakeTCPRequestAndExpectEventuallyValidResponse, over TLS. */
export async function expectTcpEcho(
  addr: string,
  servername: string,
  ca: string,
  e: TcpExpected,
  t: Timeouts,
): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  let why = 'not tried';
  while (Date.now() < deadline) {
    try {
      const d = await exchange(addr, servername, ca, e);
      if (d === undefined) return;
      why = d;
    } catch (err) {
      why = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  throw new ConformanceFailure(
    `TLS ${servername} at ${addr}: no valid echo within ${t.consistencyMs} ms (last: ${why})`,
  );
}

/** MakeTLSConnectionAndExpectEventuallyConnectionRejection: reset or closed in the handshake. */
export async function expectTlsRejected(addr: string, servername: string, t: Timeouts): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  let why = 'not tried';
  while (Date.now() < deadline) {
    try {
      const s = await dial(addr, servername, undefined);
      s.destroy();
      why = 'the handshake completed';
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (e.code === 'ECONNRESET' || /socket disconnected|EOF|before secure TLS connection/i.test(e.message))
        return;
      why = e.code ?? e.message;
    }
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  throw new ConformanceFailure(
    `TLS ${servername} at ${addr}: not reset or closed within ${t.consistencyMs} ms (last: ${why})`,
  );
}
