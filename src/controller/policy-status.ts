/**
 * The status of BackendPolicies as a pass resolved them (src/source/backend-policies.ts): one
 * entry per target Service under `status.ancestors` with our controller's name and an Accepted
 * condition (observedGeneration, a transition time kept while the status stays). Entries of other
 * controllers are kept as they are. Written only where it differs from what the object shows, with
 * the object's resourceVersion, so a concurrent write is not overwritten (the next pass writes).
 */
import { isDeepStrictEqual } from 'node:util';
import { RESOURCES } from '../kube/paths.ts';
import type { BackendPolicy } from '../kube/policy-objects.ts';
import type { PolicyAncestor } from '../source/backend-policies.ts';
import { conditions } from '../source/gateway/conditions.ts';
import type { StatusSink } from './gateway-status.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;
const same = (a: unknown, b: unknown): boolean =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

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
      const theirs = before.filter((a) => a.controllerName !== this.controllerName);
      const ours = (statuses?.get(key(p.metadata)) ?? []).map((a) => {
        const old = before.find(
          (b) => b.controllerName === this.controllerName && same(b.ancestorRef, a.ancestorRef),
        );
        return {
          ancestorRef: a.ancestorRef,
          controllerName: this.controllerName,
          conditions: conditions(a.conditions, p.metadata.generation, old?.conditions ?? [], at),
        };
      });
      const want = [...theirs, ...ours];
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
