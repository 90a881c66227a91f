/** The stub vendor's adapter as the registry test uses it (its code is the folder's, copied at run time). */
import type { ApplyError, LoadBalancerAdapter } from '../../../../src/adapter/contract.ts';
import type { Change } from '../../../../src/adapter/changes.ts';
import type { Pool, VirtualService } from '../../../../src/model/types.ts';

export interface StubDeviceLike {
  objects: Map<string, { owner: string; kind: 'pool' | 'virtualService'; value: Pool | VirtualService }>;
}

export type StubAdapterLike = new (
  owner: string,
  device?: StubDeviceLike,
  fault?: (c: Change) => ApplyError | undefined,
) => LoadBalancerAdapter;
