/**
 * Where the LB pass writes a Service's or an Ingress's load-balancer status: an interface, so the
 * reconciler runs in unit tests without an API server; the Kubernetes one merge-patches the
 * status subresource (an object deleted meanwhile is not an error).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { collectionPath, RESOURCES } from '../kube/paths.ts';
import { KubeApiError, mergePatch } from '../kube/raw-client.ts';
import type { LbIngress } from './lb-status.ts';

export interface StatusWriter {
  write(kind: 'Service' | 'Ingress', namespace: string, name: string, ingress: LbIngress[]): Promise<void>;
}

export function kubeStatusWriter(kc: KubeConfig): StatusWriter {
  return {
    async write(kind, namespace, name, ingress) {
      const ref = kind === 'Service' ? RESOURCES.services : RESOURCES.ingresses;
      const path = `${collectionPath(ref, namespace)}/${encodeURIComponent(name)}/status`;
      try {
        await mergePatch(kc, path, { status: { loadBalancer: { ingress } } });
      } catch (err) {
        if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
      }
    },
  };
}
