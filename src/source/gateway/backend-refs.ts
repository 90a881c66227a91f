/**
 * A route's references to Services -> the pools its requests go to, through the validation
 * boundary: a backendRef or a RequestMirror filter's Service of another kind (InvalidKind), in
 * another namespace without a ReferenceGrant (RefNotPermitted), missing or without the port
 * (BackendNotFound), or spoken HTTP/2 or TLS the load balancer cannot speak (UnsupportedProtocol)
 * does not resolve and is told to the route's sink; a rule's resolved backendRefs are one pool or a
 * split by weight (a share that does not resolve answered 500), its mirrors the pools it copies to.
 * Pure.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { Service } from '../../kube/objects.ts';
import {
  type BackendRef,
  GATEWAY_GROUP,
  type HttpRouteObject,
  type ReferenceGrant,
  type RouteKindName,
} from '../../kube/gateway-objects.ts';
import type { BackendTls, HttpRoute, Mirror, RuleVariant, WeightedBackend } from '../../model/types.ts';
import type { TlsTarget } from './backend-tls.ts';
import { referencePermitted } from './reference-grants.ts';
import { backendFilters, type MirrorAsk, Refused } from './route-filters.ts';

type ServicePort = Service['spec']['ports'][number];

/** What a route's rules are read against: the cluster's Services and grants, and the device. */
export interface RuleContext {
  /** Services by namespace/name (those of namespaces npl-lb serves). */
  services: Pick<ReadonlyMap<string, Service>, 'get'>;
  grants: readonly ReferenceGrant[];
  poolFor: (svc: Service, port: ServicePort) => string;
  /**
   * The HTTP/2 (h2c) pool of a Service port, for the HTTP/2 route kinds (gRPC) and ports of appProtocol
   * kubernetes.io/h2c; absent when the load balancer speaks HTTP/1.1 to members only.
   */
  h2PoolFor?: ((svc: Service, port: ServicePort) => string) | undefined;
  /**
   * What the load balancer can read (its dialect of regular expressions, the names it matches
   * on), and its name for messages: a route it cannot read is refused alone, naming the field.
   */
  device?: { http: HttpCapabilities; adapter: string };
  /** The BackendTLSPolicies over a Service port and the TLS they ask (backend-tls.ts); absent: none. */
  backendTlsOf?:
    ((namespace: string, service: string, portName: string) => TlsTarget | undefined) | undefined;
  /** The pool of a Service port spoken to over TLS; absent when the load balancer cannot. */
  tlsPoolFor?: ((svc: Service, port: ServicePort, tls: BackendTls) => string) | undefined;
  /** The certificate (by name) the parent Gateway presents to members it speaks TLS to; absent: none. */
  clientCertificate?: string | undefined;
  /**
   * A pool's variant for a rule's retries and session cookie (frontends.ts ruleVariant); absent
   * when the load balancer does neither by route (such a rule is refused).
   */
  variantPoolFor?: ((make: () => string, variant: RuleVariant) => string) | undefined;
}

/** What ruleForwarding reports to its route: a backend that does not resolve, a Service it sends to. */
export interface RefSink {
  refuse: (reason: string, message: string) => void;
  backends: Set<string>;
  /** The BackendTLSPolicies (namespace/name) over the Service ports refs send to. */
  tlsPolicies: Set<string>;
}

/** `kubernetes.io/h2c`: a Service port that speaks HTTP/2 without TLS, with prior knowledge (GEP-1911). */
export const H2C_APP_PROTOCOL = 'kubernetes.io/h2c';

/** Why a port's BackendTLSPolicy cannot be spoken as it asks (its share then answers 500), if so. */
function tlsUnserved(tls: TlsTarget, ctx: RuleContext, h2: boolean): string | undefined {
  if (!tls.tls || !ctx.tlsPoolFor) return tls.problem ?? `BackendTLSPolicy ${tls.policies[0]}: not served`;
  if (h2)
    return `BackendTLSPolicy ${tls.policies[0]}: HTTP/2 over TLS to members is not served by the ${ctx.device?.adapter ?? 'configured'} load balancer`;
  return undefined;
}

