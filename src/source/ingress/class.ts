/**
 * The Ingresses of one IngressClass of ours -> its virtual services: the shared HTTP one with every
 * rule, and, when some Ingress has a `tls:` section with a good Secret, the shared HTTPS one on
 * the same VIP with the rules of those hosts and their certificates (the default first). Pure.
 */
import {
  CLIENT_CA_ANNOTATION,
  SOURCE_RANGES_ANNOTATION,
  SSL_REDIRECT_ANNOTATION,
} from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, Service } from '../../kube/objects.ts';
import { l7HttpsName, l7Name } from '../../model/names.ts';
import type {
  BackendTls,
  Certificate,
  HostClientValidation,
  HttpRoute,
  L7VirtualService,
} from '../../model/types.ts';
import type { Resolved } from '../gateway/parameters.ts';
import type { Finding, SourceStatus } from '../types.ts';
import { ingressRoutes } from './routes.ts';
import { ingressSourceRanges } from './source-ranges.ts';
import { ingressBackendTls } from './backend-tls.ts';
import {
  type ClientCaClaims,
  clientCaClaims,
  clientCaFinding,
  type ClientCaContext,
  ingressClientCa,
} from './client-ca.ts';
import { certificateForHost, ingressTls, type SecretCertificates } from './tls.ts';

type ServicePort = Service['spec']['ports'][number];

export interface IngressClassContext {
  cluster: string;
  httpPort: number;
  httpsPort: number;
  services: ReadonlyMap<string, Service>;
  poolFor: (svc: Service, port: ServicePort) => string;
  certificateOf: SecretCertificates;
  /** A class's `spec.parameters` resolved (gateway/parameters.ts); absent: none read. */
  parametersOfClass?: (cls: string) => Resolved;
  /** What re-encryption annotations read (ingress/backend-tls.ts); absent: none is. */
  backendTls?: Parameters<typeof ingressBackendTls>[1];
  /** A Service port's pool spoken to over TLS; absent where the load balancer cannot. */
  tlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
  /** What client-certificate annotations read (ingress/client-ca.ts); absent: none is. */
  clientCa?: ClientCaContext;
}

