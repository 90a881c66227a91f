/**
 * The rules of one HTTPRoute -> model routes (one per match and host), through the validation
 * boundary: paths, header and query names and values, regular expressions, redirect targets and
 * rewrites are checked before they enter the model. backendRefs and mirrors resolve to pools
 * (backend-refs.ts: a ref that does not resolve keeps its share of the traffic, answered 500).
 * Filters (route-filters.ts) npl-lb does not implement make the route UnsupportedValue. Pure.
 */
import type { HttpRouteMatch, HttpRouteObject } from '../../kube/gateway-objects.ts';
import type { HttpRoute, ValueMatch } from '../../model/types.ts';
import {
  headerNameProblem,
  headerValueProblem,
  methodProblem,
  pathProblem,
  regexProblem,
} from '../validate.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { filtersOf, type MirrorAsk, Refused } from './route-filters.ts';
import { type RefSink, type RuleContext, ruleForwarding, ruleMirrors } from './backend-refs.ts';
import { durationMs } from './durations.ts';
import { ruleRetry } from './rule-retry.ts';
import { ruleSession } from './rule-session.ts';

export { filtersOf, Refused } from './route-filters.ts';
export { ruleForwarding, type RuleContext } from './backend-refs.ts';

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
