/**
 * The desired load-balancer state: virtual services, pools and members. Pure data, no I/O; every
 * adapter maps these to its own objects.
 */
import type { BackendTls, ClientValidation, HostClientValidation } from './tls.ts';
import type { SessionCookie } from './route-variants.ts';

export { SYSTEM_CA, type BackendTls, type ClientValidation, type HostClientValidation } from './tls.ts';
export type { RouteRetry, RuleVariant, SessionCookie } from './route-variants.ts';
export type Protocol = 'TCP' | 'UDP';
export type PathType = 'Prefix' | 'Exact' | 'ImplementationSpecific' | 'RegularExpression';

export interface Member {
  address: string;
  port: number;
  /** The node that hosts the backend (NodePortLocal and NodePort), so an admin sees who serves. */
  node: string;
  /** namespace/name of the backend Pod ('' in NodePort mode, where a member is a node). */
  pod: string;
  /** false: draining (a terminating or not-ready Pod). */
  enabled: boolean;
}

/**
 * How the load balancer checks each member, when the application says (its Pods' readiness probe):
 * an HTTP GET of `path` over plain HTTP, a 2xx or 3xx status meaning up (the kubelet's rule), at
 * the probe's period and timeout, up after `rise` and down after `fall` results in a row.
 * Without one a pool's members get a TCP connect check (UDP pools: the device's UDP check).
 */
/** HTTP statuses from `from` to `to`, both included. */
export interface StatusRange {
  from: number;
  to: number;
}

export interface HttpCheck {
  type: 'http';
  path: string;
  /**
   * Over TLS (an HTTPS probe), the certificate not verified, as the kubelet does not verify it.
   * Only on L4 pools: their traffic passes through as it is, so the Pods' TLS reaches the client.
   */
  tls?: true;
  /**
   * Headers the probe sends (its `httpHeaders`, `Host` among them): names RFC 9110 tokens, values
   * printable ASCII, from the validation boundary (src/source/health-check.ts).
   */
  headers?: { name: string; value: string }[];
  /** `HEAD` instead of GET (a BackendPolicy's); absent: GET, as the kubelet's probe. */
  method?: 'HEAD';
  /**
   * The statuses meaning up, as ranges (sorted, disjoint, not adjacent); absent: 200-399, the
   * kubelet's rule for a probe.
   */
  expect?: StatusRange[];
  intervalSeconds: number;
  timeoutSeconds: number;
  rise: number;
  fall: number;
}

/**
 * How a pool spreads new connections over its members (absent: round robin). The hashes are
 * consistent: on the client's address, a request header's value, or a cookie's (`hashKey` names
 * the header or cookie), so one client keeps its member while the members stay.
 */
export type LbAlgorithm = 'RoundRobin' | 'LeastConnections' | 'SourceHash' | 'HeaderHash' | 'CookieHash';

/** The algorithms that hash a request header or cookie, named by the pool's `hashKey`. */
export const KEYED_HASHES: readonly LbAlgorithm[] = ['HeaderHash', 'CookieHash'];

/**
 * How a client is kept on one member: `Cookie`, a cookie the load balancer inserts naming the
 * member (HTTP pools only); `SourceIP`, the client's address remembered for a while.
 */
export type PersistenceType = 'Cookie' | 'SourceIP';

