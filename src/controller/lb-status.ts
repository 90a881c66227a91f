/**
 * What a LoadBalancer Service's and an Ingress's `status.loadBalancer.ingress` should hold. For a
 * Service, the v1.35 fields: `ipMode` (Proxy by default: traffic reaches the Pods through the
 * load balancer at nodeIP:nodePort, so kube-proxy must not send in-cluster clients past it) and
 * `ports[]` with an `error` on each port the load balancer could not program; the VIP is published
 * while at least one port works. Pure.
 */
import type { ApplyError } from '../adapter/contract.ts';
import type { Service } from '../kube/objects.ts';
import { familyName, l4Name } from '../model/names.ts';
import { vipFamily } from '../model/vips.ts';
import type { SourceStatus } from '../source/desired.ts';

export interface PortStatus {
  port: number;
  protocol: string;
  error?: string;
}

export interface LbIngress {
  ip: string;
  ipMode?: 'Proxy' | 'VIP';
  ports?: PortStatus[];
}

/** A port error as the API wants it: a qualified name, ours under npl-lb.io. */
export const portError = (code: string): string =>
  `npl-lb.io/${code.replace(/[^A-Za-z0-9]/g, '') || 'Failed'}`.slice(0, 63 + 'npl-lb.io/'.length);

export function serviceIngress(
  svc: Service,
  st: SourceStatus,
  cluster: string,
  ipMode: 'Proxy' | 'VIP',
  failure: (vs: string) => ApplyError | undefined,
  /** A desired virtual service the device does not hold yet: NotProgrammed, as one not desired. */
  unprogrammed: (vs: string) => boolean = () => false,
): LbIngress[] {
  if (!st.vip) return [];
  // One entry per address (a dual-stack Service: the primary family's first), each with the state
  // of its own family's virtual services.
  return [st.vip, ...(st.moreVips ?? [])].flatMap((ip): LbIngress[] => {
    const family = vipFamily(ip);
    const ports = svc.spec.ports.map((p): PortStatus => {
      const vs = familyName(
        l4Name(cluster, svc.metadata.namespace, svc.metadata.name, p.protocol, p.port),
        family,
      );
      const failed = failure(vs);
      const error =
        p.protocol === 'SCTP' || st.unsupported?.includes(vs)
          ? portError('UnsupportedProtocol')
          : !st.virtualServices.includes(vs)
            ? portError('NotProgrammed')
            : failed
              ? portError(failed.code)
              : unprogrammed(vs)
                ? portError('NotProgrammed')
                : undefined;
      return { port: p.port, protocol: p.protocol, ...(error ? { error } : {}) };
    });
    if (!ports.some((p) => p.error === undefined)) return [];
    return [{ ip, ipMode, ports }];
  });
}

type Current = { ip?: string | undefined; ipMode?: unknown; ports?: unknown }[];

/**
 * Whether the object already shows `want`. Once we have written it (`lenient`), a field the API
 * server dropped (an older server without ipMode or ports) is not compared, so such a server is
 * not patched again at every pass; before that every field counts, so a status written by an
 * older npl-lb is brought up to date.
 */
export function showsAlready(current: Current, want: LbIngress[], lenient: boolean): boolean {
  if (current.length !== want.length) return false;
  const norm = (ps: unknown) =>
    JSON.stringify(((ps ?? []) as PortStatus[]).map((p) => [p.port, p.protocol, p.error ?? null]));
  return current.every((c, i) => {
    const w = want[i]!;
    if (c.ip !== w.ip) return false;
    if (!(lenient && c.ipMode === undefined) && c.ipMode !== w.ipMode) return false;
    if (lenient && c.ports === undefined) return true;
    return norm(c.ports) === norm(w.ports);
  });
}
