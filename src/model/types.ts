/**
 * The desired load-balancer state: virtual services, pools and members. Pure data, no I/O; every
 * adapter maps these to its own objects.
 */
export type Protocol = 'TCP' | 'UDP';
export type PathType = 'Prefix' | 'Exact' | 'ImplementationSpecific';

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

export interface Pool {
  name: string;
  protocol: Protocol;
  health: 'tcp' | 'udp' | 'http';
  members: Member[];
  /** The Kubernetes Service (namespace/name) and port the pool stands for. */
  service: string;
  servicePort: string;
}

export interface L4VirtualService {
  kind: 'l4';
  name: string;
  vip: string;
  port: number;
  protocol: Protocol;
  pool: string;
  /** The LoadBalancer Service (namespace/name) it serves. */
  source: string;
}

export interface HttpRoute {
  /** '' matches any host. */
  host: string;
  path: string;
  pathType: PathType;
  pool: string;
  /** The Ingress (namespace/name) the rule comes from. */
  source: string;
}

export interface L7VirtualService {
  kind: 'l7';
  name: string;
  vip: string;
  port: number;
  ingressClass: string;
  routes: HttpRoute[];
  defaultPool: string | undefined;
}

export type VirtualService = L4VirtualService | L7VirtualService;

export interface LbState {
  pools: Pool[];
  virtualServices: VirtualService[];
}

export type ObjectKind = 'pool' | 'virtualService';
