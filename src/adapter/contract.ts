/**
 * What every load-balancer adapter implements. Core code asks for capabilities, never for a
 * vendor's name: a new vendor is a folder, one line in adapters/index.ts (its Vendor,
 * src/adapter/vendor.ts) and a green contract run.
 */
import type { Change, Observed } from './changes.ts';
import type { AdapterErrorCode } from './errors.ts';
import type { z } from 'zod';
import type { LbAlgorithm, PersistenceType, Placement } from '../model/types.ts';

export interface Capabilities {
  l4: { tcp: boolean; udp: boolean };
  l7: boolean;
  /** Whether a member can carry its node's name where the LB admin sees it. */
  memberNodeTag: boolean;
  /** Whether a disabled (draining) member can be kept rather than removed. */
  drainingMembers: boolean;
  /**
   * How many `apply` calls may run at once (default 1). Above 1, the controller overlaps passes
   * whose objects are independent, so a change never waits behind an unrelated device call.
   */
  applyConcurrency?: number;
  /** Whether it holds certificates and terminates TLS (HTTPS virtual services). Absent: no. */
  certificates?: boolean;
  /** Whether it routes TLS connections by SNI without terminating them (L4 `sni`). Absent: no. */
  tlsPassthrough?: boolean;
  /**
   * TLS listeners in Terminate mode (L4VirtualService.certificates): the handshake ends at the
   * load balancer with a certificate chosen by SNI, routes by that name, members receive clear
   * text. Absent: such a listener is not accepted (UnsupportedValue).
   */
  tlsTerminate?: boolean;
  /**
   * TLS listeners of both modes on one port (Mixed): an L4 virtual service terminating TLS whose
   * SNI routes marked `passthrough` are routed by the ClientHello's name still encrypted, the
   * others terminated. Absent: both listeners refused (ProtocolConflict).
   */
  tlsMixed?: boolean;
  /**
   * Its section of LoadBalancerParameters (named after its vendor, src/adapter/vendor.ts) and which
   * of that section's settings it applies (virtual services' `placement`). Absent: it reads no
   * parameters (a class naming some is InvalidParameters, said).
   */
  parameters?: VendorParameters & { applies: readonly string[] };
  /** What HTTP routes may carry beyond host and path prefix. Absent: Ingress-style routes only. */
  http?: HttpCapabilities;
  /**
   * Whether it allocates VIPs from its own IPAM: virtual services then carry `auto:<group>`
   * (src/model/vips.ts) and `allocatedVips()` says which address each group got. Absent: no.
   */
  allocatesVips?: boolean;
  /**
   * Whether it checks members over HTTP as a pool's `check` says (the Pods' readiness probe).
   * Absent: no; such pools get a TCP check and their Service a ProbeNotFollowed Warning.
   */
  httpChecks?: boolean;
  /** HTTPS member checks (an HTTPS readiness probe on an L4 pool), the certificate not verified. */
  httpsChecks?: boolean;
  /** Whether an HTTP check sends the probe's headers (its `httpHeaders`, Host among them). */
  checkHeaders?: boolean;
  /** Checks by HEAD instead of GET (a BackendPolicy's healthCheck.method). Absent: GET only. */
  checkMethods?: boolean;
  /**
   * The statuses a check may expect (a BackendPolicy's healthCheck.expectedStatuses): `any` set
   * of ranges, or whole classes only (`classes`: 200-299, 300-399 ...). Absent: 2xx and 3xx only.
   */
  checkStatuses?: 'any' | 'classes';
  /**
   * The load-balancing algorithms a pool may ask for (a BackendPolicy). Absent: round robin only;
   * a policy asking another is not accepted for that Service, and says why.
   */
  algorithms?: readonly LbAlgorithm[];
  /** The session persistence a pool may ask for (`Cookie` on HTTP pools only). Absent: none. */
  persistence?: readonly PersistenceType[];
  /**
   * Whether an L4 virtual service may allow only some client addresses (`sourceRanges`). Absent:
   * no; such a virtual service is then not sent at all (fail closed) and its Service told why.
   */
  sourceRanges?: boolean;
  /**
   * How many ranges one L4 client filter may hold on this device. Absent: as many as the
   * validation boundary lets through (MAX_SERVICE_SOURCE_RANGES); a longer filter is not sent
   * (fail closed) and its Service told why.
   */
  maxSourceRanges?: number;
  /**
   * Whether its health read costs a device call per pool (`health(pools)` reads those alone): the
   * controller's timer then reads a bounded slice of the pools per tick, in turn, so its
   * background work follows time, not the number of pools. Absent: one read answers for all.
   */
  healthSlices?: boolean;
  /** Whether a pool may limit each member's connections (`maxConnections`). Absent: no. */
  maxConnections?: boolean;
  /**
   * Whether a member coming up may be ramped up (`slowStartSeconds`), and in steps of how many
   * seconds the device counts (some: whole minutes). Absent: no.
   */
  slowStart?: { stepSeconds: number };
  /**
   * Which member timeouts a pool may set (`connectTimeoutSeconds`, `serverTimeoutSeconds`).
   * Absent: none; a policy asking one is not accepted for that Service, and says why.
   */
  timeouts?: { connect: boolean; server: boolean };
  /**
   * Whether a pool may say how often a failed connection is tried again on another member
   * (`retries`): on `any` pool, or on `http` ones only (an L4 pool then keeps the device's
   * default, said on its Service). Absent: no.
   */
  retries?: 'any' | 'http';
  /**
   * Whether it serves IPv6: IPv6 VIPs (from vip.cidrs, or its own IPAM where it allocates) and
   * pools of IPv6 members. Absent: IPv4 only; a Service asking IPv6 is told (IPFamilyNotServed).
   */
  ipv6?: boolean;
}

