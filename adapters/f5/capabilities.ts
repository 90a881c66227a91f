/**
 * What the BIG-IP (AS3) adapter serves: TCP and UDP, L7 with the route features LTM endpoint
 * policies express (no regular expressions), certificates, TLS passthrough, HTTP(S) member checks
 * with the probe's headers, and the pool-level parts of a BackendPolicy.
 */
import type { Capabilities } from '../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';
import { F5_PARAMETERS } from './parameters.ts';

/**
 * Ranges per L4 client filter: the iRule (source-ranges.ts) is one line per range, up to about
 * 100 characters for an IPv6 one, and BIG-IP refuses an iRule of 64 KiB or more.
 */
export const F5_MAX_SOURCE_RANGES = 500;

export const F5_CAPABILITIES: Capabilities = {
  l4: { tcp: true, udp: true },
  l7: true,
  memberNodeTag: true,
  drainingMembers: true,
  applyConcurrency: 4,
  // Certificate objects, and HTTPS listeners choosing among them by SNI (certificates.ts).
  certificates: true,
  // A Service_TCP with an endpoint policy on the ClientHello's server name (declaration.ts).
  tlsPassthrough: true,
  // TLS ended on a TCP listener (TLSRoute Terminate): the Service_TCP's serverTLS, a TLS_Server of
  // the listener's certificates, and an iRule picking each route's pool by SNI (tls-terminate.ts).
  tlsTerminate: true,
  // Endpoint_Policy conditions and actions (http-policy.ts); LTM policies have no regular expressions.
  // A route's client filter: a rule before it on the client's address marks the request, an
  // iRule answers 403 (http-policy.ts).
  http: {
    ...ALL_HTTP,
    pathTypes: ['Prefix', 'Exact', 'ImplementationSpecific'],
    regexMatches: false,
    sourceRanges: true,
    // Client certificates: the TLS_Server's authenticationMode (`require`, or `request` for the
    // insecure fallback) against a CA_Bundle of the application (declaration.ts).
    clientValidation: true,
    // The verified client's subject in a header the Gateway names: an iRule removing the header as
    // sent, then inserting X509::subject of a verified certificate (client-tls.ts).
    clientSubjectHeader: true,
    // WebSocket: every HTTP service carries BIG-IP's own WebSocket profile (`profileWebSocket`:
    // /Common/websocket), so an upgrade is passed and the connection tunnelled (declaration.ts).
    webSocket: true,
    // A request whose TLS server name selects another HTTPS listener than its Host: 421, by an
    // iRule keeping the handshake's name and comparing the listeners each selects (misdirected.ts).
    misdirectedRequests: true,
    // TLS to members (pool-tls.ts): a TLS_Client per pool (sendSNI; serverName, the one name
    // checked, may differ from it; trustCA a CA_Bundle, or `generic`, BIG-IP's public CAs; the
    // Gateway's clientCertificate), chosen per pool by an iRule; a weighted rule's pool holds all
    // its backends' members, so they ask one TLS.
    // A route's retries (route-retry.ts): an iRule of each HTTP service sending again, on any status
    // a rule names, a request without a body whose member answered it (`HTTP::retry`), at most the
    // rule's attempts (the pool's reselectTries retries a failed connection). At once: no backoff.
    retry: { statuses: Array.from({ length: 200 }, (_, i) => 400 + i), maxAttempts: 10 },
    // A route's sessions (persistence.ts): the rule's persist action inserts the cookie it names,
    // its expiry the rule's absoluteTimeout. A policy's inserted cookie always carries an expiry,
    // so a cookie for the browser's session alone (lifetimeType Session) is refused by name.
    sessionCookie: { absoluteTimeout: true, permanent: true, browserSession: false },
    backendTls: {
      systemCa: true,
      maxVerifyNames: 1,
      namesApartFromSni: true,
      clientCertificates: true,
      oneTlsPerSplit: true,
    },
  },
  // A pool's own Monitor (monitorType http) from its Pods' readiness probe (declaration.ts).
  httpChecks: true,
  httpsChecks: true,
  // The probe's headers in the monitor's send string.
  checkHeaders: true,
  // The Monitor's send line names the method, its receive pattern the statuses (any ranges).
  checkMethods: true,
  checkStatuses: 'any',
  // Pool loadBalancingMode. AS3 has no hash on the client's address.
  algorithms: ['RoundRobin', 'LeastConnections'],
  // Persistence is the virtual server's in AS3: an L4 one's persistenceMethods (source-address),
  // an L7 one's per rule (the endpoint policy's persist actions: cookie insert, source address).
  persistence: ['Cookie', 'SourceIP'],
  // Members' connectionLimit; the pool's slowRampTime (seconds).
  maxConnections: true,
  // loadBalancerSourceRanges: an iRule of the L4 virtual server rejecting other clients. BIG-IP
  // keeps an iRule's text under 64 KiB; a range is one line of at most about 100 characters.
  sourceRanges: true,
  maxSourceRanges: F5_MAX_SOURCE_RANGES,
  // The pool's reselectTries: a failed connection goes to another member.
  retries: 'any',
  slowStart: { stepSeconds: 1 },
  // LoadBalancerParameters' f5 partition: the class's virtual services, with copies of the pools
  // and certificates they use, in an AS3 tenant of that name (tenant-layout.ts).
  parameters: { ...F5_PARAMETERS, applies: ['partition'] },
  // IPv6 virtualAddresses and serverAddresses (AS3's f5ip format takes both families).
  ipv6: true,
};
