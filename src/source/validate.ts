/**
 * The one boundary for untrusted strings: every value taken from a Kubernetes object that reaches a
 * load balancer (Ingress hosts and paths today; Gateway API hostnames, paths, header names and
 * values, redirect targets and rewrites next) is checked here before it enters the model. A check
 * returns the problem in words, or undefined when the value may be used. Pure.
 *
 * Hosts follow the API server (DNS-1123 subdomain, optional leading `*.`); paths follow the API
 * server's rules per pathType plus ours: no control characters, whitespace, quotes or anything
 * outside RFC 3986's path characters, in every type (ingress-nginx's strict path validation after
 * CVE-2021-25745).
 */
import { isIP } from 'node:net';
import { pcre2Problem } from './regex-dialect.ts';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);
const MAX_HOST = 253;

/** Characters an HTTP path may hold (RFC 3986 pchar and '/'), without quotes. */
const PATH_CHARS = /^[A-Za-z0-9\-._~!$&()*+,;=:@%/]*$/;
const PERCENT = /%(?![0-9A-Fa-f]{2})/;
/** The API server's refusals for Exact and Prefix paths (validateIngressHTTPIngressPath). */
const INVALID_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const INVALID_SUFFIXES = ['/..', '/.'];
export const MAX_PATH = 2048;

const describe = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}...` : s);

/** A host as an Ingress rule or a Gateway listener may name it; '' means any host and is valid. */
export function hostProblem(host: string): string | undefined {
  if (host === '') return undefined;
  const bare = host.startsWith('*.') ? host.slice(2) : host;
  if (host.length > MAX_HOST || !DNS1123_SUBDOMAIN.test(bare)) {
    return `host ${describe(host)} is not a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', with an optional leading '*.')`;
  }
  return undefined;
}

export type PathMatchType = 'Prefix' | 'Exact' | 'ImplementationSpecific';

/** A path for the given match type. */
export function pathProblem(path: string, pathType: PathMatchType): string | undefined {
  if (!path.startsWith('/')) return `path ${describe(path)} must start with '/'`;
  if (path.length > MAX_PATH) return `path is longer than ${MAX_PATH} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f-\u009f]/.test(path)) {
    return `path ${describe(path)} holds a control character or whitespace`;
  }
  if (/["'`\\]/.test(path)) return `path ${describe(path)} holds a quote or backslash`;
  if (!PATH_CHARS.test(path)) return `path ${describe(path)} holds characters outside RFC 3986 paths`;
  if (PERCENT.test(path)) return `path ${describe(path)} holds a '%' that is not a percent-encoding`;
  if (pathType !== 'ImplementationSpecific') {
    const seq = INVALID_SEQUENCES.find((s) => path.includes(s));
    if (seq) return `path ${describe(path)} must not contain '${seq}' (pathType ${pathType})`;
    const suffix = INVALID_SUFFIXES.find((s) => path.endsWith(s));
    if (suffix) return `path ${describe(path)} must not end with '${suffix}' (pathType ${pathType})`;
  }
  return undefined;
}

/** An address a load balancer will send to or listen on: an IP address of the given family. */
export function ipProblem(value: string, family?: 'IPv4' | 'IPv6'): string | undefined {
  const v = isIP(value);
  if (v === 0) return `${describe(value)} is not an IP address`;
  if (family === 'IPv4' && v !== 4) return `${describe(value)} is not an IPv4 address`;
  if (family === 'IPv6' && v !== 6) return `${describe(value)} is not an IPv6 address`;
  return undefined;
}

export const portProblem = (port: number): string | undefined =>
  Number.isInteger(port) && port >= 1 && port <= 65535 ? undefined : `port ${port} is out of range`;

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/;
export const MAX_HEADER_VALUE = 4096;
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

/** A header or query-parameter name: an RFC 9110 token, at most 256 characters. */
export function headerNameProblem(name: string): string | undefined {
  if (name.length === 0 || name.length > 256 || !HEADER_NAME.test(name)) {
    return `name ${describe(name)} is not an HTTP token (letters, digits and !#$%&'*+-.^_\`|~)`;
  }
  return undefined;
}

/** A header or query-parameter value to match or set: printable, no CR, LF or NUL. */
export function headerValueProblem(value: string): string | undefined {
  if (value.length > MAX_HEADER_VALUE) return `value is longer than ${MAX_HEADER_VALUE} characters`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) {
    return `value ${describe(value)} holds a control character`;
  }
  return undefined;
}

/**
 * A regular expression to match a path or a value: it must compile, at most 1024 characters, and,
 * for a device that reads PCRE2, be in the subset PCRE2 reads as JavaScript does.
 */
export function regexProblem(re: string, dialect: 'ecmascript' | 'pcre2' = 'ecmascript'): string | undefined {
  if (re.length > 1024) return 'regular expression is longer than 1024 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(re)) return `regular expression ${describe(re)} holds a control character`;
  try {
    new RegExp(re);
  } catch {
    return `regular expression ${describe(re)} does not compile`;
  }
  const p = dialect === 'pcre2' ? pcre2Problem(re) : undefined;
  return p ? `regular expression ${describe(re)}: ${p}` : undefined;
}

export const methodProblem = (m: string): string | undefined =>
  METHODS.has(m) ? undefined : `method ${describe(m)} is not one of ${[...METHODS].join(', ')}`;

/** An HTTP token (RFC 9110): what a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/;
/** Printable ASCII and spaces, no leading or trailing space: what a header value may be here. */
const VALUE = /^(?:[!-~](?:[ !-~]{0,254}[!-~])?)?$/;

/**
 * Why check headers (a probe's `httpHeaders`, a policy's) cannot be sent as they are: a name or a
 * value a device would read otherwise than the kubelet.
 */
export function headerProblem(headers: readonly { name: string; value: string }[]): string | undefined {
  if (headers.length > 8) return `${headers.length} headers (at most 8)`;
  for (const h of headers) {
    if (!TOKEN.test(h.name)) return `${JSON.stringify(h.name.slice(0, 64))} is not a header name`;
    if (!VALUE.test(h.value))
      return `the value of ${h.name} is not printable ASCII of at most 256 characters without spaces at its ends`;
  }
  return undefined;
}
