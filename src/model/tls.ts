/**
 * The TLS of the model: what the load balancer speaks to members (a BackendTLSPolicy) and what it
 * asks of clients (a Gateway's `spec.tls.frontend`, an Ingress's client CA by host). Types only,
 * and the word for the device's own CA store; src/model/types.ts re-exports them.
 */

/** The CA of `BackendTls` that means the device's own store of public CAs (`wellKnownCACertificates: System`). */
export const SYSTEM_CA = 'System';

/**
 * How the load balancer speaks TLS to a pool's members (GEP-1897): it connects to
 * `nodeIP:nodePort`, so the name sent and the name verified are the policy's, never the address.
 */
export interface BackendTls {
  /** Sent as SNI: the policy's hostname (a DNS name, from the validation boundary). */
  serverName: string;
  /**
   * The DNS names one of which the member's certificate must carry: the hostname, or the
   * policy's subjectAltNames of type Hostname when it has some.
   */
  verifyNames: string[];
  /** The CA bundle (PEM, parsed at the boundary) the certificates must chain to, or SYSTEM_CA. */
  ca: string;
  /**
   * The certificate (a Certificate of the desired state, by name) presented to the members: the
   * Gateway's `spec.tls.backend.clientCertificateRef`. Absent: none.
   */
  clientCertificate?: string;
}

/**
 * Client certificates asked at an HTTPS virtual service's TLS handshake (a Gateway's
 * `spec.tls.frontend` for the port): each client's certificate must chain to `ca`.
 */
export interface ClientValidation {
  /** The CA bundle (PEM, parsed at the validation boundary) a client's certificate must chain to. */
  ca: string;
  /**
   * `AllowInsecureFallback`: a client without a certificate, or with one that does not verify, is
   * still served (the handshake asks for one and does not end on it). False: such a client's
   * handshake fails.
   */
  insecureFallback: boolean;
  /**
   * The request header a verified client's subject (its certificate's DN) is sent to members in;
   * the header as the client sent it is always removed first, so it cannot be forged. Absent: none.
   */
  subjectHeader?: string;
}

/**
 * Client certificates asked for one host of a shared HTTPS virtual service (an Ingress's
 * `npl-lb.io/client-ca`): a handshake whose TLS server name is `host` is served `certificate` and
 * must present a client certificate chaining to `ca` (no fallback). The virtual service's
 * `listenerHosts` name every host it serves, so a request whose Host is another host than its TLS
 * server name selects is answered 421 and cannot reach this host's routes over a handshake that
 * asked nothing.
 */
export interface HostClientValidation {
  /** A host of the service's routes, lower case (`*.example.com`: a wildcard host). */
  host: string;
  /** The Certificate (by name, one of the service's `certificates`) served for it. */
  certificate: string;
  /** The CA bundle (PEM, parsed at the validation boundary) a client's certificate must chain to. */
  ca: string;
}
