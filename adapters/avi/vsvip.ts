/**
 * A virtual service's VsVip: its own with its address (IPv4 in `ip_address`, IPv6 in
 * `ip6_address`), or, where Avi's IPAM allocates, one per VIP group asking an address of the
 * group's family; and the address Avi allocated, read back.
 */
import { createHash } from 'node:crypto';
import { limitName } from '../../src/model/names.ts';
import type { VirtualService } from '../../src/model/types.ts';
import { autoVipGroup, vipFamily } from '../../src/model/vips.ts';
import {
  type AviObject,
  type AviPlacement,
  byName,
  ipAddr,
  markers,
  markerValue,
  withSum,
} from './objects.ts';

/**
 * The VsVip of a virtual service: its own, with its address; or, where Avi's IPAM allocates, one
 * per VIP group (a Service, an IngressClass, a Gateway), shared by the group's virtual services so
 * they get one address, named after the group.
 */
export function vsVipName(vs: VirtualService, owner: string): string {
  const group = autoVipGroup(vs.vip);
  if (group === undefined) return vs.name;
  const digest = createHash('sha256').update(group).digest('hex').slice(0, 8);
  return limitName(`${owner}--vip-${group.replace(/[^a-z0-9.-]/g, '-')}-${digest}`, 200);
}

export function renderVsVip(vs: VirtualService, owner: string, at: AviPlacement): AviObject {
  const group = autoVipGroup(vs.vip);
  const v6 = vipFamily(vs.vip) === 'IPv6';
  if (group !== undefined && !at.vipNetwork)
    throw new Error(`virtual service ${vs.name}: an allocated VIP without adapter.vipNetwork`);
  if (group !== undefined && v6 && !at.vipNetwork?.cidr6)
    throw new Error(`virtual service ${vs.name}: an allocated IPv6 VIP without adapter.vipNetwork.cidr6`);
  const [subnet = '', mask = '32'] = ((v6 ? at.vipNetwork?.cidr6 : at.vipNetwork?.cidr) ?? '').split('/');
  return withSum('vsvip', {
    name: vsVipName(vs, owner),
    markers:
      group === undefined
        ? markers(
            owner,
            vs.kind === 'l4' ? vs.source : '',
            vs.kind === 'l7' ? { ingressclass: vs.ingressClass } : {},
          )
        : [...markers(owner, ''), { key: 'vipgroup', values: [group] }],
    cloud_ref: byName('cloud', at.cloud),
    vrf_context_ref: byName('vrfcontext', at.vrf),
    vip: [
      group === undefined
        ? // Avi holds an IPv6 VIP in ip6_address, ip_address being the IPv4 one.
          { vip_id: '0', [v6 ? 'ip6_address' : 'ip_address']: ipAddr(vs.vip) }
        : {
            vip_id: '0',
            auto_allocate_ip: true,
            // IPv4 is Avi's default type (V4_ONLY), not written, so VsVips of before read back equal.
            ...(v6 ? { auto_allocate_ip_type: 'V6_ONLY' } : {}),
            ipam_network_subnet: {
              network_ref: byName('network', at.vipNetwork!.name),
              [v6 ? 'subnet6' : 'subnet']: { ip_addr: ipAddr(subnet), mask: Number(mask) },
            },
          },
    ],
  });
}

/** A VsVip's `vip[]` entry as we read it: the IPv4 address, the IPv6 one, whether Avi allocated it. */
export type VipEntry = {
  ip_address?: { addr?: string };
  ip6_address?: { addr?: string };
  auto_allocate_ip?: boolean;
};

/** The address Avi allocated to a VsVip of ours that asked for one: [group, address]. */
export function allocatedVip(o: Record<string, unknown>): [string, string] | undefined {
  const group = markerValue(o, 'vipgroup');
  const entry = (o.vip as VipEntry[] | undefined)?.[0];
  const addr = entry?.ip_address?.addr ?? entry?.ip6_address?.addr;
  return group && addr ? [group, addr] : undefined;
}
