/**
 * HTTPRouteHTTPSListenerDetectMisdirectedRequests, transcribed from upstream v1.6.1
 * (conformance/tests/httproute-https-listener-detect-misdirected-requests.go): on a Gateway with
 * four HTTPS listeners on one port (any host, a hostname, a wildcard, a hostname the wildcard
 * covers), an HTTP/2 request whose TLS server name selects another listener than its Host is
 * answered 421; one whose two select the same listener is routed (or 404 where no route takes it).
 */
import { ConformanceFailure } from '../harness/status.ts';
import { expectAll, INFRA, routesReady, type ConformanceTest } from '../harness/suite.ts';

const ref = (name: string) => ({ namespace: INFRA, name });

/** [server name, Host, status, backend] as upstream lists them. */
const CASES: [string, string, number, string?][] = [
  ['example.org', 'example.org', 200, 'infra-backend-v1'],
  ['example.org', 'second-example.org', 421],
  ['example.org', 'unknown-example.org', 404],
  ['second-example.org', 'second-example.org', 200, 'infra-backend-v2'],
  ['second-example.org', 'example.org', 421],
  ['second-example.org', 'unknown-example.org', 421],
  ['third-example.wildcard.org', 'third-example.wildcard.org', 200, 'infra-backend-v3'],
  ['third-example.wildcard.org', 'fith-example.wildcard.org', 200, 'infra-backend-v3'],
  ['third-example.wildcard.org', 'fourth-example.wildcard.org', 421],
  ['third-example.wildcard.org', 'second-example.org', 421],
  ['third-example.wildcard.org', 'unknown-example.org', 421],
  // infra-backend-v4 does not exist: the fourth route reuses infra-backend-v1.
  ['fourth-example.wildcard.org', 'fourth-example.wildcard.org', 200, 'infra-backend-v1'],
  ['fourth-example.wildcard.org', 'fith-example.wildcard.org', 421],
  ['unknown-example.org', 'example.org', 200, 'infra-backend-v1'],
  ['unknown-example.org', 'unknown-example.org', 404],
];

export const misdirectedTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteHTTPSListenerDetectMisdirectedRequests',
    description:
      'HTTPS listeners on the same port detect misdirected requests and return HTTP 421 when appropriate',
    features: ['Gateway', 'GatewayHTTPSListenerDetectMisdirectedRequests', 'HTTPRoute'],
    manifests: ['httproute-https-listener-detect-misdirected-requests.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(
        s,
        ref('same-namespace-with-https-listener'),
        [1, 2, 3, 4].map((i) => ref(`https-listener-detect-misdirected-requests-test-${i}`)),
      );
      const secret = (await s.rig.api.get(
        `/api/v1/namespaces/${INFRA}/secrets/tls-validity-checks-certificate`,
      )) as { data?: Record<string, string> } | undefined;
      const ca = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
      if (!ca) throw new ConformanceFailure('missing required server certificate pem for the test');
      // One server name at a time: the TLS options are per connection.
      for (const serverName of [...new Set(CASES.map((c) => c[0]))])
        await expectAll(
          s,
          addr,
          CASES.filter((c) => c[0] === serverName).map(([, host, statusCode, backend]) => ({
            request: { host, path: '/detect-misdirected-requests', protocol: 'h2' as const },
            response: { statusCode },
            ...(backend ? { backend } : {}),
            namespace: INFRA,
          })),
          { ca, servername: serverName },
        );
    },
  },
];
