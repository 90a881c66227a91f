/**
 * A VIP the load balancer allocates from its own IPAM (a device's own address
 * allocation): the model carries `auto:<group>` instead of an address, one group per object
 * that publishes a VIP (`service/ns/name`, `ingressclass/name`, `gateway/ns/name`), so every virtual
 * service of the group shares the one address the device gives it. The published status is the
 * address the adapter read back (LoadBalancerAdapter.allocatedVips). Pure.
 */
export const AUTO_VIP = 'auto:';

export const autoVip = (group: string): string => `${AUTO_VIP}${group}`;

/** The group of an allocated VIP, undefined for an address. */
export const autoVipGroup = (vip: string | undefined): string | undefined =>
  vip?.startsWith(AUTO_VIP) ? vip.slice(AUTO_VIP.length) : undefined;

/**
 * The address family of a VIP: an address's own; an allocated one's from its group (a group of
 * IPv6 ends in `/IPv6`, src/source/vips/vips.ts `deviceGroup`).
 */
export function vipFamily(vip: string): 'IPv4' | 'IPv6' {
  const group = autoVipGroup(vip);
  if (group !== undefined) return group.endsWith('/IPv6') ? 'IPv6' : 'IPv4';
  // A VIP in the model passed the validation boundary: only an IPv6 address holds a ':'.
  return vip.includes(':') ? 'IPv6' : 'IPv4';
}

/**
 * The address a VIP stands for: itself, or what the device allocated for its group (undefined: not
 * yet). `allocated` is only asked for an allocated VIP.
 */
export function resolveVip(
  vip: string | undefined,
  allocated: () => ReadonlyMap<string, string> | undefined,
): string | undefined {
  const group = autoVipGroup(vip);
  return group === undefined ? vip : allocated()?.get(group);
}

/** A getter that asks `source` once, on first use (one read of the device's addresses per pass). */
export function once<T>(source: () => T): () => T {
  let done = false;
  let value: T;
  return () => {
    if (!done) {
      value = source();
      done = true;
    }
    return value;
  };
}
