/**
 * The test kit's load-balancer model: members, pools, virtual services, routes and certificates
 * with the defaults most tests want, each overridable. One set for every test, instead of a copy
 * per file.
 */
import type {
  Certificate,
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  LbState,
  Member,
  Pool,
  VirtualService,
} from '../../src/model/types.ts';
import { persistenceCookie } from '../../src/model/persistence.ts';

/** A cookie's name as the policy tables say it: `own` for the pool's own (persistenceCookie). */
export const cookieWord = (pool: string, name: unknown): string =>
  name === persistenceCookie(pool) ? 'own' : String(name);

/** A member on node n1, enabled, for Pod ns/p unless told. */
export const member = (address: string, port: number, o: Partial<Member> = {}): Member => ({
  address,
  port,
  node: 'n1',
  pod: 'ns/p',
  enabled: true,
  ...o,
});

/** A TCP pool with a TCP check, of Service ns/s port 80 unless told. */
export const pool = (
  name: string,
  members: Member[] = [],
  o: Partial<Omit<Pool, 'name' | 'members'>> = {},
): Pool => ({
  name,
  protocol: 'TCP',
  health: 'tcp',
  service: 'ns/s',
  servicePort: '80',
  members,
  ...o,
});

/** An L4 TCP virtual service on 192.0.2.10:80 unless told. */
export const l4 = (
  name: string,
  poolName: string,
  o: Partial<Omit<L4VirtualService, 'kind' | 'name' | 'pool'>> = {},
): L4VirtualService => ({
  kind: 'l4',
  name,
  vip: '192.0.2.10',
  port: 80,
  protocol: 'TCP',
  pool: poolName,
  source: 'ns/s',
  ...o,
});

/** A route of a.example.com / (Prefix) to a pool, from Ingress ns/i unless told. */
export const route = (o: Partial<HttpRoute> = {}): HttpRoute => ({
  host: 'a.example.com',
  path: '/',
  pathType: 'Prefix',
  pool: 'p',
  source: 'Ingress ns/i',
  ...o,
});

/** An L7 HTTP virtual service on 192.0.2.10:80 of class c unless told. */
export const l7 = (
  name: string,
  routes: HttpRoute[],
  o: Partial<Omit<L7VirtualService, 'kind' | 'name' | 'routes'>> = {},
): L7VirtualService => ({
  kind: 'l7',
  name,
  vip: '192.0.2.10',
  port: 80,
  ingressClass: 'c',
  defaultPool: undefined,
  routes,
  ...o,
});

/** The HTTPS twin of `l7`, on port 443, serving these certificates. */
export const https = (
  name: string,
  certificates: string[],
  routes: HttpRoute[] = [route()],
  o: Partial<L7VirtualService> = {},
): L7VirtualService => l7(name, routes, { port: 443, protocol: 'HTTPS', certificates, ...o });

/** A certificate record (not a real PEM: for the model and the plan, not for a device). */
export const certificate = (name: string, o: Partial<Certificate> = {}): Certificate => ({
  name,
  source: 'ns/tls',
  certPem: '-----BEGIN CERTIFICATE-----',
  keyPem: '-----BEGIN PRIVATE KEY-----',
  subject: 'CN=a.example.com',
  sniNames: ['a.example.com'],
  fingerprint: 'AA',
  notAfter: '2030-01-01T00:00:00.000Z',
  ...o,
});

export const state = (
  pools: Pool[],
  virtualServices: VirtualService[],
  certificates?: Certificate[],
): LbState => ({
  pools,
  virtualServices,
  ...(certificates ? { certificates } : {}),
});

/**
 * A TLS port of both modes (Mixed): `through` passed through to the 8443 pool, tls.example.com
 * terminated with one certificate and sent to the 3000 pool (a Gateway's TLS listeners on 8883).
 */
export const mixedTlsPort = (through = 'abc.example.com'): L4VirtualService => ({
  kind: 'l4',
  name: 'c1--gw-infra.mixed-TLS-8883',
  vip: '198.51.100.7',
  port: 8883,
  protocol: 'TCP',
  pool: '',
  source: 'Gateway infra/mixed',
  certificates: ['c1--infra.tls-terminate-checks-certificate'],
  sni: [
    {
      host: through,
      pool: 'c1--infra-tcp-backend-8443',
      source: 'TLSRoute infra/through',
      passthrough: true,
    },
    { host: 'tls.example.com', pool: 'c1--infra-tcp-backend-3000', source: 'TLSRoute infra/terminated' },
  ],
});
