/**
 * `--check` of `npl-lb migrate`: reads the cluster the kubeconfig names (Services, Ingresses,
 * IngressClasses, Pods; paged, read only) and prints what the produced values would do to it
 * (src/migrate/check.ts). Exit code 0 when nothing would change hands or collide, 1 otherwise.
 */
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import type { z } from 'zod';
import { loadKubeConfig } from '../kube/client.ts';
import {
  checkMigration,
  type ClusterObjects,
  ingressClassSchema,
  ingressSchema,
  podSchema,
  renderCheck,
  serviceSchema,
} from '../migrate/check.ts';
import { ErrorCodes, errorMessage, NplError } from '../runtime/errors.ts';

const PAGE = 500;

/** Every page of a list call, each item through its schema (an item that does not parse is skipped). */
export async function listAll<S extends z.ZodType>(
  what: string,
  schema: S,
  call: (p: {
    limit: number;
    _continue?: string;
  }) => Promise<{ items: unknown[]; metadata?: { _continue?: string } }>,
  pageSize = PAGE,
): Promise<z.infer<S>[]> {
  const out: z.infer<S>[] = [];
  let next: string | undefined;
  do {
    let page: { items: unknown[]; metadata?: { _continue?: string } };
    try {
      page = await call({ limit: pageSize, ...(next ? { _continue: next } : {}) });
    } catch (err) {
      throw new NplError(
        ErrorCodes.INFORMER_LIST_FAILED,
        `cannot list ${what}: ${errorMessage(err).split('\n')[0]}`,
      );
    }
    for (const item of page.items) {
      const parsed = schema.safeParse(item);
      if (parsed.success) out.push(parsed.data);
    }
    next = page.metadata?._continue || undefined;
  } while (next);
  return out;
}

export async function runMigrateCheck(
  values: Record<string, unknown>,
  source: string,
  from: string,
  kubeconfig: string | undefined,
): Promise<number> {
  const { kc } = loadKubeConfig({ flag: kubeconfig });
  const core = kc.makeApiClient(CoreV1Api);
  const net = kc.makeApiClient(NetworkingV1Api);
  const cluster: ClusterObjects = {
    services: await listAll('Services', serviceSchema, (p) => core.listServiceForAllNamespaces(p)),
    ingresses: await listAll('Ingresses', ingressSchema, (p) => net.listIngressForAllNamespaces(p)),
    ingressClasses: await listAll('IngressClasses', ingressClassSchema, (p) => net.listIngressClass(p)),
    pods: await listAll('Pods', podSchema, (p) => core.listPodForAllNamespaces(p)),
  };
  const { text, clean } = renderCheck(checkMigration(values, cluster, from), source, kc.getCurrentContext());
  process.stdout.write(text);
  return clean ? 0 : 1;
}
