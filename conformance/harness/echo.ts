/**
 * What the upstream suite's echo backend (echo-basic, which the sandbox's kubelet runs:
 * src/sandbox/images/echo-basic.mjs) answers: the request it saw and who it is, in echo-basic's
 * JSON (`path`, `host`, `method`, `proto`, `headers` as lists, `namespace`, `pod`), so an
 * assertion can say which backend and namespace answered and what the load balancer changed.
 */
export interface CapturedRequest {
  path: string;
  host: string;
  method: string;
  proto: string;
  headers: Record<string, string[]>;
  namespace: string;
  pod: string;
  /** The TLS the request came over, when it did (echo-basic's TLSAssertions). */
  tls?: { version: string; serverName: string; cipherSuite: string; peerCertificates?: string[] };
}
