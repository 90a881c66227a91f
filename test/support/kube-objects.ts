/**
 * The test kit's Kubernetes objects: Pods, Services, Nodes, Ingresses and classes as the
 * controller's cache holds them (parsed by the product's own schemas), the NodePortLocal
 * annotation, and a cluster view. One set for every test, instead of a copy per file.
 */
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  podSchema,
  serviceSchema,
  type Ingress,
  type IngressClass,
  type Node,
  type Pod,
  type Service,
} from '../../src/kube/objects.ts';
import type { ClusterView } from '../../src/source/view.ts';

/** The `nodeportlocal.antrea.io` annotation for [podPort, nodeIP, nodePort] entries (TCP, IPv4). */
export const nplAnnotation = (entries: [number, string, number][]): string =>
  JSON.stringify(
    entries.map(([podPort, nodeIP, nodePort]) => ({
      podPort,
      nodeIP,
      nodePort,
      protocol: 'tcp',
      ipFamily: 'IPv4',
    })),
  );

export interface PodOptions {
  namespace?: string;
  node?: string;
  ready?: boolean;
  /** The NodePortLocal annotation's text. */
  npl?: string;
  deleting?: boolean;
  labels?: Record<string, string>;
  ip?: string;
  resourceVersion?: string;
}

export const kubePod = (name: string, o: PodOptions = {}): Pod =>
  podSchema.parse({
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      labels: o.labels ?? { app: 'web' },
      annotations: o.npl ? { 'nodeportlocal.antrea.io': o.npl } : {},
      ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: o.node ?? 'n1',
      containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }],
    },
    status: {
      phase: 'Running',
      podIP: o.ip ?? '10.244.0.1',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  });

export const kubeService = (
  name: string,
  spec: Record<string, unknown>,
  o: { namespace?: string; annotations?: Record<string, string>; resourceVersion?: string } = {},
): Service =>
  serviceSchema.parse({
    metadata: {
      name,
      namespace: o.namespace ?? 'default',
      annotations: o.annotations ?? {},
      ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}),
    },
    spec: { selector: { app: 'web' }, ...spec },
  });

export const kubeNode = (
  name: string,
  ip: string,
  o: { ready?: boolean; resourceVersion?: string } = {},
): Node =>
  nodeSchema.parse({
    metadata: { name, ...(o.resourceVersion ? { resourceVersion: o.resourceVersion } : {}) },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }],
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  });

export const kubeIngressClass = (name: string, controller = 'npl-lb.io/ingress-controller'): IngressClass =>
  ingressClassSchema.parse({ metadata: { name }, spec: { controller } });

export interface IngressOptions {
  className: string;
  host: string;
  service: string;
  port: number | string;
  namespace?: string;
}

/** An Ingress of one class routing `host` / (Prefix) to a Service port, as sent to an API server. */
export const ingressBody = (name: string, o: IngressOptions) => ({
  metadata: { name, namespace: o.namespace ?? 'default' },
  spec: {
    ingressClassName: o.className,
    rules: [
      {
        host: o.host,
        http: {
          paths: [
            {
              path: '/',
              pathType: 'Prefix',
              backend: {
                service: {
                  name: o.service,
                  port: typeof o.port === 'number' ? { number: o.port } : { name: o.port },
                },
              },
            },
          ],
        },
      },
    ],
  },
});

/** The same Ingress as the controller's cache holds it. */
export const kubeIngress = (name: string, o: IngressOptions): Ingress =>
  ingressSchema.parse(ingressBody(name, o));

export const clusterView = (v: Partial<ClusterView>): ClusterView => ({
  services: [],
  ingresses: [],
  ingressClasses: [],
  pods: [],
  nodes: [],
  ...v,
});
