/**
 * What the Avi adapter serves: TCP and UDP, L7 with the route features HTTP policy sets express
 * (http-policy.ts: no regular expressions, which Avi takes only through string groups; one query
 * parameter per rule; its redirect codes), certificates (an SNI parent with a child per further
 * certificate), TLS passthrough (an L4 DataScript choosing a pool group by the ClientHello's
 * name), IPv6, and, with a VIP network, VIPs its IPAM allocates (IPv6 ones with its IPv6 subnet).
 */
import type { Capabilities } from '../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';
import { AVI_PARAMETERS } from './parameters.ts';
import { SESSION_MINUTES_MAX } from './route-session.ts';

/** The statuses Avi's server reselect may name (HttpstatusRange: any of the Gateway API's 400-599). */
const AVI_RETRY_STATUSES: readonly number[] = Array.from({ length: 200 }, (_, i) => 400 + i);

export function aviCapabilities(allocatesVips: boolean, allocatesV6 = false): Capabilities {
  return {
    l4: { tcp: true, udp: true },
    l7: true,
    memberNodeTag: true,
    drainingMembers: true,
    applyConcurrency: 4,
    certificates: true,
    tlsPassthrough: true,
    // A pool's own HealthMonitor (HTTP) from its Pods' readiness probe (objects.ts).
    httpChecks: true,
    // A pool's servers' health is a call of its own (GET /api/pool/{uuid}/runtime/server).
    healthSlices: true,
    httpsChecks: true,
    // The probe's headers after the request line of the monitor's http_request.
    checkHeaders: true,
    // The HealthMonitor's request line names the method; http_response_code takes whole classes.
    checkMethods: true,
    checkStatuses: 'classes',
    // lb_algorithm (consistent hash on the client's address) and the system persistence profiles.
    // Consistent hash on the client's address or a custom header (lb_algorithm_hash); no cookie hash.
    algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash', 'HeaderHash'],
    persistence: ['Cookie', 'SourceIP'],
    // max_concurrent_connections_per_server; connection_ramp_duration counts whole minutes.
    maxConnections: true,
    // The pool's server_reselect: HTTP requests only, so an L4 pool keeps Avi's default (said).
    retries: 'http',
    slowStart: { stepSeconds: 60 },
    // The pool's server_timeout; a connect timeout is the TCP profile's, not a pool's.
    timeouts: { connect: false, server: true },
    http: {
      ...ALL_HTTP,
      pathTypes: ['Prefix', 'Exact', 'ImplementationSpecific'],
      regexMatches: false,
      redirectCodes: [301, 302, 307],
      maxQueryMatches: 1,
      // Pool and virtual-service port `enable_http2`: h2c to the servers, HTTP/2 from clients.
      http2: true,
      // A route's client filter: a rule before it, client_ip IS_NOT_IN the ranges, a local 403.
      sourceRanges: true,
      // TLS to members (pool-tls.ts): the pool's SSL profile, SNI (`server_name`), the names
      // checked (`host_check_enabled`, `domain_name`: one of them, apart from the SNI) and a PKI
      // profile of its own with the CA bundle; a Gateway's client certificate presented to the
      // members (`ssl_key_and_certificate_ref`). No system CA store to trust (a PKI profile holds
      // the CAs it is given).
      backendTls: { systemCa: false, maxVerifyNames: 16, namesApartFromSni: true, clientCertificates: true },
      // Client certificates at HTTPS services (client-validation.ts): an application profile of
      // the service's own, its HTTP profile REQUIRE (REQUEST with every PKI error allowed for the
      // insecure fallback) against a PKI profile of its own. No subject header.
      clientValidation: true,
      // WebSocket: the HTTP application profiles proxy an upgrade and the connection after it
      // (`websockets_enabled`: System-HTTP's and System-Secure-HTTP's default, and set on the
      // profile a service validating clients has of its own).
      webSocket: true,
      // A route's retries: the pool's server_reselect (enabled, num_retries: 0-5 in its schema
      // here, svr_resp_code.ranges one status each), on any status a rule names; Avi sends such a
      // request to another server. A rule naming no status is refused (its connection retries are
      // Avi's own, not a pool field).
      retry: { statuses: AVI_RETRY_STATUSES, maxAttempts: 5, needsStatuses: true },
      // A route's session cookie (route-session.ts): a persistence profile of the pool's own, its
      // timeout in whole minutes up to 10 days; Avi honours a browser-session cookie past its
      // timeout, so only a Permanent one (is_persistent_cookie) ends a session after a time.
      sessionCookie: {
        absoluteTimeout: true,
        permanent: true,
        browserSession: true,
        browserSessionTimeout: false,
        timeoutStepSeconds: 60,
        maxTimeoutSeconds: SESSION_MINUTES_MAX * 60,
      },
    },
    ...(allocatesVips ? { allocatesVips: true } : {}),
    // LoadBalancerParameters' avi section: the virtual services' SE group (se_group_ref).
    parameters: { ...AVI_PARAMETERS, applies: ['serviceEngineGroup'] },
    // IPv6 VsVips (`ip6_address`) and servers (`V6`); where its IPAM allocates, only with an IPv6 subnet.
    ipv6: !allocatesVips || allocatesV6,
  };
}
