/**
 * The rules of one HTTPRoute -> model routes (one per match and host), through the validation
 * boundary: paths, header and query names and values, regular expressions, redirect targets and
 * rewrites are checked before they enter the model. backendRefs resolve to pools: a ref of another
 * kind (InvalidKind), to another namespace without a ReferenceGrant (RefNotPermitted), or to a
 * Service or port that does not exist (BackendNotFound) keeps its share of the traffic, answered
 * 500. Filters (route-filters.ts) npl-lb does not implement make the route UnsupportedValue. Pure.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { Service } from '../../kube/objects.ts';
import {
  type BackendRef,
  GATEWAY_GROUP,
  type HttpRouteMatch,
  type HttpRouteObject,
  type ReferenceGrant,
  type RouteKindName,
} from '../../kube/gateway-objects.ts';
import type {
  BackendTls,
  HttpRoute,
  Mirror,
  RuleVariant,
  ValueMatch,
  WeightedBackend,
} from '../../model/types.ts';
import {
  headerNameProblem,
  headerValueProblem,
  methodProblem,
  pathProblem,
  regexProblem,
} from '../validate.ts';
import type { TlsTarget } from './backend-tls.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { referencePermitted } from './reference-grants.ts';
import { backendFilters, filtersOf, type MirrorAsk, Refused } from './route-filters.ts';
import { durationMs } from './durations.ts';
import { ruleRetry } from './rule-retry.ts';
import { ruleSession } from './rule-session.ts';

export { filtersOf, Refused } from './route-filters.ts';

type ServicePort = Service['spec']['ports'][number];

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

/** A route rule ready to be placed on hosts: everything but the host and the order. */
export type RouteTemplate = Omit<HttpRoute, 'host' | 'order'> & { rule: number; match: number };

export interface HttpRuleResult {
  templates: RouteTemplate[];
  /** ResolvedRefs of every parent (backendRefs do not depend on the parent). */
  resolvedRefs: ConditionSpec;
  /** Something npl-lb cannot serve (a filter it lacks, a value refused): Accepted False, UnsupportedValue. */
  unsupported: string | undefined;
  /** Services (namespace/name) the route sends to: auto-annotated for NodePortLocal. */
  backends: Set<string>;
  /** BackendTLSPolicies (namespace/name) over the Service ports the route sends to. */
  tlsPolicies: Set<string>;
}

/** A match name the device cannot read (one that reads names inside a fetch's parentheses). */
function matchNameProblem(name: string, device: RuleContext['device']): string | undefined {
  const names = device?.http.matchNames;
  if (!names || names.pattern.test(name)) return undefined;
  return `the ${device.adapter} load balancer matches only names of ${names.description}, not ${JSON.stringify(name.slice(0, 64))}`;
}

export function valueMatches(
  list: HttpRouteMatch['headers'],
  field: string,
  device: RuleContext['device'],
): ValueMatch[] {
  return list.map((m, i) => {
    const nameProblem = headerNameProblem(m.name) ?? matchNameProblem(m.name, device);
    if (nameProblem) throw new Refused(`${field}[${i}].name: ${nameProblem}`);
    const p =
      m.type === 'RegularExpression'
        ? regexProblem(m.value, device?.http.regexDialect)
        : headerValueProblem(m.value);
    if (p) throw new Refused(`${field}[${i}].value: ${p}`);
    if (m.type !== 'Exact' && m.type !== 'RegularExpression')
      throw new Refused(`${field}[${i}].type ${m.type}`);
    return { name: m.name, value: m.value, type: m.type };
  });
}

/** The fields of an HTTPRoute rule npl-lb serves. */
const RULE_FIELDS = new Set([
  'name',
  'matches',
  'filters',
  'backendRefs',
  'timeouts',
  'retry',
  'sessionPersistence',
]);

/**
 * A rule's `timeouts` as one backend timeout: the shorter of `request` and `backendRequest` that
 * is set and not 0s (without retries the backend's answer is the whole request); 0 when what is
 * set is 0s (no limit); undefined when neither is set.
 */
function ruleTimeout(t: unknown, field: string): number | undefined {
  if (t === undefined) return undefined;
  const o = (t ?? {}) as Record<string, unknown>;
  const extra = Object.keys(o).find((k) => k !== 'request' && k !== 'backendRequest');
  if (extra) throw new Refused(`${field}.${extra.slice(0, 64)}: not supported by npl-lb yet`);
  const ms: number[] = [];
  for (const k of ['request', 'backendRequest'] as const) {
    if (o[k] === undefined) continue;
    const v = typeof o[k] === 'string' ? durationMs(o[k]) : undefined;
    if (v === undefined)
      throw new Refused(`${field}.${k}: not a duration (${JSON.stringify(o[k]).slice(0, 32)})`);
    ms.push(v);
  }
  if (ms.length === 0) return undefined;
  const limits = ms.filter((v) => v > 0);
  return limits.length ? Math.min(...limits) : 0;
}

