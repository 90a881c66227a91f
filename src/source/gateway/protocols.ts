/**
 * The listener protocols npl-lb serves, and which of them (and what beyond them) the configured
 * load balancer supports: what listeners, route kinds and features are judged by. Types only.
 */
export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TLS' | 'TCP' | 'UDP';

/** Which listener protocols the configured load balancer serves (from its Capabilities). */
export type ProtocolSupport = Record<ListenerProtocol, boolean> & {
  /** HTTP/2 from clients and to members (HttpCapabilities.http2): the route kinds that need it. */
  http2?: boolean;
  /** Client certificates validated at HTTPS listeners (Gateway `spec.tls.frontend`). */
  clientCertificates?: boolean;
  /** A verified client's subject sent to members in a header (HttpCapabilities.clientSubjectHeader). */
  clientSubjectHeader?: boolean;
  /** TLS listeners in Terminate mode (Capabilities.tlsTerminate). */
  tlsTerminate?: boolean;
  /** TLS listeners of both modes on one port (Capabilities.tlsMixed), Terminate served too. */
  tlsMixed?: boolean;
  /** TLS to backends presenting a client certificate (Gateway `spec.tls.backend.clientCertificateRef`). */
  backendClientCertificates?: boolean;
};
