/**
 * What the demo prints once it runs: where its API server is, how to point kubectl at it, and a
 * curl command per way in (LoadBalancer Service, Ingress over HTTP and HTTPS, Gateway), each of
 * which the demo's test runs verbatim.
 */
export const APP_PORT = 8080;
export const HOST = 'web.demo.local';
export const HTTPS_PORT = 8443;
export const GW_HOST = 'gw.demo.local';
export const GATEWAY_PORT = 8081;

export interface BannerFacts {
  api: string;
  lbNote: string;
  kubeconfig: string;
  /** The VIPs of the LoadBalancer Service, the Ingress and the Gateway (undefined: none yet). */
  l4: string | undefined;
  l7: string | undefined;
  gw: string | undefined;
  /** The VIP of the LoadBalancer Service shop (the Deployment to roll). */
  shop: string | undefined;
  /** The CA file curl trusts the Ingress's certificate with. */
  caFile: string;
  dashboard: string;
  /** More curl lines (the dual-stack Service's). */
  extra: string[];
}

export function demoBanner(f: BannerFacts): string {
  const none = '(no VIP yet)';
  return [
    '',
    `npl-lb demo: sandbox API server ${f.api}, 3 nodes with agents, load balancer: ${f.lbNote}`,
    '',
    'Point kubectl at it from another terminal:',
    `  export KUBECONFIG=${f.kubeconfig}`,
    '  kubectl get nodes,pods,services,ingresses -o wide',
    '  kubectl get gateways,httproutes',
    "  kubectl get pods -l app=web -o jsonpath='{.items[0].metadata.annotations.nodeportlocal\\.antrea\\.io}'",
    '  (no kubectl installed? `npm run kubectl -- get pods -o wide` uses the one npl-lb tests with)',
    'The controller serves every namespace: a LoadBalancer Service with loadBalancerClass npl-lb.io/lb, an Ingress',
    'of class npl-lb or a Gateway of class npl-lb gets a VIP wherever you add it.',
    '',
    'Send traffic through the load balancer (each answer names its Pod and node):',
    `  curl http://${f.l4 ?? none}:${APP_PORT}/                       # LoadBalancer Service web`,
    `  curl -H 'Host: ${HOST}' http://${f.l7 ?? none}:8080/    # Ingress web`,
    `  curl -H 'Host: ${GW_HOST}' http://${f.gw ?? none}:${GATEWAY_PORT}/    # Gateway web: 80/20 to web and web-v2, adds X-Demo`,
    `  curl --cacert ${f.caFile} --resolve ${HOST}:${HTTPS_PORT}:${f.l7 ?? none} https://${HOST}:${HTTPS_PORT}/    # Ingress web, HTTPS`,
    ...f.extra,
    '',
    'Roll the Deployment shop with traffic flowing (its Pods run as processes; each waits for the load balancer):',
    `  while sleep 0.2; do curl -s http://${f.shop ?? none}:${APP_PORT}/; done    # LoadBalancer Service shop`,
    '  kubectl rollout restart deploy/shop && kubectl rollout status deploy/shop',
    '  kubectl scale deploy/shop --replicas=5',
    '  kubectl delete $(kubectl get pod -l app=shop -o name | head -n1)',
    '',
    `Pools by node: ${f.dashboard}/ (dashboard), or: npx npl-lb pools --server ${f.dashboard}`,
    '',
    'Press Ctrl-C to stop; everything the demo started is stopped and its files removed.',
    '',
  ].join('\n');
}