function pathOf(
  m: HttpRouteMatch,
  field: string,
  device: RuleContext['device'],
): Pick<HttpRoute, 'path' | 'pathType'> {
  const { type, value } = m.path;
  if (type === 'RegularExpression') {
    const p = regexProblem(value, device?.http.regexDialect);
    if (p) throw new Refused(`${field}.path: ${p}`);
    return { path: value, pathType: 'RegularExpression' };
  }
  const pathType = type === 'Exact' ? 'Exact' : type === 'PathPrefix' ? 'Prefix' : undefined;
  if (!pathType) throw new Refused(`${field}.path.type ${type}`);
  const p = pathProblem(value, pathType);
  if (p) throw new Refused(`${field}.path: ${p}`);
  return { path: value, pathType };
}

/** One match of a rule as a route template: the rule's forwarding and filters, and the match's own. */
function matchTemplate(
  m: HttpRouteMatch,
  at: string,
  shared: Omit<RouteTemplate, 'path' | 'pathType'>,
  ctx: RuleContext,
): RouteTemplate {
  const t: RouteTemplate = { ...pathOf(m, at, ctx.device), ...shared };
  const headers = valueMatches(m.headers, `${at}.headers`, ctx.device);
  const query = valueMatches(m.queryParams, `${at}.queryParams`, ctx.device);
  if (headers.length > 0) t.headers = headers;
  if (query.length > 0) t.queryParams = query;
  if (m.method !== undefined) {
    const p = methodProblem(m.method);
    if (p) throw new Refused(`${at}.method: ${p}`);
    t.method = m.method;
  }
  return t;
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
 * A route's rules through `each` (which pushes templates and reports refs to the sink): one
 * ResolvedRefs for all of them, the first reference that does not resolve saying why, and a
 * refused value (Refused) refusing the whole route.
 */
export function collectRules(each: (sink: RefSink, templates: RouteTemplate[]) => void): HttpRuleResult {
  const templates: RouteTemplate[] = [];
  const backends = new Set<string>();
  const tlsPolicies = new Set<string>();
  let resolvedRefs = cond('ResolvedRefs', true, 'ResolvedRefs');
  const refuse = (reason: string, message: string) => {
    if (resolvedRefs.status) resolvedRefs = cond('ResolvedRefs', false, reason, message);
  };
  try {
    each({ refuse, backends, tlsPolicies }, templates);
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return { templates: [], resolvedRefs, unsupported: err.message, backends, tlsPolicies };
  }
  return { templates, resolvedRefs, unsupported: undefined, backends, tlsPolicies };
}

/**
 * A rule's RequestMirror filters -> the pools its requests are copied to. A load balancer that does
 * not mirror, or not that many, refuses the route by name (never served unmirrored); a mirror whose
 * Service does not resolve is left out and said on ResolvedRefs, as the spec asks.
 */
function ruleMirrors(asks: MirrorAsk[], namespace: string, ctx: RuleContext, sink: RefSink): Mirror[] {
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

export function httpRules(route: HttpRouteObject, ctx: RuleContext): HttpRuleResult {
  const ns = route.metadata.namespace;
  const source = `HTTPRoute ${ns}/${route.metadata.name}`;
  return collectRules((sink, templates) =>
    route.spec.rules.forEach((rule, ri) => {
      const field = `spec.rules[${ri}]`;
      // A field of the rule npl-lb does not carry (retry, sessionPersistence, ...) refuses
      // the route, naming it: never accepted and silently dropped.
      const extra = Object.keys(rule).find((k) => !RULE_FIELDS.has(k));
      if (extra) throw new Refused(`${field}.${extra.slice(0, 64)}: not supported by npl-lb yet`);
      const asks: MirrorAsk[] = [];
      const filters = filtersOf(rule.filters, `${field}.filters`, asks);
      const mirrors = ruleMirrors(asks, ns, ctx, sink);
      const {
        timeouts,
        retry: asked,
        sessionPersistence,
      } = rule as { timeouts?: unknown; retry?: unknown; sessionPersistence?: unknown };
      const timeoutMs = ruleTimeout(timeouts, `${field}.timeouts`);
      const adapter = ctx.device?.adapter ?? 'configured';
      const retry = ruleRetry(asked, timeouts, `${field}.retry`, {
        retry: ctx.variantPoolFor ? ctx.device?.http.retry : undefined,
        adapter,
      });
      const session = ruleSession(sessionPersistence, `${field}.sessionPersistence`, {
        sessionCookie: ctx.variantPoolFor ? ctx.device?.http.sessionCookie : undefined,
        adapter,
      });
      const variant =
        retry || session ? { ...(retry ? { retry } : {}), ...(session ? { session } : {}) } : undefined;
      const forwarding = ruleForwarding(
        rule.backendRefs,
        { field, namespace: ns, kind: 'HTTPRoute', redirects: filters.redirect !== undefined, variant },
        ctx,
        sink,
      );
      const shared = {
        ...forwarding,
        ...filters,
        ...(mirrors.length > 0 ? { mirrors } : {}),
        ...(timeoutMs !== undefined ? { timeoutMs } : {}),
        source,
        rule: ri,
      };
      rule.matches.forEach((m, mi) =>
        templates.push(matchTemplate(m, `${field}.matches[${mi}]`, { ...shared, match: mi }, ctx)),
      );
    }),
  );
}
