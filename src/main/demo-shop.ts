/**
 * The demo's Deployment to roll: `shop`, three replicas of the demo app's image, which the
 * sandbox's kubelet runs as processes on addresses of their node's Pod CIDR (Ready when their
 * readiness probe answers, stopped after a 2 s preStop sleep), each gated on the load balancer
 * (`npl-lb.io/load-balancer-ready`: the rollout waits until HAProxy has the new Pod and checks it
 * up), behind the LoadBalancer Service `shop`. `kubectl rollout restart`, `scale` and
 * `delete pod` do what they do on a cluster while traffic flows through the VIP.
 */
import { LB_READY_GATE } from '../kube/pod-ports.ts';
import { post } from './demo-app.ts';
import { APP_PORT } from './demo-banner.ts';
import type { SampleContext } from './demo-sample.ts';

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
  await post(c.kc, '/apis/apps/v1/namespaces/default/deployments', {
    metadata: { name: 'shop' },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'shop' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      template: {
        metadata: { labels: { app: 'shop' } },
        spec: {
          readinessGates: [{ conditionType: LB_READY_GATE }],
          terminationGracePeriodSeconds: 10,
          containers: [
            {
              name: 'web',
              image: 'npl-lb/demo-web:1.0',
              ports: [{ name: 'http', containerPort: APP_PORT }],
              readinessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 1 },
              lifecycle: { preStop: { sleep: { seconds: 2 } } },
            },
          ],
        },
      },
    },
  });
}
