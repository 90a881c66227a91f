/**
 * The upstream suite's client certificate assertions (conformance/utils/tls), written again:
 * MakeTLSRequestAndExpectEventuallyConsistentResponse with a client certificate (the expected
 * answer, and the server asked for the certificate during the handshake) and
 * MakeTLSRequestAndExpectFailureResponse (the round trip fails, after the server asked). Node's
 * TLS client has no hook for the server's CertificateRequest (Go's GetClientCertificate), so
 * whether one came is read from `openssl s_client`, which prints the CA names or signature
 * algorithms a CertificateRequest carries.
 */
import { execFile } from 'node:child_process';
import type { Expected } from './http.ts';
import { roundTrip, withEchoHeaders } from './http.ts';
import { ConformanceFailure } from './status.ts';

export interface ClientCert {
  cert: string;
  key: string;
}

/** Whether an HTTPS handshake with `servername` at `addr` is asked for a client certificate. */
export function certificateRequested(addr: string, servername: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', addr, '-servername', servername],
      { timeout: 10_000 },
      (err, stdout) => {
        if (err && !stdout)
          return reject(
            new ConformanceFailure(
              `openssl s_client (to see whether a client certificate is asked for): ${err.message}`,
            ),
          );
        resolve(/Acceptable client certificate CA names|Requested Signature Algorithms/.test(stdout));
      },
    );
    child.stdin?.end();
  });
}

/** The handshake asked for a client certificate (upstream asserts its hook was called). */
export async function mustAskCertificate(addr: string, servername: string): Promise<void> {
  if (!(await certificateRequested(addr, servername)))
    throw new ConformanceFailure(
      `${servername} at ${addr}: client certificate was not asked for during the handshake`,
    );
}

/**
 * MakeTLSRequestAndExpectFailureResponse: one request with this client certificate (or none)
 * must fail (no answer at all); with a certificate, the server must have asked for it.
 */
export async function expectTlsFailure(
  addr: string,
  e: Expected,
  tls: { ca: string; servername: string; client?: ClientCert | undefined },
): Promise<void> {
  let answered: number | undefined;
  try {
    answered = (await roundTrip(addr, withEchoHeaders(e), tls)).status;
  } catch {
    answered = undefined;
  }
  if (answered !== undefined)
    throw new ConformanceFailure(
      `${e.request.host ?? ''}${e.request.path} at ${addr}: the request should fail, and was answered ${answered}`,
    );
  if (tls.client) await mustAskCertificate(addr, tls.servername);
}
