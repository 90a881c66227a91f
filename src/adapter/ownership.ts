/**
 * "Never touch what is not ours", once for every adapter (external-dns's registry is the model):
 * a change to an object the device last showed as another owner's (or nobody's) is refused
 * NotOwned, terminal, and never reaches the adapter. Adapters report ownership in observe(); the
 * guard keeps the last report and checks every apply against it (observing first if it has none).
 * A device whose objects can change owner between observe and apply still checks on its own side
 * (a device adapter reads the object before it writes; the memory device compares the stored owner).
 */
import type { Change, Observed } from './changes.ts';
import type { ApplyResult, LoadBalancerAdapter } from './contract.ts';

export class OwnershipGuard implements LoadBalancerAdapter {
  /** kind/name -> owner of everything the last observe() showed as not ours. */
  private foreign: Map<string, string> | undefined;

  readonly verify?: () => Promise<readonly string[] | void>;
  readonly health?: LoadBalancerAdapter['health'];
  readonly probe?: LoadBalancerAdapter['probe'];
  readonly allocatedVips?: LoadBalancerAdapter['allocatedVips'];

  constructor(private readonly inner: LoadBalancerAdapter) {
    // Optional methods stay optional: the controller asks whether the device has them. Their
    // arguments go through: a health read of some pools (the timer's slice) reads those alone.
    if (inner.verify) this.verify = () => inner.verify!();
    if (inner.health) this.health = (pools) => inner.health!(pools);
    if (inner.probe) this.probe = () => inner.probe!();
    if (inner.allocatedVips) this.allocatedVips = () => inner.allocatedVips!();
  }

  get name(): string {
    return this.inner.name;
  }

  get owner(): string {
    return this.inner.owner;
  }

  capabilities(): ReturnType<LoadBalancerAdapter['capabilities']> {
    return this.inner.capabilities();
  }

  async observe(): Promise<Observed> {
    const o = await this.inner.observe();
    this.foreign = new Map(o.foreign.map((f) => [`${f.kind}/${f.name}`, f.owner]));
    // An object reported both ways is not ours: it is never handed to the plan as ours.
    const mine = <T extends { name: string }>(kind: string, list: T[]): T[] =>
      list.filter((x) => !this.foreign!.has(`${kind}/${x.name}`));
    return {
      ...o,
      owned: {
        ...o.owned,
        pools: mine('pool', o.owned.pools),
        virtualServices: mine('virtualService', o.owned.virtualServices),
        ...(o.owned.certificates ? { certificates: mine('certificate', o.owned.certificates) } : {}),
      },
    };
  }

  async apply(changes: Change[]): Promise<ApplyResult[]> {
    if (!this.foreign) await this.observe();
    const results: (ApplyResult | undefined)[] = changes.map((change) => {
      const owner = this.foreign!.get(`${change.kind}/${change.name}`);
      if (owner === undefined) return undefined;
      return {
        change,
        ok: false,
        error: {
          code: 'NotOwned',
          message: `${change.kind} ${change.name} belongs to ${owner || 'nobody we know'}; left alone`,
          terminal: true,
        },
      };
    });
    const passed = changes.filter((_, i) => results[i] === undefined);
    const applied = passed.length > 0 ? await this.inner.apply(passed) : [];
    let next = 0;
    return results.map((r) => r ?? applied[next++]!);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The adapter as the controller uses it: behind the ownership guard (once). */
export const guardOwnership = (a: LoadBalancerAdapter): LoadBalancerAdapter =>
  a instanceof OwnershipGuard ? a : new OwnershipGuard(a);
