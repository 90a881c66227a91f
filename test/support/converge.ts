/**
 * One pass to the state wanted, as the controller makes it: plan against what the adapter
 * observes, apply, every change accepted, and then observed back exactly (nothing left to do).
 */
import assert from 'node:assert/strict';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import type { LbState } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';

export async function converge(adapter: LoadBalancerAdapter, want: LbState): Promise<void> {
  const results = await adapter.apply(plan(want, await adapter.observe()).changes);
  assert.deepEqual(
    results.filter((x) => !x.ok).map((x) => x.error?.message),
    [],
  );
  assert.deepEqual(plan(want, await adapter.observe()).changes, [], 'observed back exactly');
}
