/**
 * The filters of an HTTPRoute rule and of its backendRefs, through the validation boundary: header
 * modifiers (names and values checked), redirects (status, scheme, hostname, port, path), URL
 * rewrites, CORS (origins, methods, header names, max age, each as the CRD allows it) and request
 * mirrors (the share copied; where copies go is resolved by the caller); a filter npl-lb does not implement, or a backendRef filter where the load balancer
 * does not apply them, refuses the whole route by name (Refused). Pure.
 */
import type { HttpRouteFilter } from '../../kube/gateway-objects.ts';
import type {
  CorsPolicy,
  HeaderModifier,
  HttpRoute,
  Mirror,
  PathModifier,
  Redirect,
  Rewrite,
} from '../../model/types.ts';
import { headerNameProblem, headerValueProblem, hostProblem, pathProblem } from '../validate.ts';
import type { HttpCapabilities } from '../../adapter/contract.ts';

/** A value the route cannot be served with: the whole route is UnsupportedValue, with this message. */
export class Refused extends Error {}

function headerModifier(
  m: NonNullable<HttpRouteFilter['requestHeaderModifier']>,
  field: string,
): HeaderModifier {
  const check = (list: { name: string; value: string }[], f: string) =>
    list.map((h, i) => {
      const p = headerNameProblem(h.name) ?? headerValueProblem(h.value);
      if (p) throw new Refused(`${field}.${f}[${i}]: ${p}`);
      return { name: h.name, value: h.value };
    });
  m.remove.forEach((n, i) => {
    const p = headerNameProblem(n);
    if (p) throw new Refused(`${field}.remove[${i}]: ${p}`);
  });
  return { set: check(m.set, 'set'), add: check(m.add, 'add'), remove: [...m.remove] };
}

function pathModifier(
  p: {
    type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
    replaceFullPath?: string | undefined;
    replacePrefixMatch?: string | undefined;
  },
  field: string,
): PathModifier {
  const value = (p.type === 'ReplaceFullPath' ? p.replaceFullPath : p.replacePrefixMatch) ?? '/';
  const problem = pathProblem(value, 'ImplementationSpecific');
  if (problem) throw new Refused(`${field}: ${problem}`);
  return { type: p.type, value };
}

const STATUS = new Set([301, 302, 303, 307, 308]);

/** The CRD's pattern of an allowed origin: `*`, or `http(s)://host[:port]`, the host's leftmost label `*`. */
const ORIGIN = /^(?:\*|https?:\/\/(?:(?:\*\.)?(?:[a-zA-Z0-9-]+\.)*[a-zA-Z0-9-]+|\*)(?::[0-9]{1,5})?)$/;
const METHODS = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  '*',
]);
/** The CRD's limits: origins and header names at most 64 each, methods 9; max age an int32 from 1. */
const MAX_CORS_ITEMS = 64;

function corsList(list: string[], field: string, check: (v: string) => string | undefined): string[] {
  if (list.length > MAX_CORS_ITEMS) throw new Refused(`${field}: more than ${MAX_CORS_ITEMS} entries`);
  list.forEach((v, i) => {
    const p = check(v);
    if (p) throw new Refused(`${field}[${i}]: ${p}`);
  });
  if (list.includes('*') && list.length > 1) throw new Refused(`${field}: '*' must stand alone`);
  if (new Set(list.map((v) => v.toLowerCase())).size !== list.length)
    throw new Refused(`${field}: an entry is listed twice`);
  return [...list];
}

function corsPolicy(c: NonNullable<HttpRouteFilter['cors']>, field: string): CorsPolicy {
  const origin = (o: string) =>
    o.length <= 253 &&
    ORIGIN.test(o) &&
    o
      .split(':')
      .slice(2)
      .every((p) => Number(p) >= 1 && Number(p) <= 65535)
      ? undefined
      : `origin ${JSON.stringify(o.slice(0, 64))} is not * or scheme://host[:port]`;
  const header = (h: string) => (h === '*' ? undefined : headerNameProblem(h));
  const maxAge = c.maxAge;
  if (maxAge < 1 || maxAge > 2_147_483_647)
    throw new Refused(`${field}.maxAge ${maxAge}: from 1 to 2147483647`);
  return {
    allowOrigins: corsList(c.allowOrigins, `${field}.allowOrigins`, origin),
    allowMethods: corsList(c.allowMethods, `${field}.allowMethods`, (m) =>
      METHODS.has(m) ? undefined : `method ${JSON.stringify(m.slice(0, 16))} is not one the CRD lists`,
    ),
    allowHeaders: corsList(c.allowHeaders, `${field}.allowHeaders`, header),
    exposeHeaders: corsList(c.exposeHeaders, `${field}.exposeHeaders`, header),
    allowCredentials: c.allowCredentials,
    maxAgeSeconds: maxAge,
  };
}

/** A RequestMirror filter read: where its copies go and how many, and the field it stands at. */
export interface MirrorAsk {
  ref: NonNullable<HttpRouteFilter['requestMirror']>['backendRef'];
  share?: Mirror['share'];
  field: string;
}

/**
 * A RequestMirror filter through the boundary: the Service its copies go to (resolved as a
 * backendRef is: backend-refs.ts refPool) and the share copied, `percent` or `fraction` (both at
 * once, or a share outside 0 to 1, refused by name); all of them is no pick at all.
 */
