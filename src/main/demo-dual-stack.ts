/**
 * `npm start -- --dual-stack`: the demo in both address families, on loopback only (::1 is the one
 * IPv6 loopback address there is). node-1 gets ::1 as its IPv6 InternalIP and ::1/128 as its IPv6
 * Pod CIDR, so the web Pod the sandbox's kubelet starts there first gets ::1 as its IPv6 Pod IP and
 * the agent maps it in both families; a RequireDualStack LoadBalancer Service `web-dual` gets an
 * IPv4 VIP from the demo's range and ::1 (its only IPv6 VIP) on a port of its own (that Pod serves
 * 8080 on ::1 already); the IngressClass and the Gateway ask IPv4 addresses, so
 * they do not compete for ::1.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { VIP_ANNOTATION } from '../kube/annotations.ts';
import { getJson, type RawObject } from '../kube/raw-client.ts';
import { hostPort } from '../model/names.ts';
import { post } from './demo-app.ts';
import type { DemoRange } from './demo-range.ts';

export const DUAL_STACK = {
  /** node-1's IPv6 address and Pod CIDR (/128), its web Pod's IPv6 Pod IP and web-dual's IPv6 VIP. */
  ipv6: '::1',
  /** web-dual's port: its IPv6 VIP is ::1, where node-1's web Pod listens on the app's port. */
  port: 9080,
} as const;

/** vip.cidrs of the demo's controller. */
export const demoCidrs = (dual: boolean, r: DemoRange): string =>
  dual ? `[${r.cidr}, "${DUAL_STACK.ipv6}/128"]` : `[${r.cidr}]`;

/** The IngressClass's annotations: an IPv4 address of its own in dual-stack mode. */
export const classAnnotations = (dual: boolean, r: DemoRange): Record<string, string> =>
  dual ? { [VIP_ANNOTATION]: r.vip(100) } : {};

/** The Gateway's spec.addresses: an IPv4 address of its own in dual-stack mode. */
export const gatewayAddresses = (
  dual: boolean,
  r: DemoRange,
): { addresses?: { type: string; value: string }[] } =>
  dual ? { addresses: [{ type: 'IPAddress', value: r.vip(101) }] } : {};

/** The dual-stack Service, over the sample app's Pods. */
export async function createDualStackService(kc: KubeConfig): Promise<void> {
  await post(kc, '/api/v1/namespaces/default/services', {
    metadata: { name: 'web-dual', annotations: { [VIP_ANNOTATION]: DUAL_STACK.ipv6 } },
    spec: {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      ipFamilies: ['IPv4', 'IPv6'],
      ipFamilyPolicy: 'RequireDualStack',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: DUAL_STACK.port, targetPort: 'http' }],
    },
  });
}

/** web-dual's addresses once both are published (its status lists one per family). */
export async function dualStackVips(kc: KubeConfig): Promise<string[]> {
  const o = (await getJson(kc, '/api/v1/namespaces/default/services/web-dual', {}).catch(() => undefined)) as
    RawObject | undefined;
  const ingress = (o?.status as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined)?.loadBalancer
    ?.ingress;
  return (ingress ?? []).map((i) => i.ip ?? '').filter(Boolean);
}

/** The banner's lines for web-dual: a curl per family. */
export function dualStackBanner(vips: string[]): string[] {
  if (vips.length < 2)
    return ['  (web-dual has no address of each family yet: kubectl describe service web-dual)'];
  return vips.map(
    (v) =>
      `  curl ${v.includes(':') ? '-g ' : ''}http://${hostPort(v, DUAL_STACK.port)}/    # LoadBalancer Service web-dual (RequireDualStack), ${v.includes(':') ? 'IPv6' : 'IPv4'}`,
  );
}
