/**
 * The controller's view of the cluster: restartable informers on Services, Pods, Nodes, Ingresses
 * and IngressClasses. Each object is parsed with zod once, when its informer delivers it (a
 * malformed object is left out), so building a ClusterView costs no parsing.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { z } from 'zod';
import {
  apiServerSource,
  Informer,
  type InformerHandlers,
  type ListWatchSource,
  objectKey,
} from '../kube/informer.ts';
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

/** Parsed objects of one kind, kept in step with its informer. */
class Parsed<T> {
  readonly items = new Map<string, T>();
  constructor(
    inf: Informer,
    private readonly schema: z.ZodType<T>,
  ) {
    const put = (o: RawObject) => {
      const v = parseOr(this.schema, o);
      if (v === undefined) this.items.delete(objectKey(o));
      else this.items.set(objectKey(o), v);
    };
    inf.on({ add: put, update: (_, n) => put(n), delete: (o) => this.items.delete(objectKey(o)) });
  }
  list(): T[] {
    return [...this.items.values()];
  }
}

export class ClusterCache {
  readonly informers: Record<CacheKind, Informer>;
  private readonly parsed: {
    services: Parsed<ClusterView['services'][number]>;
    pods: Parsed<ClusterView['pods'][number]>;
    nodes: Parsed<ClusterView['nodes'][number]>;
    ingresses: Parsed<ClusterView['ingresses'][number]>;
    ingressClasses: Parsed<ClusterView['ingressClasses'][number]>;
  };

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
    // Registered before any other handler, so handlers that read the view see the new object.
    const i = this.informers;
    this.parsed = {
      services: new Parsed(i.services, serviceSchema),
      pods: new Parsed(i.pods, podSchema),
      nodes: new Parsed(i.nodes, nodeSchema),
      ingresses: new Parsed(i.ingresses, ingressSchema),
      ingressClasses: new Parsed(i.ingressClasses, ingressClassSchema),
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

  /** The parsed Services alone (event handlers need them without building a whole view). */
  services(): ClusterView['services'] {
    return this.parsed.services.list();
  }

  view(): ClusterView {
    const p = this.parsed;
    return {
      services: p.services.list(),
      pods: p.pods.list(),
      nodes: p.nodes.list(),
      ingresses: p.ingresses.list(),
      ingressClasses: p.ingressClasses.list(),
    };
  }
}
