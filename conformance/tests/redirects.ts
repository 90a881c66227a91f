/**
 * Extended GATEWAY-HTTP redirect tests, transcribed from upstream v1.6.1: scheme, path (prefix and
 * full), port, and the 303, 307 and 308 status codes. Run where the GatewayClass claims them.
 */
import type { Expected } from '../harness/http.ts';
import { type ConformanceTest, expectAll, INFRA, routesReady } from '../harness/suite.ts';

const sameNs = { namespace: INFRA, name: 'same-namespace' };
const redirect = (
  path: string,
  statusCode: number,
  to: NonNullable<Expected['redirectRequest']>,
  method?: string,
): Expected => ({
  request: { path, ...(method ? { method } : {}) },
  response: { statusCode },
  redirectRequest: to,
  namespace: INFRA,
});

const test = (
  shortName: string,
  description: string,
  feature: string,
  file: string,
  route: string,
  cases: Expected[],
): ConformanceTest => ({
  shortName,
  description,
  features: ['Gateway', 'HTTPRoute', feature],
  manifests: [file],
  traffic: true,
  run: async (s) => {
    const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: route }]);
    await expectAll(s, addr, cases);
  },
});

export const redirectTests: ConformanceTest[] = [
  test(
    'HTTPRouteRedirectScheme',
    'An HTTPRoute with a scheme redirect filter',
    'HTTPRouteSchemeRedirect',
    'httproute-redirect-scheme.yaml',
    'redirect-scheme',
    [
      redirect('/scheme', 302, { scheme: 'https' }),
      redirect('/scheme-and-host', 302, { host: 'example.org', scheme: 'https' }),
      redirect('/scheme-and-status', 301, { scheme: 'https' }),
      redirect('/scheme-and-host-and-status', 302, { scheme: 'https', host: 'example.org' }),
    ],
  ),
  test(
    'HTTPRouteRedirectPath',
    'An HTTPRoute with scheme redirect filter',
    'HTTPRoutePathRedirect',
    'httproute-redirect-path.yaml',
    'redirect-path',
    [
      redirect('/original-prefix/lemon', 302, { path: '/replacement-prefix/lemon' }),
      redirect('/full/path/original', 302, { path: '/full-path-replacement' }),
      redirect('/path-and-host', 302, { host: 'example.org', path: '/replacement-prefix' }),
      redirect('/path-and-status', 301, { path: '/replacement-prefix' }),
      redirect('/full-path-and-host', 302, { host: 'example.org', path: '/replacement-full' }),
      redirect('/full-path-and-status', 301, { path: '/replacement-full' }),
    ],
  ),
  test(
    'HTTPRouteRedirectPort',
    'An HTTPRoute with a port redirect filter',
    'HTTPRoutePortRedirect',
    'httproute-redirect-port.yaml',
    'redirect-port',
    [
      redirect('/port', 302, { port: '8083' }),
      redirect('/port-and-host', 302, { host: 'example.org', port: '8083' }),
      redirect('/port-and-status', 301, { port: '8083' }),
      redirect('/port-and-host-and-status', 302, { port: '8083', host: 'example.org' }),
    ],
  ),
  test(
    'HTTPRoute303Redirect',
    'An HTTPRoute with a redirect filter answering 303',
    'HTTPRoute303RedirectStatusCode',
    'httproute-303-redirect.yaml',
    '303-redirect',
    [redirect('/see-other', 303, { path: '/see-other' }, 'POST')],
  ),
  test(
    'HTTPRoute307Redirect',
    'An HTTPRoute with a redirect filter answering 307',
    'HTTPRoute307RedirectStatusCode',
    'httproute-307-redirect.yaml',
    '307-redirect',
    [redirect('/temporary', 307, { path: '/temporary' })],
  ),
  test(
    'HTTPRoute308Redirect',
    'An HTTPRoute with a redirect filter answering 308',
    'HTTPRoute308RedirectStatusCode',
    'httproute-308-redirect.yaml',
    '308-redirect',
    [redirect('/permanent', 308, { path: '/permanent' })],
  ),
];
