/**
 * Cross-origin resource sharing by the model's semantics (CorsPolicy, an HTTPRoute's CORS filter),
 * the reference each adapter's rendering is held to: which origins a policy allows, what a
 * preflight is answered, and what an allowed origin's other requests get on their answer. Pure.
 */
import type { CorsPolicy } from './types.ts';

const DEFAULT_PORT: Record<string, string> = { http: '80', https: '443' };

interface Origin {
  scheme: string;
  host: string;
  port: string | undefined;
}

/** `scheme://host[:port]`, lower case; undefined for anything else (a path, user info, no scheme). */
function parse(o: string): Origin | undefined {
  const sep = o.indexOf('://');
  if (sep <= 0) return undefined;
  const scheme = o.slice(0, sep).toLowerCase();
  const rest = o.slice(sep + 3).toLowerCase();
  if (rest === '' || /[/?#@\s]/.test(rest)) return undefined;
  const colon = rest.lastIndexOf(':');
  if (colon < 0) return { scheme, host: rest, port: undefined };
  const port = rest.slice(colon + 1);
  if (!/^\d{1,5}$/.test(port)) return undefined;
  return { scheme, host: rest.slice(0, colon), port: String(Number(port)) };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return host !== '';
  if (!pattern.startsWith('*.')) return pattern === host;
  const suffix = pattern.slice(1);
  return host.endsWith(suffix) && host.length > suffix.length;
}

/**
 * Whether a request's `Origin` is one the policy allows: `*` any; otherwise the same scheme, the
 * host exactly or under a wildcard (one or more labels), and the same port, a missing one being the
 * scheme's default.
 */
export function originAllowed(allow: readonly string[], origin: string | undefined): boolean {
  if (origin === undefined || origin === '') return false;
  if (allow.includes('*')) return true;
  const o = parse(origin);
  if (!o) return false;
  return allow.some((a) => {
    const p = parse(a);
    if (!p || p.scheme !== o.scheme || !hostMatches(p.host, o.host)) return false;
    return (p.port ?? DEFAULT_PORT[p.scheme]) === (o.port ?? DEFAULT_PORT[o.scheme]);
  });
}

const lower = (headers: Record<string, string>): Map<string, string> =>
  new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

/** Whether a request is a CORS preflight: OPTIONS with an Origin and the method it asks about. */
export function isPreflight(method: string, headers: Record<string, string>): boolean {
  const h = lower(headers);
  return method === 'OPTIONS' && h.has('origin') && h.has('access-control-request-method');
}

/** What a preflight from an allowed origin is answered with (names lower case). */
export function preflightHeaders(c: CorsPolicy, headers: Record<string, string>): Record<string, string> {
  const h = lower(headers);
  const out: Record<string, string> = { 'access-control-allow-origin': h.get('origin') ?? '' };
  const methods = c.allowMethods.includes('*')
    ? h.get('access-control-request-method')
    : c.allowMethods.join(', ');
  if (methods) out['access-control-allow-methods'] = methods;
  const allowHeaders = c.allowHeaders.includes('*')
    ? h.get('access-control-request-headers')
    : c.allowHeaders.join(', ');
  if (allowHeaders) out['access-control-allow-headers'] = allowHeaders;
  if (c.exposeHeaders.length > 0) out['access-control-expose-headers'] = c.exposeHeaders.join(', ');
  out['access-control-max-age'] = String(c.maxAgeSeconds);
  if (c.allowCredentials) out['access-control-allow-credentials'] = 'true';
  return out;
}

/**
 * What an allowed origin's other requests get on the member's answer (names lower case); every
 * answer of the route varies by Origin.
 */
export function responseHeaders(c: CorsPolicy, headers: Record<string, string>): Record<string, string> {
  const origin = lower(headers).get('origin');
  if (!originAllowed(c.allowOrigins, origin)) return { vary: 'Origin' };
  return {
    'access-control-allow-origin': origin!,
    ...(c.allowCredentials ? { 'access-control-allow-credentials': 'true' } : {}),
    ...(c.exposeHeaders.length > 0 ? { 'access-control-expose-headers': c.exposeHeaders.join(', ') } : {}),
    vary: 'Origin',
  };
}
