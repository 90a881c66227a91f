/**
 * Objects of a dual-stack cluster for the desired-state tests (test/unit/source/dual-stack*.test.ts):
 * two nodes with an address of each family (one written long-hand), a dual-stack app's Pods
 * mapped in both families, a LoadBalancer Service of any families and policy, an IngressClass of
 * ours with an Ingress to the app, and a configuration with a range of each family.
 */
import { type ControllerConfig, parseControllerConfig } from '../../src/config/controller-config.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  podSchema,
  serviceSchema,
} from '../../src/kube/objects.ts';
import type { ClusterView } from '../../src/source/desired.ts';

export const cfg = (cidrs = '[192.0.2.0/28, "fd00:10::/120"]'): ControllerConfig =>
  parseControllerConfig(`clusterName: c1\nvip: {cidrs: ${cidrs}}\n`);
export const entry = (nodeIP: string, nodePort: number, ipFamily: 'IPv4' | 'IPv6') => ({
  podPort: 8080,
  nodeIP,
  nodePort,
  protocol: 'tcp',
  ipFamily,
});
export const pod = (name: string, node: string, entries: object[]) =>
  podSchema.parse({
    metadata: {
      name,
      namespace: 'default',
      labels: { app: 'web' },
      annotations: { 'nodeportlocal.antrea.io': JSON.stringify(entries) },
    },
    spec: { nodeName: node, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  });
export const node = (name: string, ...ips: string[]) =>
  nodeSchema.parse({
    metadata: { name },
    status: {
      addresses: ips.map((address) => ({ type: 'InternalIP', address })),
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
// The node's IPv6 address is written long-hand: members compare by canonical text.
export const nodes = [node('n1', '192.0.2.101', 'FD00:0:0:0::101'), node('n2', '192.0.2.102', 'fd00::102')];
export const svc = (
  name: string,
  families: string[] | undefined,
  policy: string | undefined,
  extra: Record<string, unknown> = {},
  annotations: Record<string, string> = {},
) =>
  serviceSchema.parse({
    metadata: { name, namespace: 'default', annotations },
    spec: {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      ...(families ? { ipFamilies: families } : {}),
      ...(policy ? { ipFamilyPolicy: policy } : {}),
      ...extra,
    },
  });
export const view = (v: Partial<ClusterView>): ClusterView => ({
  services: [],
  ingresses: [],
  ingressClasses: [],
  pods: [],
  nodes,
  ...v,
});
export const dualPods = [
  pod('a', 'n1', [entry('192.0.2.101', 61000, 'IPv4'), entry('fd00::101', 61001, 'IPv6')]),
  pod('b', 'n2', [entry('192.0.2.102', 61000, 'IPv4'), entry('fd00:0::102', 61002, 'IPv6')]),
];

export const webClass = ingressClassSchema.parse({
  metadata: { name: 'web' },
  spec: { controller: 'npl-lb.io/ingress-controller' },
});
export const site = ingressSchema.parse({
  metadata: { name: 'site', namespace: 'default' },
  spec: {
    ingressClassName: 'web',
    rules: [
      {
        host: 'a.example.com',
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: { service: { name: 'web', port: { number: 80 } } },
            },
          ],
        },
      },
    ],
  },
});
export const backendSvc = serviceSchema.parse({
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
});