export interface Pool {
  name: string;
  protocol: Protocol;
  /** The pool's traffic: `http` serves HTTP routes (L7), `tcp` and `udp` L4 virtual services. */
  health: 'tcp' | 'udp' | 'http';
  /** The member check the application's probe asks for; absent: a TCP (UDP) connect check. */
  check?: HttpCheck;
  /** From the Service's BackendPolicy (src/source/backend-policies.ts); absent: round robin. */
  algorithm?: LbAlgorithm;
  /**
   * The header (HeaderHash) or cookie (CookieHash) whose value is hashed: letters, digits, `-`
   * and `_`, from the validation boundary. Absent with the other algorithms.
   */
  hashKey?: string;
  /** From the Service's BackendPolicy; absent: none. */
  persistence?: PersistenceType;
  /** Connections one member takes at once (the others wait at the load balancer); absent: no limit. */
  maxConnections?: number;
  /** Seconds over which a member that comes up is given its full share; absent: at once. */
  slowStartSeconds?: number;
  /** Seconds the load balancer waits to connect to a member; absent: the device's default. */
  connectTimeoutSeconds?: number;
  /** Seconds the load balancer waits for a member to answer; absent: the device's default. */
  serverTimeoutSeconds?: number;
  /**
   * How many more times the load balancer tries to connect when connecting to a member fails, each
   * time to another member where it can (0: never); absent: the device's default.
   */
  retries?: number;
  /**
   * A route's retries (an HTTPRoute rule's `retry`, HTTP pools only): a request is sent again, up
   * to `retries` more times, when its member answers one of these statuses, or when the
   * connection fails or is closed before an answer (an empty list: those alone). Absent: a failed
   * connection alone is tried again, the device's default.
   */
  retryStatuses?: number[];
  /**
   * A route's sessions (an HTTPRoute rule's `sessionPersistence` of type Cookie, HTTP pools only):
   * the inserted cookie's name and lifetime; set with `persistence: 'Cookie'`. Absent: a cookie
   * of persistence is the pool's own (persistenceCookie), for the browser's session.
   */
  sessionCookie?: SessionCookie;
  /**
   * `h2c`: the load balancer speaks HTTP/2 to members without TLS, with prior knowledge (gRPC, and
   * Service ports of appProtocol kubernetes.io/h2c); absent: HTTP/1.1 (L7) or bytes (L4).
   */
  backendProtocol?: 'h2c';
  /**
   * TLS to the members (a BackendTLSPolicy over the Service port): the name sent and verified,
   * and the CA their certificates must chain to. Absent: clear text (or bytes, L4).
   */
  backendTls?: BackendTls;
  members: Member[];
  /** The Kubernetes Service (namespace/name) and port the pool stands for. */
  service: string;
  servicePort: string;
}

/**
 * A pool's BackendPolicy: how it balances, keeps clients, limits and times its members. Every
 * field here is one the device has a field for; adapters read each back from that field.
 */
export type PoolPolicy = Pick<Pool, (typeof POLICY_FIELDS)[number]>;

/** The policy's fields, in one list (what forces a rewrite of a pool beside its check and members). */
export const POLICY_FIELDS = [
  'algorithm',
  'hashKey',
  'persistence',
  'maxConnections',
  'slowStartSeconds',
  'connectTimeoutSeconds',
  'serverTimeoutSeconds',
  'retries',
  'retryStatuses',
  'sessionCookie',
  'backendProtocol',
  'backendTls',
] as const satisfies readonly (keyof Pool)[];

/** A TLS passthrough route: connections whose ClientHello names `host` go to `pool`, still encrypted. */
export interface SniRoute {
  /** `*.example.com` covers one or more labels; the most specific host that matches wins. */
  host: string;
  pool: string;
  /** The route (Kind namespace/name) it comes from. */
  source: string;
  /**
   * In a virtual service terminating TLS (`certificates`): this name's connections pass through
   * still encrypted, routed by the ClientHello (a Passthrough listener sharing the port with a
   * Terminate one: Mixed mode, Capabilities.tlsMixed). Absent: as the virtual service does.
   */
  passthrough?: true;
}

/**
 * Where and how a virtual service runs on the device, from its class's LoadBalancerParameters
 * (absent: the adapter's configured place and defaults): the fields of the configured vendor's own
 * section, as that vendor reads them (its Capabilities `parameters.placement`: a Service Engine
 * group, a partition, frontend limits). Opaque to the core, which compares and merges it only.
 */
export type Placement = Readonly<Record<string, unknown>>;

