/**
 * The demo's sample app, made on its sandbox as a user would: an IngressClass, the LoadBalancer
 * Service `web` and its Deployment of three Pods (processes the sandbox's kubelet runs on their
 * loopback Pod IPs), a certificate
 * and the Ingress serving it over HTTPS; then the Gateway API side: our GatewayClass, a second
 * version of the app, a Gateway and an HTTPRoute that splits 80/20 between the versions and adds
 * a header. Every server and file made is handed to the demo's clean-ups.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { selfSignedCertificate } from '../runtime/tls.ts';
import { post } from './demo-app.ts';
import { appDeployment } from './demo-shop.ts';
import { APP_PORT, GATEWAY_PORT, GW_HOST, HOST } from './demo-banner.ts';
import { classAnnotations, createDualStackService, gatewayAddresses } from './demo-dual-stack.ts';

export const GW_API = '/apis/gateway.networking.k8s.io/v1';

export type { DemoNode, SampleContext } from './demo-context.ts';
import type { SampleContext } from './demo-context.ts';

/** The app behind a LoadBalancer Service and an HTTPS Ingress; returns the CA file curl trusts. */
export async function createSampleApp(c: SampleContext): Promise<{ caFile: string }> {
  // The sample app: three Pods, a LoadBalancer Service and an Ingress.
  await post(c.kc, '/apis/networking.k8s.io/v1/ingressclasses', {
    metadata: { name: 'npl-lb', annotations: classAnnotations(c.dual, c.range) },
    spec: { controller: 'npl-lb.io/ingress-controller' },
  });
  await post(c.kc, '/api/v1/namespaces/default/services', {
    metadata: { name: 'web' },
    spec: {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: APP_PORT, targetPort: 'http' }],
    },
  });
  // Its three Pods, one per node (the first on node-1 gets ::1 too in dual-stack mode).
  await appDeployment(c, 'web', 3);
  if (c.dual) await createDualStackService(c.kc);
  // HTTPS: a certificate for the host, made now; curl trusts it through the file written here.
  const tls = await selfSignedCertificate(HOST);
  const caFile = join(c.workDir, 'web-ca.pem');
  writeFileSync(caFile, tls.cert);
  c.cleanups.push(() => rmSync(caFile, { force: true }));
  await post(c.kc, '/api/v1/namespaces/default/secrets', {
    metadata: { name: 'web-tls' },
    type: 'kubernetes.io/tls',
    data: {
      'tls.crt': Buffer.from(tls.cert).toString('base64'),
      'tls.key': Buffer.from(tls.key).toString('base64'),
    },
  });
  await post(c.kc, '/apis/networking.k8s.io/v1/namespaces/default/ingresses', {
    metadata: { name: 'web' },
    spec: {
      ingressClassName: 'npl-lb',
      tls: [{ hosts: [HOST], secretName: 'web-tls' }],
      rules: [
        {
          host: HOST,
          http: {
            paths: [
              {
                path: '/',
                pathType: 'Prefix',
                backend: { service: { name: 'web', port: { name: 'http' } } },
              },
            ],
          },
        },
      ],
    },
  });
  return { caFile };
}

/** The Gateway API side: a class, a second version of the app, a Gateway and a splitting route. */
export async function createGatewaySample(c: SampleContext): Promise<void> {
  // The Gateway API: our class, a second version of the app, and an HTTPRoute that splits 80/20
  // between the two versions and adds a header.
  await post(c.kc, `${GW_API}/gatewayclasses`, {
    metadata: { name: 'npl-lb' },
    spec: { controllerName: 'npl-lb.io/gateway-controller' },
  });
  await post(c.kc, '/api/v1/namespaces/default/services', {
    metadata: { name: 'web-v2' },
    spec: { selector: { app: 'web-v2' }, ports: [{ name: 'http', port: APP_PORT, targetPort: 'http' }] },
  });
  await appDeployment(c, 'web-v2', 2);
  await post(c.kc, `${GW_API}/namespaces/default/gateways`, {
    metadata: { name: 'web' },
    spec: {
      gatewayClassName: 'npl-lb',
      listeners: [{ name: 'http', port: GATEWAY_PORT, protocol: 'HTTP' }],
      ...gatewayAddresses(c.dual, c.range),
    },
  });
  await post(c.kc, `${GW_API}/namespaces/default/httproutes`, {
    metadata: { name: 'web-split' },
    spec: {
      parentRefs: [{ name: 'web' }],
      hostnames: [GW_HOST],
      rules: [
        {
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: { add: [{ name: 'X-Demo', value: 'gateway' }] },
            },
          ],
          backendRefs: [
            { name: 'web', port: APP_PORT, weight: 80 },
            { name: 'web-v2', port: APP_PORT, weight: 20 },
          ],
        },
      ],
    },
  });
}