/**
 * A rule's backendRefs -> where its requests go: one pool, or a split by weight where a ref that
 * does not resolve keeps its share (answered 500). An HTTP/2 route kind's refs (gRPC), and a Service port whose
 * appProtocol is kubernetes.io/h2c, take the Service port's HTTP/2 pool (`h2PoolFor`); without one
 * (the load balancer speaks HTTP/1.1 to members only) such a ref does not resolve
 * (UnsupportedProtocol), never sent HTTP/1.1 it cannot read.
 */
/**
 * The pool a backendRef's share goes to: over TLS as a policy asks (presenting the parent
 * Gateway's certificate, where it names one), HTTP/2, or plain HTTP/1.1.
 */
function poolOf(
  ctx: RuleContext,
  svc: Service,
  sp: ServicePort,
  tls: BackendTls | undefined,
  h2: boolean,
): string {
  if (tls)
    return ctx.tlsPoolFor!(
      svc,
      sp,
      ctx.clientCertificate ? { ...tls, clientCertificate: ctx.clientCertificate } : tls,
    );
  return h2 ? ctx.h2PoolFor!(svc, sp) : ctx.poolFor(svc, sp);
}

/**
 * A device that splits through one pool of all the shares' members speaks one TLS to them: a rule
 * whose shares differ (`asks`: each resolved share's TLS, '' for clear text) is refused, and every
 * share answers 500 (never clear text where TLS is asked).
 */
function refuseMixedTls(
  split: WeightedBackend[],
  asks: ReadonlySet<string>,
  field: string,
  ctx: RuleContext,
  sink: RefSink,
): void {
  if (asks.size <= 1 || !ctx.device?.http.backendTls?.oneTlsPerSplit) return;
  sink.refuse(
    'UnsupportedProtocol',
    `${field}.backendRefs: its backends differ in TLS to members (a BackendTLSPolicy over some, not all, or other ones), and the ${ctx.device.adapter} load balancer speaks one TLS to a weighted rule's backends; the rule answers 500`,
  );
  for (const s of split) s.pool = null;
}

/** What a reference resolves to for its route: its pool, or null (its share answers 500). */
interface RefPool {
  pool: string | null;
  /** The TLS its pool speaks (JSON), '' for clear text; absent when it did not resolve. */
  tlsAsk?: string;
}

/** Where a route's references are: its namespace and kind, and what its backends speak. */
export interface RefScope {
  namespace: string;
  kind: RouteKindName;
  /** The protocol every backend of this kind speaks in HTTP/2 (gRPC); absent: by appProtocol. */
  http2Protocol?: string;
  /** The rule's retries and session cookie: its backends' pools are their variants for them. */
  variant?: RuleVariant | undefined;
}

/**
 * One Service reference (a backendRef, a mirror's) -> its pool, or null with the reason told to
 * the sink: another kind (InvalidKind), another namespace without a ReferenceGrant
 * (RefNotPermitted), no such Service or port (BackendNotFound), HTTP/2 or TLS the load balancer
 * cannot speak to it (UnsupportedProtocol).
 */
