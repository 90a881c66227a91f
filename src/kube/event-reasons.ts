/**
 * Every Event reason npl-lb writes, in one place. docs/errors.md lists them with what to do; a
 * test keeps the two in step.
 */
export const EventReasons = {
  // The controller, on Services and Ingresses: the load balancer, with the reasons of Kubernetes'
  // service controller and the cloud load-balancer controllers, which existing alerts match.
  EnsuringLoadBalancer: 'EnsuringLoadBalancer',
  EnsuredLoadBalancer: 'EnsuredLoadBalancer',
  UpdatedLoadBalancer: 'UpdatedLoadBalancer',
  SyncLoadBalancerFailed: 'SyncLoadBalancerFailed',
  DeletedLoadBalancer: 'DeletedLoadBalancer',
  NoReadyMembers: 'NoReadyMembers',
  WaitingForNodePortLocal: 'WaitingForNodePortLocal',
  NoVIP: 'NoVIP',
  VIPConflict: 'VIPConflict',
  InvalidVIP: 'InvalidVIP',
  // The controller, on Services: a loadBalancerSourceRanges entry that is not a CIDR; the Service's
  // virtual services are not sent (fail closed).
  InvalidSourceRange: 'InvalidSourceRange',
  VIPAnnotationIgnored: 'VIPAnnotationIgnored',
  // The controller, on Ingresses: their re-encryption annotations cannot be used (a value that
  // does not parse, a CA that does not resolve, a load balancer that speaks no TLS to members);
  // none of their rules is served (never in clear text where TLS was asked).
  InvalidBackendTLS: 'InvalidBackendTLS',
  // The controller, on Ingresses: their client-certificate annotation cannot be used (a CA that
  // does not resolve, a load balancer that cannot ask per host), or a host of theirs cannot ask
  // it (no certificate, another Ingress's CA on it); those rules are not served (never to clients
  // without a certificate where one was asked).
  InvalidClientCA: 'InvalidClientCA',
  // The controller, on Ingresses: their IngressClass's spec.parameters cannot be used; the class's
  // virtual services are not programmed (never placed elsewhere than asked).
  InvalidParameters: 'InvalidParameters',
  // The controller, on its own Pod: the load balancer stops or starts answering (writes are held
  // meanwhile).
  LoadBalancerUnreachable: 'LoadBalancerUnreachable',
  LoadBalancerReachable: 'LoadBalancerReachable',
  // The controller, on a TLS Secret (and the objects served with it): its certificate did not
  // reach the load balancer.
  CertificateRotationFailed: 'CertificateRotationFailed',
  // The controller, on Pods and their Services: NodePortLocal entries refused at the boundary.
  NodePortLocalRejected: 'NodePortLocalRejected',
  // The controller, on Services: the Pods' HTTP readiness probe cannot be the members' check (as
  // written, or on this load balancer); a TCP check is used.
  ProbeNotFollowed: 'ProbeNotFollowed',
  // The controller, on Services: a BackendPolicy asks what one of its pools cannot carry (Cookie
  // persistence on a LoadBalancer Service's L4 pool); that pool keeps none.
  PolicyNotApplied: 'PolicyNotApplied',
  // The controller, on Services: IPv6 (a Service's ipFamilies, its Pods' IPv6 mappings) is not
  // served yet; said, never dropped silently.
  IPFamilyNotServed: 'IPFamilyNotServed',
  // The controller, on Ingresses.
  InvalidIngressRule: 'InvalidIngressRule',
  BackendNotFound: 'BackendNotFound',
  BackendPortNotFound: 'BackendPortNotFound',
  UnsupportedBackend: 'UnsupportedBackend',
  InvalidTLSSecret: 'InvalidTLSSecret',
  TLSHostMismatch: 'TLSHostMismatch',
  UnsupportedByLoadBalancer: 'UnsupportedByLoadBalancer',
  IngressServed: 'IngressServed',
  // The controller, on Nodes in maintenance (excluded, autoscaler-tainted or cordoned).
  DrainingLoadBalancerMembers: 'DrainingLoadBalancerMembers',
  RemovedLoadBalancerMembers: 'RemovedLoadBalancerMembers',
  RestoredLoadBalancerMembers: 'RestoredLoadBalancerMembers',
  // The controller, on a Pod whose readiness gate (npl-lb.io/load-balancer-ready) has stayed False
  // past the threshold (readinessGateWarnSeconds): its rollout is waiting on the load balancer.
  LoadBalancerGatePending: 'LoadBalancerGatePending',
  // The agent, on Pods.
  InvalidNodePortLocalAnnotation: 'InvalidNodePortLocalAnnotation',
  NodePortLocalPortsExhausted: 'NodePortLocalPortsExhausted',
} as const;

export type EventReason = (typeof EventReasons)[keyof typeof EventReasons];
