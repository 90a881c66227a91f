/**
 * Route retries (GEP-1731, a rule's `retry` in the experimental channel's HTTPRoute), transcribed
 * from upstream v1.6.1: HTTPRouteRetry (conformance/tests/httproute-retry.go). Its requests go to
 * echo-basic's retry simulation, which fails each request's first `succeedAfter` attempts (by its
 * `uuid`, new on every probe) with `responseCode`; each case must hold three probes in a row.
 *
 * HTTPRouteRetryConnectionError (upstream after v1.6.1) is not transcribed, its feature not
 * claimed: HAProxy retries a reset connection (`retry-on ... empty-response`), but answers 502 when
 * every attempt was reset (the test wants 500 or 503), and closes a client's keep-alive connection
 * without an answer there, for the client to send again (tried on HAProxy 2.6).
 */
import { randomUUID } from 'node:crypto';
import { expectEventually } from '../harness/http.ts';
import { type ConformanceTest, INFRA, routesReady, type Suite } from '../harness/suite.ts';

const sameNs = { namespace: INFRA, name: 'same-namespace' };

interface RetryCase {
  path: string;
  query: Record<string, string>;
  statusCodes: number[];
}

/** upstream's assertConsistentRetryBehaviour: a fresh uuid on each probe, so the simulation counts that probe's attempts alone. */
const consistentRetryBehaviour = (s: Suite, addr: string, c: RetryCase): Promise<void> =>
  expectEventually(
    addr,
    () => ({
      request: { path: `${c.path}?${new URLSearchParams({ ...c.query, uuid: randomUUID() }).toString()}` },
      response: { statusCodes: c.statusCodes },
      backend: 'infra-backend-v3',
      namespace: INFRA,
    }),
    s.timeouts,
  );

const code = (responseCode: number, succeedAfter: number) => ({
  responseCode: String(responseCode),
  succeedAfter: String(succeedAfter),
});

export const retryTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRetry',
    description:
      'An HTTPRoute that has a Retry policy configured should retry failed requests according to the specified codes and attempt limits, returning a successful response when the backend recovers within the retry budget and surfacing the original error when it does not.',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRetry'],
    manifests: ['httproute-retry.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'retries' }]);
      if (!s.sendsTraffic) return;
      const three = '/retry/code-500-attempts-3';
      const all = '/retry/code-all-attempts-2';
      const cases: RetryCase[] = [
        { path: three, query: code(500, 2), statusCodes: [200] },
        { path: three, query: code(500, 4), statusCodes: [500] },
        { path: three, query: code(503, 2), statusCodes: [503] },
        ...[500, 502, 503, 504].flatMap((status) => [
          { path: all, query: code(status, 1), statusCodes: [200] },
          { path: all, query: code(status, 3), statusCodes: [status] },
        ]),
      ];
      for (const c of cases) await consistentRetryBehaviour(s, addr, c);
    },
  },
];