export function refPool(
  b: Pick<BackendRef, 'group' | 'kind' | 'name' | 'namespace' | 'port'>,
  f: string,
  at: RefScope,
  ctx: RuleContext,
  sink: RefSink,
): RefPool {
  const target = b.namespace ?? at.namespace;
  if (b.group !== '' || b.kind !== 'Service') {
    sink.refuse('InvalidKind', `${f}: ${b.group || 'core'}/${b.kind} is not a Service`);
    return { pool: null };
  }
  if (
    !referencePermitted(
      ctx.grants,
      { group: GATEWAY_GROUP, kind: at.kind, namespace: at.namespace },
      { group: '', kind: 'Service', namespace: target, name: b.name },
    )
  ) {
    sink.refuse(
      'RefNotPermitted',
      `${f}: Service ${target}/${b.name} is in another namespace and no ReferenceGrant allows it`,
    );
    return { pool: null };
  }
  const svc = ctx.services.get(`${target}/${b.name}`);
  const sp = svc?.spec.ports.find((p) => p.port === b.port && p.protocol === 'TCP');
  const h2 = at.http2Protocol !== undefined || sp?.appProtocol === H2C_APP_PROTOCOL;
  const unresolved = !svc
    ? `${f}: Service ${target}/${b.name} not found`
    : !sp
      ? `${f}: Service ${target}/${b.name} has no TCP port ${b.port ?? '(none given)'}`
      : undefined;
  if (unresolved || !svc || !sp) {
    sink.refuse('BackendNotFound', unresolved ?? f);
    return { pool: null };
  }
  if (h2 && !ctx.h2PoolFor) {
    sink.refuse(
      'UnsupportedProtocol',
      `${f}: Service ${target}/${b.name} port ${b.port ?? ''} speaks HTTP/2 (${at.http2Protocol ?? H2C_APP_PROTOCOL}), and the ${ctx.device?.adapter ?? 'configured'} load balancer speaks HTTP/1.1 to members`,
    );
    return { pool: null };
  }
  // A port a BackendTLSPolicy targets is spoken to over TLS as it asks, or not at all (its
  // share answers 500): never in clear text, never unverified.
  const tls = ctx.backendTlsOf?.(target, b.name, sp.name ?? '');
  for (const p of tls?.policies ?? []) sink.tlsPolicies.add(p);
  const why = tls && tlsUnserved(tls, ctx, h2);
  if (why) {
    sink.refuse(
      'UnsupportedProtocol',
      `${f}: Service ${target}/${b.name} port ${b.port ?? ''}: ${why}; its share answers 500, never in clear text`,
    );
    return { pool: null };
  }
  const make = () => poolOf(ctx, svc, sp, tls?.tls, h2);
  sink.backends.add(`${target}/${b.name}`);
  return {
    pool: at.variant ? ctx.variantPoolFor!(make, at.variant) : make(),
    tlsAsk: tls?.tls ? JSON.stringify(tls.tls) : '',
  };
}

export function ruleForwarding(
  refs: HttpRouteObject['spec']['rules'][number]['backendRefs'],
  at: RefScope & { field: string; redirects: boolean },
  ctx: RuleContext,
  sink: RefSink,
): Pick<HttpRoute, 'pool' | 'backends'> {
  const split: WeightedBackend[] = [];
  // What each resolved share's pool speaks: its TLS ask, '' for clear text.
  const asks = new Set<string>();
  refs.forEach((b, bi) => {
    const f = `${at.field}.backendRefs[${bi}]`;
    const requestHeaders = backendFilters(b.filters, `${f}.filters`, ctx.device);
    const { pool, tlsAsk } = refPool(b, f, at, ctx, sink);
    if (b.weight > 0 && tlsAsk !== undefined) asks.add(tlsAsk);
    if (b.weight > 0) split.push({ pool, weight: b.weight, ...(requestHeaders ? { requestHeaders } : {}) });
  });
  refuseMixedTls(split, asks, at.field, ctx, sink);
  return at.redirects
    ? { pool: '' }
    : split.length === 1 && split[0]!.pool !== null && !split[0]!.requestHeaders
      ? { pool: split[0]!.pool }
      : { pool: '', backends: split.length > 0 ? split : [{ pool: null, weight: 1 }] };
}

/**
 * A rule's RequestMirror filters -> the pools its requests are copied to. A load balancer that does
 * not mirror, or not that many, refuses the route by name (never served unmirrored); a mirror whose
 * Service does not resolve is left out and said on ResolvedRefs, as the spec asks.
 */
export function ruleMirrors(asks: MirrorAsk[], namespace: string, ctx: RuleContext, sink: RefSink): Mirror[] {
  if (asks.length === 0) return [];
  const can = ctx.device?.http.mirror;
  if (!can)
    throw new Refused(
      `${asks[0]!.field}: filter type RequestMirror is not supported by the ${ctx.device?.adapter ?? 'configured'} load balancer`,
    );
  if (asks.length > can.maxPerRoute)
    throw new Refused(
      `${asks[can.maxPerRoute]!.field}: the ${ctx.device!.adapter} load balancer copies a request to at most ${can.maxPerRoute} backends`,
    );
  return asks.flatMap((a) => {
    const { pool } = refPool(a.ref, `${a.field}.backendRef`, { namespace, kind: 'HTTPRoute' }, ctx, sink);
    return pool === null ? [] : [{ pool, ...(a.share ? { share: a.share } : {}) }];
  });
}