export interface HttpCapabilities {
  pathTypes: ('Exact' | 'Prefix' | 'ImplementationSpecific' | 'RegularExpression')[];
  headerMatches: boolean;
  /** Header and query-parameter matches by regular expression (beside exact ones). Absent: no. */
  regexMatches?: boolean;
  queryMatches: boolean;
  methodMatches: boolean;
  headerModifiers: boolean;
  redirects: boolean;
  rewrites: boolean;
  /** Redirect status codes it can answer with. Absent: all the model has (301, 302, 303, 307, 308). */
  redirectCodes?: number[];
  /**
   * The dialect its regular expressions are read in: `pcre2` takes only what PCRE2 reads as
   * JavaScript does (src/source/regex-dialect.ts), anything else is refused for its route.
   * Absent: ECMAScript (what compiles with RegExp).
   */
  regexDialect?: 'ecmascript' | 'pcre2';
  /**
   * The header and query-parameter names it can match on (a route with another name is refused
   * alone, naming the field). Absent: any name the Gateway API allows.
   */
  matchNames?: { pattern: RegExp; description: string };
  /** How many query-parameter matches one route may carry. Absent: any number. */
  maxQueryMatches?: number;
  /** Traffic split over several pools by weight (and a 500 share for a backend that does not resolve). */
  weights: boolean;
  /** A route's own backend timeout (HTTPRoute rule `timeouts`). Absent: no. */
  timeouts?: boolean;
  /**
   * Client address filters on routes (`sourceRanges`: an Ingress's npl-lb.io/source-ranges): a
   * request a route takes from outside them is answered 403. Absent: no; such routes are not
   * served (fail closed) and their Ingress is told.
   */
  sourceRanges?: boolean;
  /**
   * How many ranges one route's client filter may hold. Absent: as many as the validation
   * boundary lets through (MAX_INGRESS_SOURCE_RANGES); a route with more is not served (fail
   * closed) and its Ingress told why.
   */
  maxSourceRanges?: number;
  /**
   * HTTP/2: from clients (prior knowledge on HTTP, ALPN on HTTPS) and to members in h2c, so
   * gRPC routes attach and Service ports of appProtocol kubernetes.io/h2c are spoken to in HTTP/2.
   * Absent: HTTP/1.1 only (a gRPC route is not a kind its listeners take).
   */
  http2?: boolean;
  /**
   * WebSocket: a client's `Upgrade: websocket` passed to the member and the connection then
   * tunnelled both ways (Service ports of appProtocol kubernetes.io/ws, and any route). Absent:
   * not claimed (HTTPRouteBackendProtocolWebSocket).
   */
  webSocket?: boolean;
  /**
   * TLS to members (BackendTLSPolicy): the name sent (SNI) and verified, against a CA bundle.
   * Absent: not served; a Service port a policy targets is refused (its share answers 500, never
   * in clear text) and the policy says so in its ancestors' status.
   */
  backendTls?: BackendTlsCapabilities;
  /**
   * Client certificates verified at HTTPS virtual services (L7VirtualService.clientValidation:
   * a Gateway's `spec.tls.frontend`), required or with the insecure fallback. Absent: not served;
   * an HTTPS listener asking for them is not accepted (never served to clients without one).
   */
  clientValidation?: boolean;
  /**
   * Client certificates asked for some hosts of a shared HTTPS virtual service alone
   * (L7VirtualService.hostClientValidation: an Ingress's `npl-lb.io/client-ca`), chosen by the TLS
   * server name; needs `misdirectedRequests` too, so a Host other than the name asked is answered
   * 421. Absent: an Ingress asking for them is not served (never to clients without one).
   */
  clientValidationByHost?: boolean;
  /**
   * A request whose TLS server name selects another HTTPS listener than its Host is answered 421
   * (L7VirtualService.listenerHosts), so HTTP/2 may be offered on HTTPS listeners (a client reuses
   * a connection for any name its certificate covers). Absent: not checked.
   */
  misdirectedRequests?: boolean;
  /**
   * A backendRef's own RequestHeaderModifier (WeightedBackend.requestHeaders), applied only when
   * that backend is picked. Absent: a route with one is refused by name.
   */
  backendHeaderModifiers?: boolean;
  /**
   * CORS (HttpRoute.cors): preflights answered by the load balancer, an allowed origin's answers
   * given the policy's headers. Absent: a route with a CORS filter is refused by name.
   */
  cors?: boolean;
  /**
   * Request mirrors (HttpRoute.mirrors: an HTTPRoute's RequestMirror filter): each request, or a
   * share of them, copied to other pools, their answers thrown away; `maxPerRoute`: how many one
   * route may carry. Absent: a route with a RequestMirror filter is refused by name.
   */
  mirror?: { maxPerRoute: number };
  /**
   * Route retries (an HTTPRoute rule's `retry`, Pool.retryStatuses): the statuses it can send a
   * request again on, and the most attempts it takes. Absent: a rule asking retries is refused by
   * name. A backoff between attempts, or retries bounded by a whole request's timeout, are refused
   * where `backoff` / `requestTimeout` are not declared; `needsStatuses`: a rule must name at
   * least one status (the device's retries are of statuses; its connection retries are its own).
   */
  retry?: {
    statuses: readonly number[];
    maxAttempts: number;
    backoff?: boolean;
    requestTimeout?: boolean;
    needsStatuses?: boolean;
  };
  /**
   * A route's session persistence by cookie (an HTTPRoute rule's `sessionPersistence`,
   * Pool.sessionCookie): the cookie named as the rule asks; `absoluteTimeout`: the device ends a
   * session that long after it began; `permanent`: the cookie can be given a Max-Age;
   * `browserSession`: a cookie without one, for the browser's session (lifetimeType Session, the
   * default; false where the device's inserted cookie always carries an expiry);
   * `browserSessionTimeout`: such a cookie's session still ends absoluteTimeout after it began
   * (absent: a Session cookie with an absoluteTimeout is refused); `timeoutStepSeconds` /
   * `maxTimeoutSeconds`: the lifetimes the device can write (absent: any whole second). Absent: a
   * rule asking it is refused by name (so is a type other than Cookie, on every device).
   */
  sessionCookie?: {
    absoluteTimeout: boolean;
    permanent: boolean;
    browserSession: boolean;
    browserSessionTimeout?: boolean;
    timeoutStepSeconds?: number;
    maxTimeoutSeconds?: number;
  };
  /**
   * A verified client's subject sent to members in a header (ClientValidation.subjectHeader; the
   * Gateway annotation npl-lb.io/client-certificate-header). Absent: such a listener is refused.
   */
  clientSubjectHeader?: boolean;
}

