/**
 * The rules of one GRPCRoute -> model routes, as HTTP/2 requests are routed: a gRPC method is the
 * path `/<service>/<method>` of a POST, so a method match is a path match (both named: the exact
 * path; the service alone: its path prefix; the method alone or a regular expression: a path
 * expression), header matches are header matches, and the header filters are the HTTPRoute's.
 * Backends take the Service port's HTTP/2 pool (h2c: gRPC is HTTP/2 only). Names and expressions
 * pass the validation boundary before they enter the model; a filter or field npl-lb does not
 * serve refuses the route (UnsupportedValue), naming it. Pure.
 */
import type { GrpcRouteMatch, GrpcRouteObject } from '../../kube/gateway-objects.ts';
import type { HttpRoute } from '../../model/types.ts';
import { regexProblem } from '../validate.ts';
import {
  collectRules,
  filtersOf,
  type HttpRuleResult,
  Refused,
  type RouteTemplate,
  type RuleContext,
  ruleForwarding,
  valueMatches,
} from './http-rules.ts';

/** The fields of a GRPCRoute rule npl-lb serves. */
const RULE_FIELDS = new Set(['name', 'matches', 'filters', 'backendRefs']);
/** The filters of a GRPCRoute npl-lb serves (RequestMirror and ExtensionRef are refused by name). */
const FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier']);

/** The CRD's patterns: a service is a dotted name, a method one name (case as written). */
const SERVICE = /^\.?[A-Za-z_][A-Za-z_0-9]*(\.[A-Za-z_][A-Za-z_0-9]*)*$/;
const METHOD = /^[A-Za-z_][A-Za-z_0-9]*$/;

/** A method match as a path match. */
export function methodPath(
  m: GrpcRouteMatch['method'],
  field: string,
  device: RuleContext['device'],
): Pick<HttpRoute, 'path' | 'pathType'> {
  if (!m || (m.service === undefined && m.method === undefined)) return { path: '/', pathType: 'Prefix' };
  const { service, method } = m;
  if (m.type === 'RegularExpression') {
    for (const [name, v] of [
      ['service', service],
      ['method', method],
    ] as const) {
      const p = v === undefined ? undefined : regexProblem(v, device?.http.regexDialect);
      if (p) throw new Refused(`${field}.method.${name}: ${p}`);
      if (v?.includes('/')) throw new Refused(`${field}.method.${name}: a gRPC name holds no '/'`);
    }
    return {
      path: `^/(?:${service ?? '[^/]+'})/(?:${method ?? '[^/]+'})$`,
      pathType: 'RegularExpression',
    };
  }
  if (m.type !== 'Exact') throw new Refused(`${field}.method.type ${String(m.type).slice(0, 32)}`);
  if (service !== undefined && !SERVICE.test(service))
    throw new Refused(
      `${field}.method.service: ${JSON.stringify(service.slice(0, 64))} is not a gRPC service name`,
    );
  if (method !== undefined && !METHOD.test(method))
    throw new Refused(
      `${field}.method.method: ${JSON.stringify(method.slice(0, 64))} is not a gRPC method name`,
    );
  if (service !== undefined && method !== undefined)
    return { path: `/${service}/${method}`, pathType: 'Exact' };
  if (service !== undefined) return { path: `/${service}`, pathType: 'Prefix' };
  // The method of any service: a path expression (its name is letters, digits and '_').
  return { path: `^/[^/]+/${method!}$`, pathType: 'RegularExpression' };
}

export function grpcRules(route: GrpcRouteObject, ctx: RuleContext): HttpRuleResult {
  const ns = route.metadata.namespace;
  const source = `GRPCRoute ${ns}/${route.metadata.name}`;
  return collectRules((sink, templates) =>
    route.spec.rules.forEach((rule, ri) => {
      const field = `spec.rules[${ri}]`;
      const extra = Object.keys(rule).find((k) => !RULE_FIELDS.has(k));
      if (extra) throw new Refused(`${field}.${extra.slice(0, 64)}: not supported by npl-lb yet`);
      rule.filters.forEach((f, i) => {
        if (!FILTERS.has(f.type))
          throw new Refused(`${field}.filters[${i}]: filter type ${f.type.slice(0, 64)} is not supported`);
      });
      const filters = filtersOf(rule.filters, `${field}.filters`);
      const forwarding = ruleForwarding(
        rule.backendRefs,
        { field, namespace: ns, kind: 'GRPCRoute', redirects: false, http2Protocol: 'gRPC' },
        ctx,
        sink,
      );
      const shared = { ...forwarding, ...filters, source, rule: ri };
      rule.matches.forEach((m, mi) => {
        const at = `${field}.matches[${mi}]`;
        const extraMatch = Object.keys(m).find((k) => k !== 'method' && k !== 'headers');
        if (extraMatch) throw new Refused(`${at}.${extraMatch.slice(0, 64)}: not supported by npl-lb yet`);
        const t: RouteTemplate = { ...methodPath(m.method, at, ctx.device), ...shared, match: mi };
        const headers = valueMatches(m.headers, `${at}.headers`, ctx.device);
        if (headers.length > 0) t.headers = headers;
        templates.push(t);
      });
    }),
  );
}
