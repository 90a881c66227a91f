/**
 * The upstream echo's TCP mode (echo-basic with TCP_ECHO_SERVER, which the sandbox's kubelet runs):
 * on connect it sends its welcome line, then answers `PING` with `PONG`, `IS_TLS` with whether the
 * connection is TLS, and `TEST` with the Pod's identity and, over TLS, the server name the client
 * asked for, as one JSON line. What a client of it reads.
 */
export const WELCOME = 'Gateway API Test TCP Server\n';

export interface TcpAssertions {
  namespace: string;
  pod: string;
  isTLS: boolean;
  tls?: { version: string; serverName: string; cipherSuite: string };
}