export interface BackendTlsCapabilities {
  /** `wellKnownCACertificates: System`: the device's own store of public CAs. */
  systemCa: boolean;
  /** How many DNS names (the hostname, or subjectAltNames of type Hostname) it verifies one of. */
  maxVerifyNames: number;
  /**
   * Whether it verifies a name other than the SNI it sends (subjectAltNames apart from the
   * hostname); a device that checks the certificate against the SNI it sends does not.
   */
  namesApartFromSni: boolean;
  /**
   * Whether it presents a client certificate to members (BackendTls.clientCertificate: a Gateway's
   * `spec.tls.backend.clientCertificateRef`). Absent: a Gateway naming one is refused by name.
   */
  clientCertificates?: boolean;
  /**
   * Whether the backends one weighted rule splits over must all ask the same TLS (clear text, or
   * one policy's names and CA): the device splits through one pool of all their members and speaks
   * one TLS to it. Such a rule is then refused by name (its share answers 500). Absent: they may
   * differ.
   */
  oneTlsPerSplit?: boolean;
}

export interface ApplyError {
  /** One of ADAPTER_ERROR_CODES (src/adapter/errors.ts; docs/errors.md). */
  code: AdapterErrorCode;
  message: string;
  /** true: retrying will not help (bad input); false: back off and retry. */
  terminal: boolean;
  /**
   * For a virtual service shared by several sources (an IngressClass's frontend): the sources
   * (route `source` keys) whose routes the device refused. Their routes are not served; the other
   * sources' routes are live. Absent: the change failed as a whole.
   */
  sources?: string[];
}