export interface L4VirtualService {
  kind: 'l4';
  name: string;
  vip: string;
  port: number;
  protocol: Protocol;
  /** The pool of every connection; '' when `sni` routes them. */
  pool: string;
  /** The LoadBalancer Service (namespace/name), or the Gateway API route (Kind namespace/name), it serves. */
  source: string;
  /** TLS passthrough (a Gateway TLS listener): connections routed by SNI; none matching is refused. */
  sni?: SniRoute[];
  /**
   * TLS terminated here (a Gateway TLS listener in Terminate mode): the certificates (by name) offered
   * by the client's server name, the first the default; `sni` then routes by the name asked in the
   * handshake and members receive the decrypted stream. Absent: passthrough, or plain TCP.
   */
  certificates?: string[];
  /**
   * The client addresses allowed (CIDRs of the VIP's family in network form, a Service's
   * `loadBalancerSourceRanges`), every other connection refused; an empty list refuses all.
   * Absent: any client.
   */
  sourceRanges?: string[];
  /** Where it runs (its class's parameters); absent: the adapter's configured place. */
  placement?: Placement;
}

/** A header or query-parameter match (names of headers compare without case). */
export interface ValueMatch {
  name: string;
  value: string;
  type: 'Exact' | 'RegularExpression';
}

export interface HeaderChange {
  name: string;
  value: string;
}

/** Request or response header changes: set replaces, add appends, remove drops. */
export interface HeaderModifier {
  set: HeaderChange[];
  add: HeaderChange[];
  remove: string[];
}

export interface PathModifier {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  value: string;
}

export interface Redirect {
  scheme?: 'http' | 'https';
  hostname?: string;
  port?: number;
  path?: PathModifier;
  statusCode: 301 | 302 | 303 | 307 | 308;
}

export interface Rewrite {
  hostname?: string;
  path?: PathModifier;
}

/**
 * Cross-origin resource sharing (an HTTPRoute's CORS filter), as the load balancer answers it: a
 * preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) is answered by the load
 * balancer itself, never sent to a member; an allowed origin gets the headers below and an
 * allowed origin's other requests get `Access-Control-Allow-Origin` (echoed), the credentials and
 * exposed headers on the member's answer. Values passed the validation boundary (route-filters.ts).
 */
/**
 * A copy of a route's requests sent to a second pool, its answer thrown away (an HTTPRoute's
 * RequestMirror filter): every request, or `numerator` in `denominator` of them, picked at random.
 */
export interface Mirror {
  pool: string;
  share?: { numerator: number; denominator: number };
}

export interface CorsPolicy {
  /**
   * `scheme://host[:port]`, the host's leftmost `*` covering one or more labels (`*` alone: any
   * host); `*` alone: any origin. Without a port, the scheme's default port matches too.
   */
  allowOrigins: string[];
  /** Methods a preflight is told; `*` alone: the one it asks for is echoed. */
  allowMethods: string[];
  /** Request headers a preflight is told; `*` alone: the ones it asks for are echoed. */
  allowHeaders: string[];
  /** Response headers scripts may read (`Access-Control-Expose-Headers`). */
  exposeHeaders: string[];
  allowCredentials: boolean;
  /** How long a browser may keep a preflight's answer (`Access-Control-Max-Age`), in seconds. */
  maxAgeSeconds: number;
}

/** A share of a route's traffic; `pool: null` is a backend that does not resolve (its share answers 500). */
export interface WeightedBackend {
  pool: string | null;
  weight: number;
  /** Request header changes made only when this backend is picked (a backendRef's filters), after the route's. */
  requestHeaders?: HeaderModifier;
}

