/**
 * A table of routes and requests modelled on the Gateway API conformance suite's HTTPRoute tests
 * (matching, precedence across hosts, header/query/method matches, header modifiers, redirects,
 * rewrites, weights and unresolved shares), for the tests that hold a first-match device's
 * rendering (F5, Avi) to the model. Values that a device could read as code are among them.
 */
import type { HttpRequest } from '../../src/model/http-match.ts';
import type { HttpRoute, L7VirtualService, Pool } from '../../src/model/types.ts';
import * as kit from './model.ts';

const pool = (name: string, n: number): Pool =>
  kit.pool(
    name,
    Array.from({ length: n }, (_, i) =>
      kit.member(`192.0.${name.slice(1)}.${i + 1}`, 61000 + i, { node: `n${i}`, pod: `ns/${name}-${i}` }),
    ),
    { service: `ns/${name}` },
  );
export const POOLS = [pool('v1', 3), pool('v2', 1), pool('v3', 2)];
let order = 0;
export const r = (
  host: string,
  path: string,
  pathType: HttpRoute['pathType'],
  to: string,
  extra: Partial<HttpRoute> = {},
): HttpRoute => ({
  host,
  path,
  pathType,
  pool: to,
  source: 'HTTPRoute gw/r',
  order: order++,
  ...extra,
});

export const routes: HttpRoute[] = [
  r('exact.example', '/exact', 'Exact', 'v1'),
  r('exact.example', '/api', 'Prefix', 'v2'),
  r('*.example', '/', 'Prefix', 'v3'),
  r('*.deep.example', '/', 'Prefix', 'v1'),
  r('', '/', 'Prefix', 'v1', { method: 'DELETE' }),
  r('', '/h', 'Prefix', 'v2', { headers: [{ name: 'x-version', value: 'two', type: 'Exact' }] }),
  r('', '/h', 'Prefix', 'v3', { headers: [{ name: 'X-Color', value: 'Blue', type: 'Exact' }] }),
  r('', '/q', 'Prefix', 'v3', { queryParams: [{ name: 'animal', value: 'whale', type: 'Exact' }] }),
  r('', '/mod', 'Prefix', 'v1', {
    requestHeaders: {
      set: [{ name: 'X-Set', value: 'set-overwrites [exec rm] $x' }],
      add: [{ name: 'X-Add', value: 'tcl:[exec reboot]' }],
      remove: ['X-Remove'],
    },
    responseHeaders: { set: [{ name: 'X-Resp', value: 'from-route' }], add: [], remove: [] },
  }),
  r('', '/redirect/host', 'Prefix', '', { redirect: { hostname: 'example.org', statusCode: 302 } }),
  r('', '/redirect/scheme', 'Prefix', '', {
    redirect: { scheme: 'https', hostname: 'example.org', statusCode: 301 },
  }),
  r('', '/redirect/port', 'Prefix', '', { redirect: { port: 8083, statusCode: 307 } }),
  r('', '/redirect/full', 'Prefix', '', {
    redirect: { path: { type: 'ReplaceFullPath', value: '/full-$[x]' }, statusCode: 301 },
  }),
  r('', '/redirect/prefix', 'Prefix', '', {
    redirect: { path: { type: 'ReplacePrefixMatch', value: '/one' }, statusCode: 307 },
  }),
  r('', '/redirect/root', 'Prefix', '', {
    redirect: { path: { type: 'ReplacePrefixMatch', value: '/' }, statusCode: 302 },
  }),
  r('', '/rewrite/prefix', 'Prefix', 'v2', {
    rewrite: { path: { type: 'ReplacePrefixMatch', value: '/one' } },
  }),
  r('', '/rewrite/root', 'Prefix', 'v2', { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/' } } }),
  r('', '/rewrite/full', 'Prefix', 'v3', {
    rewrite: { hostname: 'one.example.org', path: { type: 'ReplaceFullPath', value: '/one' } },
  }),
  r('', '/split', 'Prefix', '', {
    backends: [
      { pool: 'v1', weight: 3 },
      { pool: 'v2', weight: 1 },
      { pool: 'v3', weight: 0 },
    ],
  }),
  r('', '/half', 'Prefix', '', {
    backends: [
      { pool: 'v2', weight: 1 },
      { pool: null, weight: 1 },
    ],
  }),
  r('', '/gone', 'Prefix', '', { backends: [{ pool: null, weight: 1 }] }),
];

export const vs: L7VirtualService = {
  kind: 'l7',
  name: 'c1--gw-gw.gw-HTTP-80',
  vip: '192.0.2.50',
  port: 80,
  ingressClass: 'npl-lb',
  routes,
  defaultPool: undefined,
};

export const table: HttpRequest[] = [
  { host: 'exact.example', path: '/exact' },
  { host: 'exact.example', path: '/exact/more' },
  { host: 'exact.example', path: '/EXACT' },
  { host: 'exact.example', path: '/api' },
  { host: 'exact.example', path: '/api/v1?x=1' },
  { host: 'exact.example', path: '/apiv1' },
  { host: 'exact.example:8080', path: '/exact' },
  { host: 'EXACT.example', path: '/exact' },
  { host: 'other.example', path: '/anything' },
  { host: 'a.b.example', path: '/' },
  { host: 'x.deep.example', path: '/' },
  { host: 'plain.test', path: '/', method: 'DELETE' },
  { host: 'exact.example', path: '/', method: 'DELETE' },
  { host: 'plain.test', path: '/nothing' },
  { host: 'plain.test', path: '/h', headers: { 'x-version': 'two' } },
  { host: 'plain.test', path: '/h', headers: { 'x-version': 'TWO' } },
  { host: 'plain.test', path: '/h', headers: { 'x-color': 'Blue' } },
  { host: 'plain.test', path: '/q?animal=whale' },
  { host: 'plain.test', path: '/q?animal=dolphin' },
  { host: 'plain.test', path: '/mod', headers: { 'x-set': 'old', 'x-remove': 'gone', 'x-add': 'first' } },
  { host: 'plain.test', path: '/redirect/host/a?b=c' },
  { host: 'plain.test', path: '/redirect/scheme' },
  { host: 'plain.test:80', path: '/redirect/port/x' },
  { host: 'plain.test', path: '/redirect/full/x?q=1' },
  { host: 'plain.test', path: '/redirect/prefix/x/y' },
  { host: 'plain.test', path: '/redirect/prefix' },
  { host: 'plain.test', path: '/redirect/root/x' },
  { host: 'plain.test', path: '/redirect/root' },
  { host: 'plain.test', path: '/rewrite/prefix/x?k=v' },
  { host: 'plain.test', path: '/rewrite/prefix' },
  { host: 'plain.test', path: '/rewrite/root/x' },
  { host: 'plain.test', path: '/rewrite/root' },
  { host: 'plain.test', path: '/rewrite/full/deep' },
  { host: 'plain.test', path: '/gone' },
];
