/**
 * TLS listeners of both modes on one port (the Gateway API's Mixed mode) on the runtime transport.
 * The port's frontend waits for the ClientHello and routes by its name: a Passthrough listener's
 * names to their pools still encrypted, every other name through a loop, a backend whose one
 * server is an abstract socket (the client's address carried in a PROXY header), to a second
 * frontend that terminates TLS with the virtual service's crt-list and routes by the session's
 * name. The loop's two sections carry `# npl-lb part-of=<virtual service>` and are read back as
 * part of it (config-parse.ts). Pure.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { L4VirtualService, SniRoute } from '../../src/model/types.ts';
import { sniRules } from './http-routes.ts';

/** Whether a virtual service needs the loop: it terminates TLS and passes some names through. */
export const isMixed = (v: L4VirtualService): boolean =>
  v.certificates !== undefined && (v.sni ?? []).some((r) => r.passthrough === true);

/** The loop's backend and frontend: the virtual service's name with `_tls` ('_' is in no Kubernetes name). */
export const loopName = (vs: string): string => `${vs}_tls`;

/** The comment that ties the loop's sections to their virtual service. */
export const PART_OF = /# npl-lb part-of=(\S+)/;

/**
 * The loop's socket: abstract (nothing on disk, handed to a reloaded worker with the other
 * listeners), its name unique to this HAProxy (`instance`: its admin socket on the runtime
 * transport, its Data Plane API's address on that one) and the virtual service, so two HAProxy
 * instances on one host never share one. It has no permissions: a process in HAProxy's
 * network namespace could connect to it and reach the terminated names without the port's client
 * filter (on the first frontend); such a process reaches the members directly anyway.
 */
export function loopSocket(vs: string, instance: string): string {
  const tag = createHash('sha256').update(instance).digest('hex').slice(0, 12);
  return `abns@npl-${tag}-${vs}`;
}

/** Where the port's frontend sends a route's connections: its pool, or the loop for a terminated name. */
export const outerBackend =
  (v: L4VirtualService) =>
  (r: SniRoute): string =>
    r.passthrough ? r.pool : loopName(v.name);

/**
 * The loop's sections: the backend to the socket, and the frontend on it terminating TLS (the
 * crt-list the certificate store writes for the virtual service) and routing the terminated
 * names by the session's. `extra`: the frontend's own settings lines (frontendLines).
 */
export function loopSections(
  v: L4VirtualService,
  o: { adminSocket: string; certDir?: string },
  extra: string[],
): string[] {
  const name = loopName(v.name);
  const socket = loopSocket(v.name, o.adminSocket);
  const mark = `    # npl-lb part-of=${v.name}`;
  const inner = sniRules(
    (v.sni ?? []).filter((r) => !r.passthrough),
    true,
  );
  return [
    `backend ${name}`,
    mark,
    '    mode tcp',
    `    server tls ${socket} send-proxy-v2`,
    '',
    `frontend ${name}`,
    mark,
    '    mode tcp',
    `    bind ${socket} accept-proxy ssl crt-list ${join(o.certDir ?? '.', `${v.name}.crtlist`)}`,
    ...extra,
    ...inner.switching.map((r) => `    use_backend ${r.backend} if ${r.cond}`),
    ...(inner.defaultBackend ? [`    default_backend ${inner.defaultBackend}`] : []),
    '',
  ];
}