export interface HttpRoute {
  /**
   * '' matches any host; `*.example.com` one or more labels in front (a Gateway API route, with
   * `order`), exactly one for an Ingress rule (no `order`), as each spec says.
   */
  host: string;
  path: string;
  pathType: PathType;
  /** The pool of the route; '' when `backends` split it, or when it redirects. */
  pool: string;
  /** The Ingress or route (Kind namespace/name) the rule comes from. */
  source: string;
  headers?: ValueMatch[];
  queryParams?: ValueMatch[];
  method?: string;
  /** Traffic split by weight (two or more backends, or one that does not resolve). */
  backends?: WeightedBackend[];
  requestHeaders?: HeaderModifier;
  responseHeaders?: HeaderModifier;
  redirect?: Redirect;
  rewrite?: Rewrite;
  cors?: CorsPolicy;
  /** Pools each request (or a share of them) is copied to, after the route's header changes. */
  mirrors?: Mirror[];
  /**
   * How long the backend may take to answer, in ms (an HTTPRoute rule's `timeouts`: the shorter of
   * `request` and `backendRequest`, which are one wait where there are no retries); 0: the route
   * lifts the limit. Absent: the pool's own.
   */
  timeoutMs?: number;
  /** Precedence, lowest first (the Gateway API's order, from the source); absent for Ingress rules. */
  order?: number;
  /**
   * The client addresses the route serves (CIDRs in network form, both families; an Ingress's
   * `npl-lb.io/source-ranges`): a request it takes from anyone else is answered 403, and an empty
   * list answers every one so. Absent: any client.
   */
  sourceRanges?: string[];
}

/**
 * A certificate and key from a Secret, as the load balancer will hold it. The key is a secret: it is
 * never logged, never in the state API or the dashboard.
 */
export interface Certificate {
  name: string;
  /** The Secret (namespace/name) it comes from. */
  source: string;
  /** The PEM chain, leaf first. */
  certPem: string;
  keyPem: string;
  /** The leaf's subject, as `CN=...`. */
  subject: string;
  /** DNS names the leaf is for (SANs, else the CN), lower case. */
  sniNames: string[];
  /** SHA-256 fingerprint of the leaf, as `AA:BB:...`. */
  fingerprint: string;
  /** Expiry of the leaf (ISO 8601). */
  notAfter: string;
}

export interface L7VirtualService {
  kind: 'l7';
  name: string;
  vip: string;
  port: number;
  /** The IngressClass it serves, or the GatewayClass of the Gateway it serves (named by gatewayVsName). */
  ingressClass: string;
  /**
   * A request goes to the routes of the most specific host that matches it (exact, then the
   * longest wildcard, then ''), and among those to the first that matches by `order` (Ingress
   * rules without `order`: Exact, then the longest Prefix). So a listener's routes never serve the
   * hosts of a more specific listener on the same port (the Gateway API's listener isolation).
   */
  routes: HttpRoute[];
  defaultPool: string | undefined;
  /** HTTPS terminates TLS with `certificates` (chosen by SNI; the first is the default). HTTP when absent. */
  protocol?: 'HTTP' | 'HTTPS';
  /** Names of Certificate objects, the default first. */
  certificates?: string[];
  /** HTTPS only: client certificates asked and verified at the handshake. Absent: none asked. */
  clientValidation?: ClientValidation;
  /** HTTPS only: client certificates asked for some hosts alone, sorted by host. Absent: none. */
  hostClientValidation?: HostClientValidation[];
  /**
   * HTTPS only: the hostnames of the listeners sharing the port ('' for one without), so that a
   * request whose TLS server name selects another listener than its Host is answered 421
   * Misdirected Request (http-match.ts listenerOf). Absent: not checked.
   */
  listenerHosts?: string[];
  /** Where it runs (its class's parameters); absent: the adapter's configured place. */
  placement?: Placement;
  /**
   * Clients may speak HTTP/2 (a route kind of HTTP/2, gRPC, is attached): with prior knowledge on HTTP, offered by
   * ALPN on HTTPS. Absent: HTTP/1.1 is what the virtual service is set up for.
   */
  http2?: true;
}

export type VirtualService = L4VirtualService | L7VirtualService;

export interface LbState {
  pools: Pool[];
  virtualServices: VirtualService[];
  /** Absent: none (adapters without certificates never carry them). */
  certificates?: Certificate[];
}

export type ObjectKind = 'pool' | 'virtualService' | 'certificate';