export interface IngressClassResult {
  virtualServices: L7VirtualService[];
  certificates: Certificate[];
  ingresses: Map<string, SourceStatus>;
  findings: Finding[];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** Whether an Ingress asks its HTTPS hosts' plain requests redirected; a bad value is said, and off. */
function sslRedirect(ing: Ingress, findings: Finding[]): boolean {
  const v = ing.metadata.annotations[SSL_REDIRECT_ANNOTATION];
  if (v === undefined || v === 'false') return false;
  if (v === 'true') return true;
  findings.push({
    kind: 'Ingress',
    key: key(ing.metadata),
    type: 'Warning',
    reason: EventReasons.InvalidIngressRule,
    message: `${SSL_REDIRECT_ANNOTATION}: ${JSON.stringify(v.slice(0, 32))} is not "true" or "false"; not redirected`,
  });
  return false;
}

/** The hosts of an Ingress asking a redirect that have no certificate (served over HTTP), said. */
const notRedirected = (ing: Ingress, hosts: ReadonlySet<string>): Finding => ({
  kind: 'Ingress',
  key: key(ing.metadata),
  type: 'Warning',
  reason: EventReasons.InvalidIngressRule,
  message: `${SSL_REDIRECT_ANNOTATION}: no certificate in tls: for ${[...hosts].slice(0, 5).join(', ')}; served over plain HTTP, not redirected`,
});

/** A route's plain-HTTP answer: a 301 to HTTPS on the class's HTTPS port (named when not 443). */
const toHttps = (route: HttpRoute, httpsPort: number): HttpRoute => {
  const { pool: _pool, ...rest } = route;
  return {
    ...rest,
    pool: '',
    redirect: { scheme: 'https', ...(httpsPort !== 443 ? { port: httpsPort } : {}), statusCode: 301 },
  };
};

/**
 * An Ingress's routes with its client filter on each of its rules; a filter that cannot be read
 * serves none of them. The class's default backend takes every request no rule takes, whoever
 * sends it: a filtered Ingress does not supply it (said), so its filter is never bypassed there.
 */
function filteredRoutes(
  ing: Ingress,
  ctx: IngressClassContext,
  defaultFrom: string | undefined,
  findings: Finding[],
): ReturnType<typeof ingressRoutes> {
  const ranges = ingressSourceRanges(ing, findings);
  // Re-encryption asked by annotation: every pool of the Ingress speaks TLS, or none is served.
  const tls = ctx.backendTls ? ingressBackendTls(ing, ctx.backendTls, findings) : undefined;
  const tlsPoolFor = ctx.tlsPoolFor;
  const poolFor =
    tls && tls !== 'refused' && tlsPoolFor
      ? (svc: Service, sp: ServicePort) => tlsPoolFor(svc, sp, tls)
      : ctx.poolFor;
  const built = ingressRoutes(ing, ctx.services, poolFor, defaultFrom);
  // TLS asked and no TLS pool to give it (never clear text instead).
  if (tls === 'refused' || (tls && !tlsPoolFor)) return { ...built, routes: [], defaultPool: undefined };
  if (ranges && built.defaultPool)
    findings.push({
      kind: 'Ingress',
      key: key(ing.metadata),
      type: 'Warning',
      reason: EventReasons.InvalidIngressRule,
      message: `spec.defaultBackend is not served: the class's default backend takes requests no rule takes from any client, and ${SOURCE_RANGES_ANNOTATION} filters this Ingress's clients`,
    });
  return ranges === 'refused'
    ? { ...built, routes: [], defaultPool: undefined }
    : ranges
      ? {
          ...built,
          routes: built.routes.map((x) => ({ ...x, sourceRanges: ranges })),
          defaultPool: undefined,
        }
      : built;
}

/** The class's HTTP virtual service, and its HTTPS one where a rule or the default has a certificate. */
function classVirtualServices(o: {
  cls: string;
  vip: string;
  name: string;
  httpsName: string;
  routes: HttpRoute[];
  secure: HttpRoute[];
  defaultPool?: string | undefined;
  secureDefault?: string | undefined;
  certs: Map<string, Certificate>;
  ctx: IngressClassContext;
  hostClientValidation: HostClientValidation[];
}): L7VirtualService[] {
  const { cls, vip, name, httpsName, routes, secure, defaultPool, secureDefault, certs, ctx } = o;
  // Hosts asking client certificates: the handshake's server name must select the Host's own
  // (every host listed, so a name that asks nothing cannot reach a host that asks: 421).
  const asking =
    o.hostClientValidation.length > 0
      ? {
          hostClientValidation: o.hostClientValidation,
          listenerHosts: [...new Set(['', ...secure.map((r) => r.host)])].sort(),
        }
      : {};
  const virtualServices: L7VirtualService[] = [];
  if (routes.length > 0 || defaultPool) {
    const base = { kind: 'l7', vip, ingressClass: cls } as const;
    virtualServices.push({ ...base, name, port: ctx.httpPort, routes, defaultPool });
    if (secure.length > 0 || secureDefault) {
      const names = [...certs.keys()].sort();
      virtualServices.push({
        ...base,
        name: httpsName,
        port: ctx.httpsPort,
        routes: secure,
        defaultPool: secureDefault,
        protocol: 'HTTPS',
        certificates: names,
        ...asking,
      });
    }
  }
  return virtualServices;
}

/** One Ingress as read: its routes, certificates, redirect and client CA, findings said once. */
interface ReadIngress {
  ing: Ingress;
  key: string;
  r: ReturnType<typeof ingressRoutes>;
  tls: ReturnType<typeof ingressTls>;
  redirect: boolean;
  clientCa: string | undefined;
}

function readIngress(
  ing: Ingress,
  ctx: IngressClassContext,
  defaultFrom: string | undefined,
  findings: Finding[],
): ReadIngress {
  const r = filteredRoutes(ing, ctx, defaultFrom, findings);
  const tls = ingressTls(ing, ctx.certificateOf);
  const redirect = sslRedirect(ing, findings);
  const ca = ctx.clientCa ? ingressClientCa(ing, ctx.clientCa, findings) : undefined;
  findings.push(...r.findings, ...tls.findings);
  // Client certificates asked and not to be had: none of its rules is served.
  if (ca === 'refused')
    return {
      ing,
      key: key(ing.metadata),
      r: { ...r, routes: [], defaultPool: undefined },
      tls,
      redirect,
      clientCa: undefined,
    };
  return { ing, key: key(ing.metadata), r, tls, redirect, clientCa: ca };
}

/** What the class's Ingresses add up to, one after another (placeIngress). */
interface ClassParts {
  routes: HttpRoute[];
  secure: HttpRoute[];
  certs: Map<string, Certificate>;
  defaultPool?: string;
  secureDefault?: string;
}

/**
 * One Ingress's rules placed on the class's services: on HTTPS where its host has a certificate
 * (the plain twin redirected where asked, or where the host asks client certificates), on HTTP
 * only otherwise; its default backend unless it asks client certificates. Whether it is on HTTPS.
 */
function placeIngress(
  one: ReadIngress,
  claims: ClientCaClaims,
  parts: ClassParts,
  httpsPort: number,
  findings: Finding[],
): boolean {
  const { ing, r, tls, redirect, clientCa } = one;
  let onHttps = false;
  const plain = new Set<string>();
  for (const route of claims.servable(r.routes)) {
    const cert = certificateForHost(tls, route.host);
    const asked = claims.hosts.has(route.host);
    if (!cert) {
      // A host asking client certificates is never served in clear text.
      parts.routes.push(asked ? toHttps(route, httpsPort) : route);
      if (!asked) plain.add(route.host || '*');
      continue;
    }
    parts.certs.set(cert.name, cert);
    parts.secure.push(route);
    onHttps = true;
    // Its plain-HTTP twin answers with a redirect to the same URL over HTTPS.
    parts.routes.push(redirect || asked ? toHttps(route, httpsPort) : route);
  }
  if (redirect && plain.size > 0) findings.push(notRedirected(ing, plain));
  if (r.defaultPool && clientCa !== undefined)
    findings.push(
      clientCaFinding(
        ing,
        `spec.defaultBackend is not served: the class's default backend takes requests of any host, and ${CLIENT_CA_ANNOTATION} asks client certificates for this Ingress's hosts`,
      ),
    );
  else if (r.defaultPool) {
    parts.defaultPool = r.defaultPool;
    if (tls.all) {
      parts.certs.set(tls.all.name, tls.all);
      parts.secureDefault = r.defaultPool;
      onHttps = true;
    }
  }
  return onHttps;
}

export function ingressClassServices(
  cls: string,
  ings: Ingress[],
  vipResult: { vip?: string; problem?: string; reason?: string },
  ctx: IngressClassContext,
): IngressClassResult {
  const { vip, problem, reason } = vipResult;
  const name = l7Name(ctx.cluster, cls);
  const httpsName = l7HttpsName(ctx.cluster, cls);
  const parts: ClassParts = { routes: [], secure: [], certs: new Map() };
  const findings: Finding[] = [];
  const ingresses = new Map<string, SourceStatus>();
  const read: ReadIngress[] = [];
  let defaultFrom: string | undefined;
  for (const ing of [...ings].sort((a, b) => (key(a.metadata) < key(b.metadata) ? -1 : 1))) {
    const one = readIngress(ing, ctx, defaultFrom, findings);
    if (one.r.defaultPool && one.clientCa === undefined) defaultFrom = one.key;
    read.push(one);
  }
  // The hosts whose handshakes ask client certificates, and what each Ingress of them may serve.
  const claims = clientCaClaims(read, findings);
  for (const one of read) {
    const onHttps = placeIngress(one, claims, parts, ctx.httpsPort, findings);
    ingresses.set(one.key, {
      vip,
      virtualServices: vip ? (onHttps ? [name, httpsName] : [name]) : [],
      problem,
      reason,
    });
  }
  const hostClientValidation = [...claims.hosts.values()].sort((a, b) => (a.host < b.host ? -1 : 1));
  const virtualServices = vip
    ? classVirtualServices({ cls, vip, name, httpsName, ...parts, ctx, hostClientValidation })
    : [];
  const certificates = virtualServices.length > 1 ? [...parts.certs.values()] : [];
  return { virtualServices, certificates, ingresses, findings };
}
