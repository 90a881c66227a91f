/**
 * TLS listeners of both modes on one port (the Gateway API's Mixed mode) on the Data Plane
 * transport, as the runtime transport does it (tls-mixed.ts): the port's frontend routes by the
 * ClientHello's name, a Passthrough name to its pool still encrypted, every other name to the
 * loop's backend, whose one server is an abstract socket (`send-proxy-v2`: the client's address
 * carried); the loop's frontend binds that socket (`accept_proxy`, `ssl` with the virtual
 * service's crt-list) and routes the terminated names by the session's. The loop's backend and
 * frontend say `npl-lb loop partOf=<virtual service>` in their descriptions and are read back as
 * part of it. Pure.
 */
import type { L4VirtualService } from '../../../src/model/types.ts';
import { enc } from '../config.ts';
import { sniRules } from '../http-routes.ts';
import { loopName, loopSocket } from '../tls-mixed.ts';
import { type DeviceBackend, dec, words } from './layout.ts';
import type { DeviceFrontend } from './frontend-layout.ts';
import type { DpBackend, DpBind, DpFrontend, DpRule, DpServer } from './models.ts';
import { switchToDp } from './route-layout.ts';

/**
 * The loop's sections as the device holds them (a DeviceFrontend's, with its virtual service);
 * one of the two may be missing (deleted by hand), to be written again.
 */
export interface DeviceLoop {
  backend?: DpBackend;
  servers: DpServer[];
  frontend?: DpFrontend;
  binds: DpBind[];
}

/** The loop as written: its sections, and the terminated names' switching rules on its frontend. */
export interface LoopLayout {
  backend: DpBackend;
  servers: DpServer[];
  frontend: DpFrontend;
  binds: DpBind[];
  rules: DpRule[];
}

const SERVER = 'tls';
const BIND = 'loop';

/** The virtual service a section is the loop of (its description's `partOf=`), else undefined. */
export function loopOf(description: string | undefined): string | undefined {
  if (!/^npl-lb loop\b/.test(description ?? '')) return undefined;
  return dec(words(description).partOf);
}

/**
 * The loop of a Mixed virtual service. `instance` names this HAProxy (its Data Plane API's
 * address), `crtList` is where the virtual service's crt-list is stored, `settings` the
 * frontend's own fields (a class's client timeout and connection limit, as on the port's).
 */
export function loopLayout(
  v: L4VirtualService,
  o: { owner: string; instance: string },
  crtList: string,
  settings: Partial<DpFrontend>,
): LoopLayout {
  const name = loopName(v.name);
  const socket = loopSocket(v.name, o.instance);
  const description = `npl-lb loop partOf=${enc(v.name)} owner=${enc(o.owner)}`;
  const inner = sniRules(
    (v.sni ?? []).filter((r) => !r.passthrough),
    true,
  );
  return {
    backend: { name, mode: 'tcp', description },
    servers: [{ name: SERVER, address: socket, 'send-proxy-v2': 'enabled' }],
    frontend: {
      name,
      mode: 'tcp',
      ...(inner.defaultBackend ? { default_backend: inner.defaultBackend } : {}),
      ...settings,
      description,
    },
    binds: [{ name: BIND, address: socket, accept_proxy: true, ssl: true, crt_list: crtList }],
    rules: inner.switching.map(switchToDp),
  };
}

/**
 * Whether a loop read from the device still terminates TLS for its port: its bind takes the PROXY
 * header and terminates with a crt-list, and its backend's one server sends to that bind's socket
 * with the header. Otherwise the virtual service is read without termination and written again.
 */
export function loopTerminates(loop: DeviceLoop | undefined): boolean {
  const bind = loop?.binds[0];
  const server = loop?.servers[0];
  return (
    loop?.backend !== undefined &&
    loop.frontend !== undefined &&
    loop.binds.length === 1 &&
    loop.servers.length === 1 &&
    bind?.accept_proxy === true &&
    bind.ssl === true &&
    !!bind.crt_list &&
    server?.['send-proxy-v2'] === 'enabled' &&
    server.address === bind.address &&
    server.port === undefined &&
    bind.port === undefined
  );
}

/**
 * The loop sections read (by the virtual service each is part of) attached to their virtual
 * services' frontends, a missing half too (the next write makes it again). A section whose
 * virtual service is not there (left by hand) stays an owned pool or virtual service of its own,
 * which no pass wants: the next one deletes it.
 */
export function attachLoops(
  backends: Map<string, DeviceBackend>,
  frontends: Map<string, DeviceFrontend>,
  loopBackends: Map<string, DeviceBackend>,
  loopFrontends: Map<string, { frontend: DpFrontend; binds: DpBind[] }>,
): void {
  for (const vs of new Set([...loopBackends.keys(), ...loopFrontends.keys()])) {
    const b = loopBackends.get(vs);
    const f = loopFrontends.get(vs);
    const owner = frontends.get(vs);
    if (owner) {
      owner.loop = {
        ...(b ? { backend: b.backend } : {}),
        servers: b?.servers ?? [],
        ...(f ? { frontend: f.frontend } : {}),
        binds: f?.binds ?? [],
      };
      continue;
    }
    if (b) backends.set(b.backend.name, b);
    if (f) frontends.set(f.frontend.name, f);
  }
}
