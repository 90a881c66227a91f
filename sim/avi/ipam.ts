/**
 * The simulated Avi Controller's IPAM: networks with an IPv4 subnet and, optionally, an IPv6 one;
 * a VsVip's `vip[]` entry asking `auto_allocate_ip` keeps the address it had, else gets the first
 * free one of the subnet it names (inside its network): IPv4 in `ip_address`, IPv6
 * (`auto_allocate_ip_type: V6_ONLY`, `subnet6`) in `ip6_address`; none free is refused with the
 * controller's words. Its own arithmetic (ip-address for IPv6), not the adapter's.
 */
import { Address6 } from 'ip-address';
import { HttpError } from './http-error.ts';

type Json = Record<string, unknown>;

const toInt = (ip: string): number => ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
const toIp = (n: number): string => [24, 16, 8, 0].map((b) => Math.floor(n / 2 ** b) % 256).join('.');
const bounds = (cidr: string): [number, number] => {
  const [ip = '0.0.0.0', bits = '32'] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const base = toInt(ip) - (toInt(ip) % size);
  return [base, base + size - 1];
};
const cidrPrefix = (cidr: string) => {
  const [ip = '', mask = '32'] = cidr.split('/');
  return { ip_addr: { addr: ip, type: 'V4' }, mask: Number(mask) };
};
const cidr6Prefix = (cidr: string) => {
  const [ip = '', mask = '128'] = cidr.split('/');
  return { ip_addr: { addr: ip, type: 'V6' }, mask: Number(mask) };
};
const within = (inner: string, outer: string): boolean => {
  const [a, b] = bounds(inner);
  const [c, d] = bounds(outer);
  return a >= c && b <= d;
};
/** The first address of a CIDR not in use (network and broadcast addresses left out). */
function freeAddress(cidr: string, used: Set<string>): string | undefined {
  const [first, last] = bounds(cidr);
  for (let n = first + 1; n < last; n++) if (!used.has(toIp(n))) return toIp(n);
  return undefined;
}

export class SimIpam {
  private readonly networks = new Map<string, string>();
  private readonly networks6 = new Map<string, string>();

  /** A network to allocate from; returns its `configured_subnets`. */
  add(name: string, cidr: string, cidr6?: string): Json[] {
    this.networks.set(name, cidr);
    if (cidr6) this.networks6.set(name, cidr6);
    return [{ prefix: cidrPrefix(cidr) }, ...(cidr6 ? [{ prefix: cidr6Prefix(cidr6) }] : [])];
  }

  /**
   * IPAM: each VIP that asks to be allocated keeps the address it had, else gets the first free one
   * of its subnet (inside its network); none free is refused as the controller does.
   */
  allocate(
    o: Json,
    current: Json | undefined,
    vsvips: Iterable<Json>,
    networkOf: (ref: unknown) => string,
  ): Json {
    const asks = (v: Json) => v.auto_allocate_ip === true && !v.ip_address && !v.ip6_address;
    if (!Array.isArray(o.vip) || !(o.vip as Json[]).some(asks)) return o;
    const used = new Set<string>();
    for (const v of vsvips)
      if (v !== current)
        for (const e of (v.vip as Json[] | undefined) ?? []) {
          used.add(String((e.ip_address as Json | undefined)?.addr));
          used.add(String((e.ip6_address as Json | undefined)?.addr));
        }
    const vip = (o.vip as Json[]).map((v) => {
      if (!asks(v)) return v;
      const before = ((current?.vip as Json[] | undefined) ?? []).find((c) => c.vip_id === v.vip_id);
      if (v.auto_allocate_ip_type === 'V6_ONLY') return this.allocate6(v, before, used, networkOf);
      if (v.auto_allocate_ip_type !== undefined && v.auto_allocate_ip_type !== 'V4_ONLY')
        throw new HttpError(
          400,
          `vip[${String(v.vip_id)}]: auto_allocate_ip_type ${String(v.auto_allocate_ip_type)} is not supported here`,
        );
      const kept = before?.ip_address;
      if (kept) return { ...v, ip_address: kept, avi_allocated_vip: true };
      const ipam = (v.ipam_network_subnet ?? {}) as {
        network_ref?: string;
        subnet?: { ip_addr?: { addr?: string }; mask?: number };
      };
      const network = networkOf(ipam.network_ref);
      const cidr = ipam.subnet?.ip_addr?.addr
        ? `${ipam.subnet.ip_addr.addr}/${ipam.subnet.mask ?? 32}`
        : this.networks.get(network);
      if (!cidr || !this.networks.has(network))
        throw new HttpError(400, `vip[${String(v.vip_id)}]: no IPAM network to allocate from`);
      if (!within(cidr, this.networks.get(network)!))
        throw new HttpError(400, `vip[${String(v.vip_id)}]: subnet ${cidr} is not in network ${network}`);
      const addr = freeAddress(cidr, used);
      if (!addr) throw new HttpError(400, `No available IP address in network ${network} subnet ${cidr}`);
      used.add(addr);
      return { ...v, ip_address: { addr, type: 'V4' }, avi_allocated_vip: true };
    });
    return { ...o, vip };
  }

  /** An IPv6 VIP (`V6_ONLY`): the first free address of the network's IPv6 subnet, in `ip6_address`. */
  private allocate6(
    v: Json,
    before: Json | undefined,
    used: Set<string>,
    networkOf: (ref: unknown) => string,
  ): Json {
    if (before?.ip6_address) return { ...v, ip6_address: before.ip6_address, avi_allocated_vip: true };
    const ipam = (v.ipam_network_subnet ?? {}) as {
      network_ref?: string;
      subnet6?: { ip_addr?: { addr?: string; type?: string }; mask?: number };
    };
    const network = networkOf(ipam.network_ref);
    const subnet = this.networks6.get(network);
    if (!subnet)
      throw new HttpError(
        400,
        `vip[${String(v.vip_id)}]: network ${network} has no IPv6 subnet to allocate from`,
      );
    const asked = ipam.subnet6?.ip_addr?.addr
      ? `${ipam.subnet6.ip_addr.addr}/${ipam.subnet6.mask ?? 128}`
      : subnet;
    if (ipam.subnet6 && ipam.subnet6.ip_addr?.type !== 'V6')
      throw new HttpError(400, `vip[${String(v.vip_id)}]: subnet6 must be of type V6`);
    if (!new Address6(asked).isInSubnet(new Address6(subnet)))
      throw new HttpError(400, `vip[${String(v.vip_id)}]: subnet ${asked} is not in network ${network}`);
    const start = new Address6(asked).startAddress().bigInt();
    const end = new Address6(asked).endAddress().bigInt();
    for (let n = start + 1n; n <= end && n < start + 65536n; n++) {
      const addr = Address6.fromBigInt(n).correctForm();
      if (used.has(addr)) continue;
      used.add(addr);
      return { ...v, ip6_address: { addr, type: 'V6' }, avi_allocated_vip: true };
    }
    throw new HttpError(400, `No available IP address in network ${network} subnet ${asked}`);
  }
}
