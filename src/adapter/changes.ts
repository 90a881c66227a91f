/**
 * The contract types between the core and the adapters: what an adapter observes on the load
 * balancer and the changes it is asked to apply. The plan (src/plan) computes changes from them;
 * adapters import them from here, never from the plan.
 */
import type { Certificate, LbState, ObjectKind, Pool, VirtualService } from '../model/types.ts';

export type ChangeOf<K extends ObjectKind, T> =
  | { op: 'create'; kind: K; name: string; desired: T }
  | { op: 'update'; kind: K; name: string; desired: T; observed: T }
  | { op: 'delete'; kind: K; name: string; observed: T };

/** Changes to the kinds every adapter holds. */
export type CoreChange = ChangeOf<'pool', Pool> | ChangeOf<'virtualService', VirtualService>;

export type Change = CoreChange | ChangeOf<'certificate', Certificate>;

/** What an adapter observed: our objects, and the names (with owner) of everyone else's. */
export interface Observed {
  owned: LbState;
  foreign: { kind: ObjectKind; name: string; owner: string }[];
  /**
   * Objects of ours the adapter found changed on the device in a way the model cannot say (a
   * `balance static-rr` written by hand, servers that disagree on a limit): read as near as the
   * model goes, and written again by the next pass even where that reading equals what is wanted.
   */
  drifted?: { kind: ObjectKind; name: string }[];
}