function mirrorAsk(m: NonNullable<HttpRouteFilter['requestMirror']>, field: string): MirrorAsk {
  if (m.percent !== undefined && m.fraction !== undefined)
    throw new Refused(`${field}: percent and fraction are exclusive`);
  if (m.percent !== undefined) {
    if (m.percent < 0 || m.percent > 100) throw new Refused(`${field}.percent ${m.percent}: from 0 to 100`);
    // 100 percent is every request: no pick at all.
    return m.percent === 100
      ? { ref: m.backendRef, field }
      : { ref: m.backendRef, share: { numerator: m.percent, denominator: 100 }, field };
  }
  if (m.fraction !== undefined) {
    const { numerator, denominator } = m.fraction;
    if (denominator < 1 || denominator > 1_000_000 || numerator < 0 || numerator > denominator)
      throw new Refused(
        `${field}.fraction ${numerator}/${denominator}: a numerator from 0 to a denominator from 1 to 1000000`,
      );
    return numerator === denominator
      ? { ref: m.backendRef, field }
      : { ref: m.backendRef, share: { numerator, denominator }, field };
  }
  return { ref: m.backendRef, field };
}

/**
 * A rule's filters into the model's; its RequestMirror filters go to `mirrors` (route-mirrors.ts),
 * or, where the caller takes none (a route kind npl-lb does not mirror), refuse the route.
 */
export function filtersOf(filters: HttpRouteFilter[], field: string, mirrors?: MirrorAsk[]) {
  const out: Pick<HttpRoute, 'requestHeaders' | 'responseHeaders' | 'redirect' | 'rewrite' | 'cors'> = {};
  filters.forEach((f, i) => {
    const at = `${field}[${i}]`;
    if (f.type === 'RequestHeaderModifier' && f.requestHeaderModifier) {
      out.requestHeaders = headerModifier(f.requestHeaderModifier, `${at}.requestHeaderModifier`);
    } else if (f.type === 'ResponseHeaderModifier' && f.responseHeaderModifier) {
      out.responseHeaders = headerModifier(f.responseHeaderModifier, `${at}.responseHeaderModifier`);
    } else if (f.type === 'RequestRedirect' && f.requestRedirect) {
      const r = f.requestRedirect;
      const redirect: Redirect = { statusCode: 302 };
      if (!STATUS.has(r.statusCode)) throw new Refused(`${at}.requestRedirect.statusCode ${r.statusCode}`);
      redirect.statusCode = r.statusCode as Redirect['statusCode'];
      if (r.scheme !== undefined) {
        if (r.scheme !== 'http' && r.scheme !== 'https')
          throw new Refused(`${at}.requestRedirect.scheme ${r.scheme}`);
        redirect.scheme = r.scheme;
      }
      if (r.hostname !== undefined) {
        const p = hostProblem(r.hostname);
        if (p || r.hostname.startsWith('*.'))
          throw new Refused(`${at}.requestRedirect.hostname: ${p ?? 'no wildcard'}`);
        redirect.hostname = r.hostname;
      }
      if (r.port !== undefined) redirect.port = r.port;
      if (r.path) redirect.path = pathModifier(r.path, `${at}.requestRedirect.path`);
      out.redirect = redirect;
    } else if (f.type === 'URLRewrite' && f.urlRewrite) {
      const rw: Rewrite = {};
      if (f.urlRewrite.hostname !== undefined) {
        const p = hostProblem(f.urlRewrite.hostname);
        if (p) throw new Refused(`${at}.urlRewrite.hostname: ${p}`);
        rw.hostname = f.urlRewrite.hostname;
      }
      if (f.urlRewrite.path) rw.path = pathModifier(f.urlRewrite.path, `${at}.urlRewrite.path`);
      out.rewrite = rw;
    } else if (f.type === 'CORS' && f.cors) {
      out.cors = corsPolicy(f.cors, `${at}.cors`);
    } else if (f.type === 'RequestMirror' && f.requestMirror && mirrors) {
      mirrors.push(mirrorAsk(f.requestMirror, `${at}.requestMirror`));
    } else if (f.type === 'RequestMirror') {
      throw new Refused(`${at}: filter type RequestMirror is not supported on this route kind`);
    } else {
      throw new Refused(`${at}: filter type ${f.type} is not supported`);
    }
  });
  return out;
}

/**
 * A backendRef's filters: RequestHeaderModifier where the device applies it per backend
 * (HttpCapabilities.backendHeaderModifiers), validated as a rule's are; any other filter, or any
 * at all elsewhere, refuses the route by name.
 */
export function backendFilters(
  filters: HttpRouteFilter[],
  field: string,
  device: { http: HttpCapabilities; adapter: string } | undefined,
): HeaderModifier | undefined {
  if (filters.length === 0) return undefined;
  if (!device?.http.backendHeaderModifiers)
    throw new Refused(
      `${field}: backendRef filters are not supported by the ${device?.adapter ?? 'configured'} load balancer`,
    );
  let out: HeaderModifier | undefined;
  filters.forEach((f, i) => {
    if (f.type !== 'RequestHeaderModifier' || !f.requestHeaderModifier)
      throw new Refused(`${field}[${i}]: filter type ${f.type} on a backendRef is not supported`);
    const m = headerModifier(f.requestHeaderModifier, `${field}[${i}].requestHeaderModifier`);
    out = out
      ? { set: [...out.set, ...m.set], add: [...out.add, ...m.add], remove: [...out.remove, ...m.remove] }
      : m;
  });
  return out;
}
