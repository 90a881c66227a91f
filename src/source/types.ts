/**
 * The shared types of the desired-state sources: what each source kind gives the assembler
 * (desired.ts) and what a pass tells the objects it comes from. Types only: every source file
 * imports from here, and this file imports no source file, so src/source/ has no import circle.
 */
import type { Service } from '../kube/objects.ts';
import type {
  BackendTls,
  Certificate,
  LbState,
  Pool,
  RouteRetry,
  SessionCookie,
  VirtualService,
} from '../model/types.ts';
import type { PoolPolicy, PolicyAncestor } from './backend-policies.ts';
import type { GatewayResult } from './gateway/results.ts';
import type { IpFamily } from './ip-family.ts';

export type ServicePort = Service['spec']['ports'][number];

export interface SourceStatus {
  /** The VIP of its first family (a Service's primary one). */
  vip: string | undefined;
  /** The VIPs of its further families (IPv6 beside IPv4: dual-stack), each with its virtual services. */
  moreVips?: string[] | undefined;
  virtualServices: string[];
  problem: string | undefined;
  /** The Event reason of `problem` (VIPConflict, InvalidVIP, NoVIP). */
  reason?: string | undefined;
  /** Virtual services the load balancer cannot serve (see capabilities.ts): not sent. */
  unsupported?: string[] | undefined;
}

/**
 * Something an object's author should hear about: a value refused at the validation boundary, a
 * backend that does not resolve, NodePortLocal entries dropped. Becomes an Event on the object.
 */
export interface Finding {
  kind: 'Service' | 'Ingress' | 'Pod';
  /** namespace/name */
  key: string;
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * A VIP as a source sees it: the address (of `family`), or why there is none (with its Event
 * reason); `more`, the addresses of further families the object is served in. A problem beside an
 * address is one of a further family's (the object is served in the others).
 */
export interface VipOutcome {
  vip?: string;
  family?: IpFamily;
  more?: { family: IpFamily; vip: string }[];
  problem?: string;
  reason?: string;
  /** The problem is an address kind npl-lb does not serve (a Gateway's: UnsupportedAddress). */
  unsupported?: true;
}

/** A pool a virtual service asked for: a Service port, checked one way, under one name. */
export interface PoolRequest {
  name: string;
  svc: Service;
  /** The Service's namespace/name. */
  svcKey: string;
  port: ServicePort;
  health: Pool['health'];
  /** The family of its members; absent: IPv4. */
  family?: IpFamily;
  /** The Service port's BackendPolicy, when one applies (backend-policies.ts). */
  policy?: PoolPolicy;
  /** `h2c`: members are spoken to in HTTP/2 (Pool.backendProtocol). */
  backendProtocol?: 'h2c';
  /** TLS to the members (Pool.backendTls): a BackendTLSPolicy over the Service port. */
  backendTls?: BackendTls;
  /** A route rule's retries (Pool.retryStatuses and retries): the pool is that rule's variant. */
  retry?: RouteRetry;
  /** A route rule's session cookie (Pool.sessionCookie): the pool is that rule's variant. */
  session?: SessionCookie;
}

/** A pool built from its request and the Pods it selects. */
export interface PoolBuild {
  pool: Pool;
  /** Selected Pods still waiting for their NodePortLocal annotation. */
  waiting: string[];
  findings: Finding[];
}

/**
 * Everything a pass builds from Services, Ingresses, classes, Secrets and the Gateway API objects,
 * before any Pod is looked at: the virtual services, what they serve, each source object's status,
 * and the pools they ask for (in the order asked, each once).
 */
export interface Frontends {
  virtualServices: VirtualService[];
  certificates: Certificate[];
  services: Map<string, SourceStatus>;
  ingresses: Map<string, SourceStatus>;
  gateways: GatewayResult | undefined;
  findings: Finding[];
  pools: PoolRequest[];
  /** Each BackendPolicy's status per target (namespace/name of the policy). */
  policies: Map<string, PolicyAncestor[]>;
}

export interface DesiredResult {
  state: LbState;
  /** Per LoadBalancer Service (namespace/name). */
  services: Map<string, SourceStatus>;
  /** Per Ingress of ours (namespace/name). */
  ingresses: Map<string, SourceStatus>;
  /** Per Service (namespace/name): selected Pods still waiting for their NodePortLocal annotation. */
  waiting: Map<string, string[]>;
  /** Problems to report as Events, each on the object it comes from. */
  findings: Finding[];
  /** The Gateway API objects' statuses and backends; absent when no GatewayClass exists. */
  gateways?: GatewayResult;
  /** Each BackendPolicy's status per target (namespace/name of the policy); absent: none. */
  policies?: Map<string, PolicyAncestor[]>;
}
