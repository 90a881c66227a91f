/**
 * HTTPRouteCORS, transcribed from upstream v1.6.1 (conformance/tests/httproute-cors.go): preflights
 * from exact, wildcard and non-matching origins, simple requests, wildcard methods, headers and
 * origins with and without credentials; every case at once, each answered as expected three times
 * in a row. A preflight the gateway answers is compared as upstream's round tripper takes it (an
 * answer that is not the echo's JSON: the request's method alone, no path, no namespace).
 */
import type { Expected } from '../harness/http.ts';
import { type ConformanceTest, expectAll, INFRA } from '../harness/suite.ts';

const gw = { namespace: INFRA, name: 'same-namespace' };
const ROUTES = [
  'cors-multiple-origins-methods-headers',
  'cors-wildcard-methods',
  'cors-wildcard-origin',
  'cors-wildcard-methods-headers',
];

/** What upstream expects of the request behind a preflight the gateway answers itself. */
const answered = { expectedRequest: { host: '', method: 'OPTIONS', path: '' }, namespace: '' };
const both = (a: string, b: string) => [`${a}, ${b}`, `${b}, ${a}`];

const preflight = (
  path: string,
  headers: Record<string, string>,
  response: NonNullable<Expected['response']>,
): Expected => ({ request: { path, method: 'OPTIONS', headers }, ...answered, response });

const simple = (
  path: string,
  method: string,
  headers: Record<string, string>,
  response: NonNullable<Expected['response']>,
): Expected => ({ request: { path, method, headers }, namespace: INFRA, response });

/** The first route's preflight answer for an allowed origin. */
const fullPreflight = (origin: string) =>
  preflight(
    '/cors-1',
    {
      Origin: origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': [origin],
        'access-control-allow-methods': both('GET', 'OPTIONS'),
        'access-control-allow-headers': both('x-header-1', 'x-header-2'),
        'access-control-expose-headers': both('x-header-3', 'x-header-4'),
        'access-control-max-age': ['3600'],
        'access-control-allow-credentials': ['true'],
      },
      ignoreWhitespace: true,
    },
  );

const preflightHeaders = {
  'access-control-request-method': 'GET',
  'access-control-request-headers': 'x-header-1, x-header-2',
};

const CASES: Expected[] = [
  fullPreflight('https://www.foo.com'),
  fullPreflight('https://www.bar.com'),
  fullPreflight('https://xpto.www.bar.com'),
  preflight(
    '/cors-1',
    { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
    { statusCodes: [200, 204, 403], absentHeaders: ['access-control-allow-origin'] },
  ),
  simple(
    '/cors-1',
    'GET',
    { Origin: 'https://www.foo.com', ...preflightHeaders },
    { statusCode: 200, headers: { 'access-control-allow-origin': 'https://www.foo.com' } },
  ),
  simple(
    '/cors-1',
    'GET',
    { Origin: 'https://www.bar.com', ...preflightHeaders },
    { statusCode: 200, headers: { 'access-control-allow-origin': 'https://www.bar.com' } },
  ),
  simple(
    '/cors-1',
    'GET',
    { Origin: 'https://foobar.com', 'access-control-request-method': 'GET' },
    { absentHeaders: ['access-control-allow-origin'] },
  ),
  preflight(
    '/cors-2',
    { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
    {
      statusCodes: [200, 204],
      validHeaderValues: { 'access-control-allow-methods': ['POST', '*'] },
      headers: { 'access-control-allow-origin': 'https://www.foo.com' },
      absentHeaders: ['access-control-allow-credentials'],
    },
  ),
  preflight(
    '/cors-2',
    { Origin: 'https://www.foo.com', 'access-control-request-method': 'POST' },
    { statusCodes: [200, 204], absentHeaders: ['Access-Control-Allow-Credentials'] },
  ),
  ...['https://foobar.com', 'https://foobar.com:12345'].map((origin) =>
    preflight(
      '/cors-wildcard-origin',
      { Origin: origin, 'access-control-request-method': 'PUT' },
      {
        statusCodes: [200, 204],
        validHeaderValues: {
          'access-control-allow-origin': [origin, '*'],
          'access-control-allow-methods': ['PUT'],
        },
        absentHeaders: ['Access-Control-Allow-Credentials'],
      },
    ),
  ),
  simple(
    '/cors-wildcard-origin',
    'PUT',
    { Origin: 'https://foobar.com:12345' },
    {
      statusCode: 200,
      validHeaderValues: { 'access-control-allow-origin': ['https://foobar.com:12345', '*'] },
    },
  ),
  simple(
    '/cors-wildcard-origin',
    'PUT',
    { Origin: 'https://foobar.com' },
    {
      statusCode: 200,
      validHeaderValues: { 'access-control-allow-origin': ['https://foobar.com', '*'] },
      absentHeaders: ['Access-Control-Allow-Credentials'],
    },
  ),
  preflight(
    '/cors-wildcard-methods-headers',
    {
      Origin: 'https://other.foo.com',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com'],
        'access-control-allow-methods': ['PUT'],
        'access-control-allow-headers': both('x-header-1', 'x-header-2'),
        'access-control-allow-credentials': ['true'],
      },
      ignoreWhitespace: true,
    },
  ),
  preflight(
    '/cors-wildcard-methods-headers-unauth',
    {
      Origin: 'https://other.foo.com',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'x-header-1, x-header-2',
    },
    {
      statusCodes: [200, 204],
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com', '*'],
        'access-control-allow-methods': ['PUT', '*'],
        'access-control-allow-headers': [...both('x-header-1', 'x-header-2'), '*'],
      },
      absentHeaders: ['access-control-allow-credentials'],
      ignoreWhitespace: true,
    },
  ),
  simple(
    '/cors-wildcard-methods-headers',
    'GET',
    { Origin: 'https://other.foo.com' },
    {
      statusCode: 200,
      validHeaderValues: {
        'access-control-allow-origin': ['https://other.foo.com'],
        'access-control-allow-credentials': ['true'],
      },
    },
  ),
  simple(
    '/cors-wildcard-methods-headers-unauth',
    'GET',
    { Origin: 'https://other.foo.com' },
    {
      statusCode: 200,
      validHeaderValues: { 'access-control-allow-origin': ['https://other.foo.com', '*'] },
      absentHeaders: ['access-control-allow-credentials'],
    },
  ),
];

export const corsTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteCORS',
    description: 'An HTTPRoute with CORS filter should allow CORS requests from specified origins',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteCORS'],
    manifests: ['httproute-cors.yaml'],
    traffic: true,
    run: async (s) => {
      const named = (name: string) => ({ namespace: INFRA, name });
      const addr = await s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', ROUTES.slice(0, 2).map(named));
      for (const r of ROUTES)
        await s.status.routeCondition('HTTPRoute', named(r), gw, {
          type: 'ResolvedRefs',
          status: 'True',
          reason: 'ResolvedRefs',
        });
      await expectAll(s, addr, CASES);
    },
  },
];
