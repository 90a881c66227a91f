/**
 * A route's CORS policy (HttpRoute.cors) as HAProxy rules, with the model's semantics
 * (src/model/cors.ts): a preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) is
 * answered by HAProxy itself, 200 with the policy's headers for an allowed origin (`http-request
 * return ... hdr`, a header whose value comes out empty left out, as HAProxy does) and 403 for
 * another; an allowed origin's other requests keep their origin in `txn.npl_cors` and the member's
 * answer gets it back with the credentials and exposed headers. Each allowed origin is an anchored
 * regular expression on the whole `Origin` header (`req.fhdr`: the header is not split at commas),
 * without case. Values are quoted arguments and log-format strings (encode.ts). Pure.
 */
import type { CorsPolicy } from '../../src/model/types.ts';
import { logFormatArg, quoteArg } from './encode.ts';
import type { Acl, HttpRule } from './frontend-rules.ts';

const esc = (s: string): string => s.replace(/[.+?^${}()|[\]\\*]/g, '\\$&');
/** A host or a wildcard's labels: no separator of a URL, no space. */
const HOST_CHARS = '[^/:?#@\\s]+';

/** An allowed origin (validated: `scheme://host[:port]`) as an anchored regular expression. */
export function originRegex(origin: string): string {
  const m = /^(https?):\/\/([^:]+)(?::(\d+))?$/.exec(origin);
  if (!m) throw new Error(`not an origin: ${origin}`);
  const [, scheme, host, port] = m as unknown as [string, string, string, string | undefined];
  const re =
    host === '*' ? HOST_CHARS : host.startsWith('*.') ? `${HOST_CHARS}${esc(host.slice(1))}` : esc(host);
  const byDefault = scheme === 'https' ? 443 : 80;
  const p = port === undefined || Number(port) === byDefault ? `(?::${byDefault})?` : `:${Number(port)}`;
  return `^${scheme}://${re}${p}$`;
}

/** The request's header, whole, as a log-format expression. */
const echo = (header: string): string => `"%[req.fhdr(${header})]"`;

export const CORS_VAR = 'txn.npl_cors';

/** ACLs, request rules (after the route is chosen: `at`) and response rules of one route's policy. */
export function corsRules(
  c: CorsPolicy,
  p: string,
  at: string,
): { acls: Acl[]; request: HttpRule[]; response: HttpRule[] } {
  const acls: Acl[] = [
    { name: `${p}_opt`, criterion: 'method', value: 'OPTIONS' },
    { name: `${p}_acrm`, criterion: 'req.hdr(access-control-request-method)', value: '-m found' },
    { name: `${p}_orig`, criterion: 'req.hdr(origin)', value: '-m found' },
  ];
  if (c.allowOrigins.includes('*'))
    acls.push({ name: `${p}_cors`, criterion: 'req.fhdr(origin)', value: '-m len gt 0' });
  for (const o of c.allowOrigins.filter((x) => x !== '*'))
    acls.push({
      name: `${p}_cors`,
      criterion: 'req.fhdr(origin)',
      value: `-m reg -i ${quoteArg(originRegex(o))}`,
    });
  const hdr = (name: string, fmt: string) => ({ name: quoteArg(name), fmt });
  const list = (l: string[]) => logFormatArg(l.join(', '));
  const hdrs = [hdr('access-control-allow-origin', echo('origin'))];
  if (c.allowMethods.includes('*'))
    hdrs.push(hdr('access-control-allow-methods', echo('access-control-request-method')));
  else if (c.allowMethods.length > 0) hdrs.push(hdr('access-control-allow-methods', list(c.allowMethods)));
  if (c.allowHeaders.includes('*'))
    hdrs.push(hdr('access-control-allow-headers', echo('access-control-request-headers')));
  else if (c.allowHeaders.length > 0) hdrs.push(hdr('access-control-allow-headers', list(c.allowHeaders)));
  if (c.exposeHeaders.length > 0) hdrs.push(hdr('access-control-expose-headers', list(c.exposeHeaders)));
  hdrs.push(hdr('access-control-max-age', String(c.maxAgeSeconds)));
  if (c.allowCredentials) hdrs.push(hdr('access-control-allow-credentials', 'true'));
  const preflight = `${at} ${p}_opt ${p}_acrm ${p}_orig`;
  const allowed = `${at} { var(${CORS_VAR}) -m found }`;
  const set = (name: string, fmt: string): HttpRule => ({
    action: { type: 'set-header', header: quoteArg(name), fmt },
    cond: allowed,
  });
  return {
    acls,
    request: [
      { action: { type: 'return', status: 200, hdrs }, cond: `${preflight} ${p}_cors` },
      { action: { type: 'return', status: 403 }, cond: preflight },
      { action: { type: 'set-var', name: CORS_VAR, expr: 'req.fhdr(origin)' }, cond: `${at} ${p}_cors` },
    ],
    response: [
      set('access-control-allow-origin', `"%[var(${CORS_VAR})]"`),
      ...(c.allowCredentials ? [set('access-control-allow-credentials', 'true')] : []),
      ...(c.exposeHeaders.length > 0 ? [set('access-control-expose-headers', list(c.exposeHeaders))] : []),
      { action: { type: 'add-header', header: 'vary', fmt: 'Origin' }, cond: at },
    ],
  };
}