export interface ApplyResult {
  change: Change;
  ok: boolean;
  error?: ApplyError;
}

/**
 * A member's state as the device sees it, read by `health()`: its admin state on the device
 * (enabled, draining, or in maintenance by hand) apart from its health (the device's own check:
 * up, down, unchecked when the pool has no check, unknown when the device cannot say).
 */
export interface MemberHealth {
  pool: string;
  address: string;
  port: number;
  admin: 'enabled' | 'draining' | 'maint';
  health: 'up' | 'down' | 'unchecked' | 'unknown';
  /** The device's words for the last check, when it gives them (e.g. `L4CON`, `connection refused`). */
  reason?: string;
}

/** A failed start-up check; `terminal` when retrying cannot help (missing software, bad credentials). */
export class AdapterCheckError extends Error {
  constructor(
    message: string,
    readonly terminal: boolean,
  ) {
    super(message);
    this.name = 'AdapterCheckError';
  }
}

export interface LoadBalancerAdapter {
  readonly name: string;
  /** The owner mark this adapter writes and reads (the configured clusterName). */
  readonly owner: string;
  capabilities(): Capabilities;
  /**
   * Checks at start-up that the device is reachable and usable; throws AdapterCheckError. Resolves
   * with warnings worth a log line (a setting the device made it change), or nothing.
   */
  verify?(): Promise<readonly string[] | void>;
  /** The load balancer as it is: our objects in full, everyone else's by name and owner. */
  observe(): Promise<Observed>;
  /** Applies the changes in order; one result per change, a failure does not stop the others. */
  apply(changes: Change[]): Promise<ApplyResult[]>;
  /**
   * The operational state of the members of our pools, as the device reports it. Read-only and off
   * the write path (the controller calls it on a slow timer and on demand); optional.
   */
  health?(pools?: readonly string[]): Promise<MemberHealth[]>;
  /**
   * A cheap read that resolves when the device answers and throws when it does not (a status
   * call, not a full read): the controller's circuit breaker asks it while writes are held, and
   * on an idle timer. Absent: `observe()` is read instead.
   */
  probe?(): Promise<void>;
  /**
   * Where it allocates VIPs (Capabilities.allocatesVips): the address each group got, as last
   * observed or written (group -> address; a group not there yet has none).
   */
  allocatedVips?(): ReadonlyMap<string, string>;
  close(): Promise<void>;
}

/**
 * A vendor's own section of LoadBalancerParameters (`spec.<section>`): validated by its schema,
 * where the configured load balancer is that vendor; other vendors' sections are set aside, said.
 */
export interface VendorParameters {
  section: string;
  schema: z.ZodType;
  /** The placement a valid section gives the class's virtual services (its own fields). */
  placement(section: unknown): Placement;
}
