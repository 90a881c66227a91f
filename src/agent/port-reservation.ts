/**
 * A node port is ours while we hold a socket bound to it, so ports other programs use are skipped
 * and nobody takes ours. The socket doubles as the userspace forwarder's listener.
 */
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server, type Socket } from 'node:net';
import type { IpFamily, NplProtocol } from '../kube/annotations.ts';

export interface Reservation {
  readonly address: string;
  readonly port: number;
  readonly protocol: NplProtocol;
  /** Set by the userspace forwarder; without it connections are refused and datagrams dropped. */
  onConnection: ((socket: Socket) => void) | undefined;
  onDatagram: ((msg: Buffer, from: RemoteInfo) => void) | undefined;
  /** Sends a datagram from the reserved UDP port (replies of the userspace forwarder). */
  sendDatagram(msg: Buffer, port: number, address: string): void;
  /**
   * TCP only: stop accepting (the listening socket closes, so a connect is refused at once, as a
   * load balancer's TCP check sees it; open connections go on) and accept again. While paused the
   * port is free for a moment; `resume` is false when another program took it meanwhile.
   */
  pause?(): Promise<void>;
  resume?(): Promise<boolean>;
  release(): Promise<void>;
}

export interface PortReserver {
  /** Binds `address:port`; undefined when the port is taken or not ours to bind. */
  reserve(address: string, port: number, protocol: NplProtocol): Promise<Reservation | undefined>;
}

const BUSY = new Set(['EADDRINUSE', 'EACCES', 'EADDRNOTAVAIL', 'EPERM']);

function isBusy(err: unknown): boolean {
  return BUSY.has(String((err as NodeJS.ErrnoException).code));
}

export function wildcardFor(family: IpFamily): string {
  return family === 'IPv6' ? '::' : '0.0.0.0';
}

async function reserveTcp(address: string, port: number): Promise<Reservation | undefined> {
  // A larger read buffer than the 16 KiB default moves bulk transfers in fewer, bigger chunks.
  const server: Server = createServer({ allowHalfOpen: true, highWaterMark: 256 * 1024 });
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: address, port, exclusive: true, ipv6Only: address.includes(':') }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  const close = () => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r()));
  // Once released the port is never taken again: a resume still under way (the endpoint prober's,
  // racing a Pod's removal or the agent's stop) finds it released and gives the port back.
  let released = false;
  const res: Reservation = {
    address,
    port,
    protocol: 'tcp',
    onConnection: undefined,
    onDatagram: undefined,
    sendDatagram: () => {},
    pause: close,
    resume: async () => {
      if (released) return false;
      if (server.listening) return true;
      try {
        await listen();
      } catch {
        return false;
      }
      if (!released) return true;
      await close();
      return false;
    },
    release: async () => {
      released = true;
      await close();
    },
  };
  server.on('connection', (s: Socket) => {
    if (res.onConnection) res.onConnection(s);
    else s.destroy();
  });
  try {
    await listen();
  } catch (err) {
    if (isBusy(err)) return undefined;
    throw err;
  }
  server.on('error', () => {});
  return res;
}

async function reserveUdp(address: string, port: number): Promise<Reservation | undefined> {
  const socket: UdpSocket = createSocket({
    type: address.includes(':') ? 'udp6' : 'udp4',
    ipv6Only: address.includes(':'),
  });
  const res: Reservation = {
    address,
    port,
    protocol: 'udp',
    onConnection: undefined,
    onDatagram: undefined,
    sendDatagram: (msg, toPort, toAddress) => socket.send(msg, toPort, toAddress),
    release: () => new Promise<void>((r) => socket.close(() => r())),
  };
  socket.on('message', (msg, from) => res.onDatagram?.(msg, from));
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind({ address, port, exclusive: true }, () => {
        socket.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    socket.close();
    if (isBusy(err)) return undefined;
    throw err;
  }
  socket.on('error', () => {});
  return res;
}

export const socketReserver: PortReserver = {
  reserve: (address, port, protocol) =>
    protocol === 'tcp' ? reserveTcp(address, port) : reserveUdp(address, port),
};
