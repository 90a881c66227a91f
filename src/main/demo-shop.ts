/**
 * The demo's Deployments of its app's image (`npl-lb/demo-web`), which the sandbox's kubelet runs
 * as processes on addresses of their node's Pod CIDR, Ready when their readiness probe answers:
 * `web` and `web-v2` (the sample app), and `shop`, the one to roll: three replicas stopped after a
 * 2 s preStop sleep, each gated on the load balancer (`npl-lb.io/load-balancer-ready`: the
 * rollout waits until the load balancer has the new Pod and checks it up), behind the LoadBalancer Service
 * `shop`. `kubectl rollout restart`, `scale` and `delete pod` do what they do on a cluster while
 * traffic flows through the VIP.
 */
import { LB_READY_GATE } from '../kube/pod-ports.ts';
import { post } from './demo-app.ts';
import { APP_PORT } from './demo-banner.ts';
import type { SampleContext } from './demo-context.ts';

export async function createShop(c: Pick<SampleContext, 'kc'>): Promise<void> {
  await post(c.kc, '/api/v1/namespaces/default/services', {
    metadata: { name: 'shop' },
    spec: {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      selector: { app: 'shop' },
      ports: [{ name: 'http', port: APP_PORT, targetPort: 'http' }],
    },
  });
  await appDeployment(c, 'shop', 3, { gated: true, preStopSeconds: 2 });
}

/** A Deployment of the demo app: `replicas` Pods labelled `app: <name>`, serving on APP_PORT. */
export async function appDeployment(
  c: Pick<SampleContext, 'kc'>,
  name: string,
  replicas: number,
  o: { gated?: boolean; preStopSeconds?: number } = {},
): Promise<void> {
  await post(c.kc, '/apis/apps/v1/namespaces/default/deployments', {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          ...(o.gated ? { readinessGates: [{ conditionType: LB_READY_GATE }] } : {}),
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'web',
              image: 'npl-lb/demo-web:1.0',
              ports: [{ name: 'http', containerPort: APP_PORT }],
              readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
              ...(o.preStopSeconds
                ? { lifecycle: { preStop: { sleep: { seconds: o.preStopSeconds } } } }
                : {}),
            },
          ],
        },
      },
    },
  });
}
