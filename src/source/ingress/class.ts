/**
 * The Ingresses of one IngressClass of ours -> its virtual services: the shared HTTP one with every
 * rule, and, when some Ingress has a `tls:` section with a good Secret, the shared HTTPS one on
 * the same VIP with the rules of those hosts and their certificates (the default first). Pure.
 */
import { SOURCE_RANGES_ANNOTATION, SSL_REDIRECT_ANNOTATION } from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, Service } from '../../kube/objects.ts';
import { l7HttpsName, l7Name } from '../../model/names.ts';
import type { BackendTls, Certificate, HttpRoute, L7VirtualService } from '../../model/types.ts';
import type { Resolved } from '../gateway/parameters.ts';
import type { Finding, SourceStatus } from '../types.ts';
import { ingressRoutes } from './routes.ts';
import { ingressSourceRanges } from './source-ranges.ts';
import { ingressBackendTls } from './backend-tls.ts';
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
  defaultPool: string | undefined;
  secureDefault: string | undefined;
  certs: Map<string, Certificate>;
  ctx: IngressClassContext;
}): L7VirtualService[] {
  const { cls, vip, name, httpsName, routes, secure, defaultPool, secureDefault, certs, ctx } = o;
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
      });
    }
  }
  return virtualServices;
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
  const routes: HttpRoute[] = [];
  const secure: HttpRoute[] = [];
  const certs = new Map<string, Certificate>();
  let defaultPool: string | undefined;
  let defaultFrom: string | undefined;
  let secureDefault: string | undefined;
  const findings: Finding[] = [];
  const ingresses = new Map<string, SourceStatus>();
  for (const ing of [...ings].sort((a, b) => (key(a.metadata) < key(b.metadata) ? -1 : 1))) {
    const r = filteredRoutes(ing, ctx, defaultFrom, findings);
    const tls = ingressTls(ing, ctx.certificateOf);
    const redirect = sslRedirect(ing, findings);
    let onHttps = false;
    const plain = new Set<string>();
    for (const route of r.routes) {
      const cert = certificateForHost(tls, route.host);
      if (!cert) {
        routes.push(route);
        plain.add(route.host || '*');
        continue;
      }
      certs.set(cert.name, cert);
      secure.push(route);
      onHttps = true;
      // Its plain-HTTP twin answers with a redirect to the same URL over HTTPS.
      routes.push(redirect ? toHttps(route, ctx.httpsPort) : route);
    }
    if (redirect && plain.size > 0) findings.push(notRedirected(ing, plain));
    if (r.defaultPool) {
      defaultPool = r.defaultPool;
      defaultFrom = key(ing.metadata);
      if (tls.all) {
        certs.set(tls.all.name, tls.all);
        secureDefault = r.defaultPool;
        onHttps = true;
      }
    }
    findings.push(...r.findings, ...tls.findings);
    ingresses.set(key(ing.metadata), {
      vip,
      virtualServices: vip ? (onHttps ? [name, httpsName] : [name]) : [],
      problem,
      reason,
    });
  }
  const virtualServices = vip
    ? classVirtualServices({
        cls,
        vip,
        name,
        httpsName,
        routes,
        secure,
        defaultPool,
        secureDefault,
        certs,
        ctx,
      })
    : [];
  const certificates = virtualServices.length > 1 ? [...certs.values()] : [];
  return { virtualServices, certificates, ingresses, findings };
}
