/**
 * Request mirrors, transcribed from upstream v1.6.1: HTTPRouteRequestMirror,
 * HTTPRouteRequestMultipleMirrors and HTTPRouteRequestPercentageMirror
 * (conformance/tests/httproute-request-*mirror*.go). The request is answered by infra-backend-v1
 * as the route changed it, and the mirrors' Pods log echo-basic's line for its path (a request-id
 * query of its own, so nothing else can match); a share's count over 500 requests (10 at a time)
 * must fall within three standard deviations of the binomial's mean, up to five tries.
 */
import { randomUUID } from 'node:crypto';
import { expectEventually, type Expected } from '../harness/http.ts';
import { echoLogs, expectMirrored, mirrorLogRegexp } from '../harness/mirror-logs.ts';
import { ConformanceFailure } from '../harness/status.ts';
import { type ConformanceTest, INFRA, routesReady, type Suite } from '../harness/suite.ts';

const sameNs = { namespace: INFRA, name: 'same-namespace' };
const v2 = { namespace: INFRA, name: 'infra-backend-v2' };
const v3 = { namespace: INFRA, name: 'infra-backend-v3' };

/** The header changes of the `...-and-modify-headers` rules, as the backend must see them. */
const modified = (path: string): Expected => ({
  request: { path, headers: { 'X-Header-Remove': 'remove-val', 'X-Header-Add-Append': 'append-val-1' } },
  expectedRequest: {
    path,
    headers: {
      'X-Header-Add': 'header-val-1',
      'X-Header-Add-Append': 'append-val-1,header-val-2',
      'X-Header-Set': 'set-overwrites-values',
    },
    absentHeaders: ['X-Header-Remove'],
  },
  backend: 'infra-backend-v1',
  namespace: INFRA,
});
const plain = (path: string): Expected => ({
  request: { path },
  backend: 'infra-backend-v1',
  namespace: INFRA,
});

/** A case's path with a request-id of its own (upstream's AddRequestIDQueryParam). */
function withRequestId(e: Expected): Expected {
  const path = `${e.request.path}?request-id=${randomUUID()}`;
  return {
    ...e,
    request: { ...e.request, path },
    ...(e.expectedRequest ? { expectedRequest: { ...e.expectedRequest, path } } : {}),
  };
}

/** Each case at once: answered as expected, and its path found in every mirror's log. */
async function mirroredCases(
  s: Suite,
  addr: string,
  cases: { expected: Expected; mirrors: { namespace: string; name: string }[] }[],
): Promise<void> {
  const results = await Promise.allSettled(
    cases.map(async (c) => {
      const e = withRequestId(c.expected);
      const since = Date.now();
      await expectEventually(addr, e, s.timeouts);
      await expectMirrored(s, c.mirrors, e.request.path, since);
    }),
  );
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  if (failed.length) throw new ConformanceFailure(failed.join('; '));
}

/** testMirroredRequestsDistribution: the count logged since `since` within 3 standard deviations. */
async function distributionProblem(
  s: Suite,
  path: string,
  since: number,
  percent: number,
): Promise<string | undefined> {
  const re = mirrorLogRegexp(path);
  const count = (await echoLogs(s, INFRA, v2.name, since)).filter((l) => re.test(l)).length;
  const n = 500;
  const p = percent / 100;
  const margin = 3 * Math.sqrt(n * p * (1 - p));
  s.log(`${path}: ${count} mirrored, expected ${n * p} ± ${margin.toFixed(1)}`);
  return Math.abs(count - n * p) <= margin
    ? undefined
    : `${count} of ${n} mirrored, not within ${n * p} ± ${margin.toFixed(1)}`;
}

/** 500 requests, 10 at a time, each answered once as expected (RequiredConsecutiveSuccesses 1). */
async function sendMany(s: Suite, addr: string, e: Expected): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < 500) {
      next++;
      await expectEventually(addr, e, s.timeouts, 1);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
}

export const mirrorTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteRequestMirror',
    description: 'An HTTPRoute with request mirror filter',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror'],
    manifests: ['httproute-request-mirror.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'request-mirror' }]);
      if (!s.sendsTraffic) return;
      await mirroredCases(s, addr, [
        { expected: plain('/mirror'), mirrors: [v2] },
        { expected: modified('/mirror-and-modify-headers'), mirrors: [v2] },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteRequestMultipleMirrors',
    description: 'An HTTPRoute with multiple request mirror filters',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestMirror', 'HTTPRouteRequestMultipleMirrors'],
    manifests: ['httproute-request-multiple-mirrors.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'request-multiple-mirrors' }]);
      if (!s.sendsTraffic) return;
      await mirroredCases(s, addr, [
        { expected: plain('/multi-mirror'), mirrors: [v2, v3] },
        { expected: modified('/multi-mirror-and-modify-request-headers'), mirrors: [v2, v3] },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteRequestPercentageMirror',
    description: 'An HTTPRoute with percentage based request mirroring',
    features: ['Gateway', 'HTTPRoute', 'HTTPRouteRequestPercentageMirror'],
    manifests: ['httproute-request-percentage-mirror.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'request-percentage-mirror' }]);
      if (!s.sendsTraffic) return;
      const cases: [Expected, number][] = [
        [plain('/percent-mirror'), 20],
        [plain('/percent-mirror-fraction'), 50],
        [modified('/percent-mirror-and-modify-headers'), 35],
      ];
      for (const [base, percent] of cases) {
        await expectEventually(addr, base, s.timeouts);
        let why = 'not tried';
        let ok = false;
        for (let k = 0; k < 5 && !ok; k++) {
          const e = withRequestId(base);
          const since = Date.now();
          await sendMany(s, addr, e);
          // The copies are sent after the answers: give the last ones a moment to be logged.
          await new Promise((r) => setTimeout(r, 1000));
          const problem = await distributionProblem(s, e.request.path, since, percent);
          if (problem === undefined) ok = true;
          else why = problem;
        }
        if (!ok)
          throw new ConformanceFailure(
            `${base.request.path}: percentage based mirror distribution failed (${why})`,
          );
      }
    },
  },
];
