/**
 * The controller's view of the cluster: restartable informers on Services, Pods, Nodes, Ingresses
 * and IngressClasses, parsed with zod into a ClusterView on demand. A malformed object is skipped.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import { apiServerSource, Informer, type InformerHandlers, type ListWatchSource } from '../kube/informer.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  parseOr,
  podSchema,
  serviceSchema,
} from '../kube/objects.ts';
import { RESOURCES } from '../kube/paths.ts';
import type { RawObject } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ClusterView } from '../source/desired.ts';

export type CacheKind = 'services' | 'pods' | 'nodes' | 'ingresses' | 'ingressClasses';

export class ClusterCache {
  readonly informers: Record<CacheKind, Informer>;

  constructor(kc: KubeConfig, logger: Logger, sources?: Partial<Record<CacheKind, ListWatchSource>>) {
    const make = (kind: CacheKind) =>
      new Informer({
        name: kind,
        logger,
        source: sources?.[kind] ?? apiServerSource({ kubeConfig: kc, resource: RESOURCES[kind] }),
      });
    this.informers = {
      services: make('services'),
      pods: make('pods'),
      nodes: make('nodes'),
      ingresses: make('ingresses'),
      ingressClasses: make('ingressClasses'),
    };
  }

  on(kind: CacheKind, h: InformerHandlers): void {
    this.informers[kind].on(h);
  }

  async start(): Promise<void> {
    for (const inf of Object.values(this.informers)) inf.start();
    await Promise.all(Object.values(this.informers).map((i) => i.waitForSync()));
  }

  async stop(): Promise<void> {
    await Promise.all(Object.values(this.informers).map((i) => i.stop()));
  }

  view(): ClusterView {
    const i = this.informers;
    return {
      services: parseAll(i.services.list(), serviceSchema),
      pods: parseAll(i.pods.list(), podSchema),
      nodes: parseAll(i.nodes.list(), nodeSchema),
      ingresses: parseAll(i.ingresses.list(), ingressSchema),
      ingressClasses: parseAll(i.ingressClasses.list(), ingressClassSchema),
    };
  }
}

function parseAll<T>(list: RawObject[], schema: z.ZodType<T>): T[] {
  return list.flatMap((o) => {
    const v = parseOr(schema, o);
    return v === undefined ? [] : [v];
  });
}
