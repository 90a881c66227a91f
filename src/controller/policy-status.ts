/**
 * The status of policies as a pass resolved them: BackendPolicies (src/source/backend-policies.ts),
 * one entry per target Service, and BackendTLSPolicies (source/gateway/backend-tls.ts), one per
 * Gateway of a route that sends to their targets; under `status.ancestors` with our controller's name and an Accepted
 * condition (observedGeneration, a transition time kept while the status stays). Entries of other
 * controllers are kept as they are. Written only where it differs from what the object shows, with
 * the object's resourceVersion, so a concurrent write is not overwritten (the next pass writes).
 */
import type { Condition } from '../kube/gateway-objects.ts';
import { type ResourceRef, RESOURCES } from '../kube/paths.ts';
import type { ConditionSpec } from '../source/gateway/conditions.ts';
import type { StatusSink } from './gateway-status.ts';
import { same, statusEntries } from './status-entries.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** A policy object as its status is written: its identity and its ancestors as they are. */
interface PolicyObject {
  metadata: { namespace: string; name: string; generation: number; resourceVersion?: string | undefined };
  status: { ancestors: { ancestorRef: unknown; controllerName: string; conditions: Condition[] }[] };
}

/** Ancestor entries as a pass computed them (a BackendPolicy's per Service, a BackendTLSPolicy's per Gateway). */
type Ancestors = { ancestorRef: unknown; conditions: ConditionSpec[] }[];

export class PolicyStatusWriter {
  constructor(
    private readonly sink: StatusSink,
    private readonly controllerName: string,
    private readonly now: () => string = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    /** The kind written: BackendPolicies (npl-lb.io) unless told. */
    private readonly resource: ResourceRef = RESOURCES.backendPolicies,
  ) {}

  /** Writes what differs; returns how many writes were made. */
  async write(
    policies: readonly PolicyObject[] | undefined,
    statuses: ReadonlyMap<string, Ancestors> | undefined,
  ): Promise<number> {
    const at = this.now();
    const writes: Promise<void>[] = [];
    for (const p of policies ?? []) {
      const before = p.status.ancestors as Parameters<typeof statusEntries<'ancestorRef'>>[1];
      const want = statusEntries('ancestorRef', before, (statuses?.get(key(p.metadata)) ?? []) as Ancestors, {
        controllerName: this.controllerName,
        generation: p.metadata.generation,
        at,
      });
      if (same(want, before)) continue;
      writes.push(
        this.sink.patch(this.resource, p.metadata.namespace, p.metadata.name, {
          metadata: { resourceVersion: p.metadata.resourceVersion },
          status: { ancestors: want },
        }),
      );
    }
    await Promise.all(writes);
    return writes.length;
  }
}
