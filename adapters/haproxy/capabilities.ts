/**
 * What HAProxy serves, on either transport: TCP (HAProxy does not balance UDP), L7 with every
 * Gateway API route feature of the model, TLS passthrough by SNI, and certificates (files on the
 * runtime transport, the Data Plane API's storage on the other).
 */
import type { Capabilities } from '../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';
import { HAPROXY_PARAMETERS } from './parameters.ts';
import { FETCH_NAME } from './http-routes.ts';
import { MAX_MIRRORS } from './mirrors.ts';

export const HAPROXY_CAPABILITIES: Capabilities = {
  l4: { tcp: true, udp: false },
  l7: true,
  memberNodeTag: true,
  drainingMembers: true,
  http: {
    ...ALL_HTTP,
    // ACL regexes are PCRE2; header and query names sit inside `req.hdr()` / `urlp()`.
    regexDialect: 'pcre2',
    matchNames: { pattern: FETCH_NAME, description: "letters, digits, '-' and '_'" },
    // A route's backend timeout: the frontend sets a variable for its requests, each HTTP backend
    // `http-request set-timeout server` from it (both transports).
    timeouts: true,
    // A route's client filter: `http-request return status 403` for its requests from elsewhere.
    sourceRanges: true,
    // `proto h2` on the servers of an h2c pool; HTTP/2 from clients with prior knowledge on a
    // plain bind and by ALPN (`alpn h2,http/1.1`) on an ssl one (both transports).
    http2: true,
    // HAProxy's HTTP mode passes a WebSocket upgrade and tunnels the connection (both transports).
    webSocket: true,
    // `ssl verify required ca-file ... sni str(...) verifyhost ...` on a TLS pool's servers, CA
    // bundles as files (ca-files.ts; the Data Plane's storage/general and server fields, both
    // transports). HAProxy verifies the certificate against the SNI it sends (`verifyhost`
    // applies only without SNI): one name, the hostname. A Gateway's backend client certificate
    // is the servers' `crt` (a PEM of the certificate store; runtime transport).
    backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: false, clientCertificates: true },
    // `ca-file ... verify required` on an HTTPS bind (`verify optional` with the leaf's and the
    // chain's errors ignored for AllowInsecureFallback); the bundle a file as above (both
    // transports: the Data Plane's bind fields).
    clientValidation: true,
    // Some hosts alone (an Ingress's npl-lb.io/client-ca): a crt-list line of their own with
    // `[ca-file ... verify required]` and the host as its SNI filter (crt-list.ts; both
    // transports: the Data Plane's crt-list in its storage, the CA in storage/general).
    clientValidationByHost: true,
    // 421 for a request whose TLS server name selects another HTTPS listener than its Host:
    // `ssl_fc_sni` and the Host each matched to a listener, compared (http-routes.ts).
    misdirectedRequests: true,
    // A backendRef's RequestHeaderModifier: its http-request lines on the weighted pick of that
    // backend, after the route's (http-routes.ts).
    backendHeaderModifiers: true,
    // CORS: a preflight answered by `http-request return` with the policy's headers (403 for an
    // origin not allowed), an allowed origin echoed on the member's answer (cors-rules.ts; both
    // transports: the Data Plane's return_hdrs).
    cors: true,
    // Request mirrors: a Lua action of ours copies the request to a frontend on an abstract socket
    // in front of the mirror's pool (mirrors.ts; both transports: the Data Plane's `lua` rule,
    // storage/general and global Lua loads, dataplane/mirror-layout.ts).
    mirror: { maxPerRoute: MAX_MIRRORS },
    // A verified client's subject: `http-request del-header` then `set-header <name>
    // %[ssl_c_s_dn]` where `ssl_c_verify` is 0 (http-routes.ts).
    clientSubjectHeader: true,
    // A route's retries: the pool's backend `retry-on conn-failure empty-response <statuses>` and
    // `retries N` (Data Plane: the backend's retry_on and retries), on the statuses HAProxy names
    // (its retry-on list). HAProxy retries at once (no backoff) and bounds each attempt, not the
    // attempts together (`timeouts.request` beside `retry` is refused).
    retry: { statuses: [401, 403, 404, 408, 425, 500, 501, 502, 503, 504], maxAttempts: 10 },
    // A route's session cookie: the pool's `cookie <name> insert ... maxlife <s>s` and, Permanent,
    // `attr "Max-Age=<s>"` (Data Plane: the cookie model's name, maxlife and attr).
    sessionCookie: {
      absoluteTimeout: true,
      permanent: true,
      browserSession: true,
      browserSessionTimeout: true,
    },
  },
  tlsPassthrough: true,
  // TLS listeners in Terminate mode: `bind ... ssl crt-list` (Data Plane: the bind's `ssl` and
  // `crt_list`), the decrypted stream routed by `ssl_fc_sni` (config.ts, frontend-layout.ts).
  tlsTerminate: true,
  // TLS listeners of both modes on one port (Mixed): the port's frontend routes by the ClientHello,
  // passing some names through and sending the rest round a loop to a frontend that terminates
  // them (tls-mixed.ts; Data Plane: the loop's backend and frontend as objects, tls-loop.ts).
  tlsMixed: true,
  certificates: true,
  // `option httpchk GET <path>` with the probe's timings on the servers (both transports).
  httpChecks: true,
  // `check-ssl verify none` with the HTTP check (both transports).
  httpsChecks: true,
  // `http-check send hdr ...` (both transports: the Data Plane's http_checks).
  checkHeaders: true,
  // `option httpchk HEAD <path>` (both transports: the Data Plane's httpchk_params.method).
  checkMethods: true,
  // `http-check expect status 200-299,304` (both transports: the Data Plane's http_checks).
  checkStatuses: 'any',
  // `balance roundrobin | leastconn | source` (consistent hashing: servers come and go at runtime).
  // Keyed hashes: `balance hdr(<name>)`, `balance hash req.cook(<name>)`, consistent too.
  algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash', 'HeaderHash', 'CookieHash'],
  // A dynamic cookie per pool; SourceIP a stick table (policy-lines.ts balanceLines).
  persistence: ['Cookie', 'SourceIP'],
  // `maxconn` and `slowstart` on each server (config.ts checkWords; Data Plane server fields).
  maxConnections: true,
  // `retries N` in the backend (Data Plane: the backend's `retries`); the defaults redispatch.
  retries: 'any',
  // `timeout connect` / `timeout server` in the backend (Data Plane: connect_timeout, server_timeout).
  timeouts: { connect: true, server: true },
  slowStart: { stepSeconds: 1 },
  // `tcp-request connection reject unless { src ... }` on the L4 frontend (both transports).
  sourceRanges: true,
  // LoadBalancerParameters' haproxy section: a class's frontends' maxconn and timeout client.
  parameters: { ...HAPROXY_PARAMETERS, applies: ['frontend'] },
  // IPv6 binds and servers, bracketed where haproxy.cfg and the runtime API need it (both transports).
  ipv6: true,
};

/**
 * The Data Plane API transport: the same, through the API's objects. A check's headers and
 * statuses are the backend's http_checks, SourceIP persistence its stick_table and stick_rules, a
 * route's timeout a frontend set-var and the backend's set-timeout rule (layout.ts), Mixed mode's
 * loop a backend and a frontend of their own (tls-loop.ts), request mirrors a `lua` rule, a
 * frontend per mirrored pool, the script in storage/general and the global's Lua load
 * (mirror-layout.ts).
 */
export const DATAPLANE_CAPABILITIES: Capabilities = HAPROXY_CAPABILITIES;
