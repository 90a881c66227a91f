/**
 * Where a virtual service is declared on BIG-IP: the partition of its class's
 * LoadBalancerParameters (an AS3 tenant), kept in its metadata so observe() reads it back. Pure.
 */
import { partitionOf } from './parameters.ts';
import type { VirtualService } from '../../src/model/types.ts';
import { metaValue } from './pool-objects.ts';

type Json = Record<string, unknown>;

/**
 * The tenant a virtual service is declared in: its placement's partition (LoadBalancerParameters),
 * else the adapter's own (`home`).
 */
export const tenantOf = (vs: VirtualService, home: string): string => partitionOf(vs.placement) ?? home;

/** A placed virtual service keeps its partition in its metadata, so observe() reads back exactly it. */
export const partitionMeta = (vs: VirtualService): Record<string, string> => {
  const partition = partitionOf(vs.placement);
  return partition ? { partition } : {};
};
export const placementRead = (o: Json): { placement?: { partition: string } } => {
  const partition = metaValue(o, 'partition');
  return partition ? { placement: { partition } } : {};
};
