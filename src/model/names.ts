/**
 * Deterministic, length-limited names for load-balancer objects, as the vendors' controllers write them:
 * `<cluster>--<namespace>-<name>-<proto>-<port>`. A name over the limit keeps its head and gets a
 * hash of the whole, so two long names never collide.
 */
import { createHash } from 'node:crypto';

export const MAX_NAME = 63;

export function limitName(name: string, max = MAX_NAME): string {
  if (name.length <= max) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, max - 9)}-${hash}`;
}

export function l4Name(
  cluster: string,
  namespace: string,
  service: string,
  protocol: string,
  port: number,
): string {
  return limitName(`${cluster}--${namespace}-${service}-${protocol}-${port}`);
}

export function poolName(cluster: string, namespace: string, service: string, port: string | number): string {
  return limitName(`${cluster}--${namespace}-${service}-${port}`);
}

export function l7Name(cluster: string, ingressClass: string): string {
  return limitName(`${cluster}--ingress-${ingressClass}`);
}

/**
 * The pool of a Service port used by HTTP routes: a name of its own, so an L4 virtual service and
 * an L7 route on the same Service port never share a backend (tcp and http are different modes).
 * '.' cannot occur in namespace, Service or port names, so it never collides with poolName.
 */
export function l7PoolName(
  cluster: string,
  svc: { namespace: string; name: string },
  port: string | number,
): string {
  return limitName(`${cluster}--${svc.namespace}-${svc.name}-${port}.l7`);
}

/**
 * The pool of a Service port spoken to over TLS (a BackendTLSPolicy over it, an Ingress's
 * re-encryption annotations): '.tls-<hash>' beside '.l7', the hash of the TLS asked (names and
 * CA), so a route sending to the same port in clear text, or asking other names or another CA,
 * keeps a pool of its own: one asker's TLS is never another's.
 */
export function tlsPoolName(
  cluster: string,
  svc: { namespace: string; name: string },
  port: string | number,
  tls: { serverName: string; verifyNames: readonly string[]; ca: string; clientCertificate?: string },
  /** `tcptls`: the pool of a TLS listener in Terminate mode (tcp, not http: a name of its own). */
  kind: 'tls' | 'tcptls' = 'tls',
): string {
  // The certificate presented joins the hash only when there is one (pool names without stay as they were).
  const asked = createHash('sha256')
    .update(
      JSON.stringify([
        tls.serverName,
        tls.verifyNames,
        tls.ca,
        ...(tls.clientCertificate ? [tls.clientCertificate] : []),
      ]),
    )
    .digest('hex')
    .slice(0, 8);
  return limitName(`${cluster}--${svc.namespace}-${svc.name}-${port}.${kind}-${asked}`);
}

/**
 * A pool's variant (by its name) for what one route rule asks beside the Service's own:
 * '.<kind>-<hash>' after the pool's name, the hash of what is asked, so rules asking otherwise (or
 * nothing) keep pools of their own. The suffix survives the length limit, as familyName's does
 * (the pool's name is cut instead), and an IPv6 pool's variant keeps its `_v6` last. '.' and '_'
 * occur in no Kubernetes name, so it never collides with another.
 */
function variantName(pool: string, kind: string, asked: unknown): string {
  const hash = createHash('sha256').update(JSON.stringify(asked)).digest('hex').slice(0, 8);
  const ipv6 = isIPv6Name(pool);
  const suffix = `.${kind}-${hash}`;
  const name = `${limitName(ipv6 ? pool.slice(0, -3) : pool, MAX_NAME - 3 - suffix.length)}${suffix}`;
  return familyName(name, ipv6 ? 'IPv6' : 'IPv4');
}

/** The variant one retry policy asks for (an HTTPRoute rule's `retry`): '.retry-<hash>'. */
export const retryPoolName = (
  pool: string,
  retry: { statuses: readonly number[]; attempts?: number },
): string => variantName(pool, 'retry', [retry.statuses, retry.attempts ?? null]);

/**
 * The variant one session cookie asks for (an HTTPRoute rule's `sessionPersistence`):
 * '.session-<hash>', after a retry variant's name when the rule asks both.
 */
export const sessionPoolName = (pool: string, session: object): string =>
  variantName(pool, 'session', session);

/** The HTTP/2 (h2c) pool of a Service port: '.h2' beside '.l7', for the same reason. */
export function h2PoolName(
  cluster: string,
  svc: { namespace: string; name: string },
  port: string | number,
): string {
  return limitName(`${cluster}--${svc.namespace}-${svc.name}-${port}.h2`);
}

/**
 * The HTTPS virtual service of an IngressClass. '_' occurs in no class or cluster name, so it never
 * collides with the HTTP one of another class.
 */
export function l7HttpsName(cluster: string, ingressClass: string): string {
  return limitName(`${cluster}--ingress-${ingressClass}_https`);
}

/**
 * The certificate of a Secret. A namespace holds no '.', so the first '.' ends it and no two
 * Secrets share a name.
 */
export function certificateName(cluster: string, namespace: string, secret: string): string {
  return limitName(`${cluster}--${namespace}.${secret}`);
}

/**
 * The virtual service of a Gateway's listeners on one port and protocol. A namespace holds no '.',
 * and a Gateway's name no upper case, so no two Gateways share a name.
 */
export function gatewayVsName(
  cluster: string,
  gateway: { namespace: string; name: string },
  protocol: string,
  port: number,
): string {
  return limitName(`${cluster}--gw-${gateway.namespace}.${gateway.name}-${protocol}-${port}`);
}

/**
 * The name of an object's twin in another address family: IPv4 objects keep their names (so an
 * upgrade renames nothing), IPv6 ones end in `_v6`. '_' occurs in no Kubernetes name and no name
 * above ends in `_v6`, so a twin never collides with another object.
 */
export function familyName(name: string, family: 'IPv4' | 'IPv6'): string {
  // The suffix survives the length limit: the name before it is cut (and hashed) instead.
  return family === 'IPv4' ? name : `${limitName(name, MAX_NAME - 3)}_v6`;
}

/** Whether a name is an IPv6 twin's (familyName). */
export const isIPv6Name = (name: string): boolean => name.endsWith('_v6');

/** An address and port as people and URLs write them: an IPv6 address in brackets (`[fd00::1]:80`). */
export const hostPort = (address: string, port: number | string): string =>
  address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
