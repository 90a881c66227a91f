/**
 * The status of BackendPolicies as a pass resolved them (src/source/backend-policies.ts): one
 * entry per target Service under `status.ancestors` with our controller's name and an Accepted
 * condition (observedGeneration, a transition time kept while the status stays). Entries of other
 * controllers are kept as they are. Written only where it differs from what the object shows, with
 * the object's resourceVersion, so a concurrent write is not overwritten (the next pass writes).
 */
import { RESOURCES } from '../kube/paths.ts';
import type { BackendPolicy } from '../kube/policy-objects.ts';
import type { PolicyAncestor } from '../source/backend-policies.ts';
import type { StatusSink } from './gateway-status.ts';
import { same, statusEntries } from './status-entries.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

export class PolicyStatusWriter {
  constructor(
    private readonly sink: StatusSink,
    private readonly controllerName: string,
    private readonly now: () => string = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  ) {}

  /** Writes what differs; returns how many writes were made. */
  async write(
    policies: readonly BackendPolicy[] | undefined,
    statuses: ReadonlyMap<string, PolicyAncestor[]> | undefined,
  ): Promise<number> {
    const at = this.now();
    const writes: Promise<void>[] = [];
    for (const p of policies ?? []) {
      const before = p.status.ancestors;
      const want = statusEntries('ancestorRef', before, statuses?.get(key(p.metadata)) ?? [], {
        controllerName: this.controllerName,
        generation: p.metadata.generation,
        at,
      });
      if (same(want, before)) continue;
      writes.push(
        this.sink.patch(RESOURCES.backendPolicies, p.metadata.namespace, p.metadata.name, {
          metadata: { resourceVersion: p.metadata.resourceVersion },
          status: { ancestors: want },
        }),
      );
    }
    await Promise.all(writes);
    return writes.length;
  }
}
