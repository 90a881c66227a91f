/**
 * The virtual services of one of our Gateways, from its listeners and the routes placed on them:
 * L4 ones (a TCP or UDP listener with a route, a TLS port routing by SNI) and L7 ones (an HTTP(S)
 * port: its routes, its listeners' certificates and client certificate validation, HTTP/2 and the
 * listeners' hostnames where the device needs them). Pure.
 */
import type { Gateway } from '../../kube/gateway-objects.ts';
import { gatewayVsName } from '../../model/names.ts';
import type { Certificate, L4VirtualService, L7VirtualService, SniRoute } from '../../model/types.ts';
import type { GatewayListeners } from './attach.ts';
import type { placeL4Routes } from './l4-routes.ts';
import { ordered, type Ranked } from './precedence.ts';
import { HTTP2_KINDS } from './route-kinds.ts';

/**
 * The L4 virtual services of a Gateway: one per TCP or UDP listener with a route, one per TLS port
 * (terminating TLS with its Terminate listeners' certificates, gathered into `certs`; where that
 * port has Passthrough listeners too, Mixed mode, their routes marked `passthrough`).
 */
export function l4Services(
  cluster: string,
  g: GatewayListeners & { gateway: Gateway },
  vip: string,
  l4: ReturnType<typeof placeL4Routes>,
  certs: Map<string, Certificate>,
): L4VirtualService[] {
  const out = new Map<string, L4VirtualService>();
  for (const l of g.listeners) {
    const { port } = l.listener;
    if (l.protocol === 'TCP' || l.protocol === 'UDP') {
      const p = l4.pools.get(l);
      if (!p) continue;
      const name = gatewayVsName(cluster, g, l.protocol, port);
      out.set(name, { kind: 'l4', name, vip, port, protocol: l.protocol, pool: p.pool, source: p.source });
    } else if (l.protocol === 'TLS') {
      // A listener with routes attached listens even when none has a valid backend (no host then
      // routes anywhere, and every connection is closed after its ClientHello: fail closed), so
      // its Programmed condition is what the device does.
      const routes = (l4.sni.get(l) ?? []).map((r): SniRoute =>
        l.terminate ? r : { ...r, passthrough: true },
      );
      if (routes.length === 0 && l.attached.size === 0) continue;
      // Terminate mode without a certificate that resolves: nothing to terminate with.
      if (l.terminate && !l.programmable) continue;
      const name = gatewayVsName(cluster, g, 'TLS', port);
      const before = out.get(name);
      // TLS listeners on one port share it; a host two of them route keeps the first's route.
      const had = before?.sni ?? [];
      const sni: SniRoute[] = [...had, ...routes.filter((r) => !had.some((b) => b.host === r.host))];
      // Terminate mode: the certificates of the port's Terminate listeners, by SNI.
      for (const c of l.terminate ? l.certificates : []) certs.set(c.name, c);
      const names = [
        ...(before?.certificates ?? []),
        ...(l.terminate ? l.certificates.map((c) => c.name) : []),
      ];
      const terminates = l.terminate || before?.certificates !== undefined;
      out.set(name, {
        kind: 'l4',
        name,
        vip,
        port,
        protocol: 'TCP',
        pool: '',
        source: `Gateway ${g.key}`,
        sni,
        ...(terminates ? { certificates: [...new Set(names)].sort() } : {}),
      });
    }
  }
  // A port of Passthrough listeners alone passes every name through: no route is marked.
  return [...out.values()].map((v) =>
    v.sni && !v.certificates && v.sni.some((r) => r.passthrough)
      ? { ...v, sni: v.sni.map(({ passthrough: _, ...r }) => r) }
      : v,
  );
}

/**
 * The L7 virtual services of a Gateway: one per HTTP(S) port with a programmable listener, with
 * the routes placed on it (`byVs`), the certificates of its listeners (gathered into `certs`), and
 * HTTP/2 from clients while a route of an HTTP/2 kind (gRPC) is among them. Where the device
 * answers misdirected requests (`misdirected`), an HTTPS one carries its listeners' hostnames and
 * offers HTTP/2 (by ALPN) whenever the device speaks it.
 */
export function l7Services(
  cluster: string,
  g: GatewayListeners & { gateway: Gateway },
  vip: string,
  byVs: ReadonlyMap<string, Ranked[]>,
  certs: Map<string, Certificate>,
  device: { misdirected: boolean; h2: boolean },
): L7VirtualService[] {
  const out: L7VirtualService[] = [];
  const seen = new Set<string>();
  for (const l of g.listeners) {
    if (!l.programmable || (l.protocol !== 'HTTP' && l.protocol !== 'HTTPS')) continue;
    const name = gatewayVsName(cluster, g, l.listener.protocol, l.listener.port);
    if (seen.has(name)) continue;
    seen.add(name);
    const onPort = g.listeners.filter(
      (o) => o.programmable && o.listener.port === l.listener.port && o.protocol === l.protocol,
    );
    const names = new Set<string>();
    for (const o of onPort)
      for (const c of o.certificates) {
        certs.set(c.name, c);
        names.add(c.name);
      }
    const unique = new Map((byVs.get(name) ?? []).map((x) => [JSON.stringify(x.route), x]));
    const checked = l.protocol === 'HTTPS' && device.misdirected;
    const h2 =
      (checked && device.h2) ||
      [...unique.values()].some((x) => HTTP2_KINDS.has(x.route.source.slice(0, x.route.source.indexOf(' '))));
    out.push({
      kind: 'l7',
      name,
      vip,
      port: l.listener.port,
      ingressClass: g.gateway.spec.gatewayClassName,
      routes: ordered([...unique.values()]),
      defaultPool: undefined,
      ...(l.protocol === 'HTTPS' ? { protocol: 'HTTPS' as const, certificates: [...names].sort() } : {}),
      // One validation per port (spec.tls.frontend is by port), so every listener here has it.
      ...(l.clientValidation ? { clientValidation: l.clientValidation } : {}),
      ...(checked
        ? { listenerHosts: [...new Set(onPort.map((o) => o.listener.hostname ?? ''))].sort() }
        : {}),
      ...(h2 ? { http2: true as const } : {}),
    });
  }
  return out;
}
