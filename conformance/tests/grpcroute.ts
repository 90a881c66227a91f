/**
 * GATEWAY-GRPC tests, transcribed from upstream v1.6.1 (conformance/tests/grpcroute-*.go): gRPC
 * calls of the suite's echo service through the Gateway's address in plain HTTP/2, each expected
 * to be answered by a backend (its Pod's name prefix and namespace, the method it saw) or with a
 * status code (UNIMPLEMENTED where no rule matches), RequiredConsecutiveSuccesses (3) times in a
 * row within the consistency bound, as grpc.MakeRequestAndExpectEventuallyConsistentResponse.
 */
import { type Rpc, type RpcResult, GRPC_SERVICE, sendRpc, STATUS } from '../harness/grpc-echo.ts';
import { ConformanceFailure, type Timeouts } from '../harness/status.ts';
import { deploymentOf, expectWeightedDistribution } from '../harness/weight.ts';
import type { ConformanceTest, Suite } from '../harness/suite.ts';
import { INFRA } from '../harness/suite.ts';

const GRPC_CORE = ['Gateway', 'GRPCRoute'];
const V1 = 'grpc-infra-backend-v1';
const V2 = 'grpc-infra-backend-v2';
const V3 = 'grpc-infra-backend-v3';
const sameNs = { namespace: INFRA, name: 'same-namespace' };

interface GrpcExpected {
  rpc: Rpc;
  /** The Pod that answers starts with this (a status OK call). */
  backend?: string;
  /** The status code expected (default OK). */
  code?: number;
}

/** compareResponse: the code; for OK the method the backend saw, its namespace and Pod. */
export function compareRpc(e: GrpcExpected, r: RpcResult): string | undefined {
  const want = e.code ?? STATUS.OK;
  if (r.code !== want)
    return `status ${STATUS[r.code] ?? r.code}, want ${STATUS[want] ?? want} (${r.details})`;
  if (want !== STATUS.OK) return undefined;
  const a = r.assertions;
  const method = `/${GRPC_SERVICE}/${e.rpc.method}`;
  if (a?.fullyQualifiedMethod !== method)
    return `the backend saw ${a?.fullyQualifiedMethod ?? 'nothing'}, want ${method}`;
  if (a.context.namespace !== INFRA) return `answered from namespace ${a.context.namespace}, want ${INFRA}`;
  if (e.backend && !a.context.pod.startsWith(e.backend))
    return `answered by Pod ${a.context.pod}, want ${e.backend}-*`;
  return undefined;
}

async function eventually(addr: string, e: GrpcExpected, t: Timeouts, consecutive = 3): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  let inRow = 0;
  let why = 'not tried';
  while (Date.now() < deadline) {
    const d = compareRpc(e, await sendRpc(addr, e.rpc, Math.max(500, deadline - Date.now())));
    if (d === undefined) {
      if (++inRow >= consecutive) return;
      continue;
    }
    why = d;
    inRow = 0;
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  throw new ConformanceFailure(
    `${e.rpc.method} (authority ${e.rpc.authority ?? addr}, metadata ${JSON.stringify(e.rpc.metadata ?? {})}) at ${addr}: not answered as expected ${consecutive} times in a row within ${t.consistencyMs} ms (last: ${why})`,
  );
}

/** Each expectation at once, as upstream runs its cases in parallel. */
async function expectRpcs(s: Suite, addr: string, cases: GrpcExpected[]): Promise<void> {
  if (!s.sendsTraffic) return;
  const results = await Promise.allSettled(cases.map((c) => eventually(addr, c, s.timeouts)));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  if (failed.length) throw new ConformanceFailure(failed.join('; '));
}

/** GatewayAndRoutesMustBeAccepted for GRPCRoutes (their ResolvedRefs is not asserted upstream). */
const ready = (s: Suite, gw: { namespace: string; name: string; listeners?: string[] }, routes: string[]) =>
  s.status.gatewayAndRoutesAccepted(
    gw,
    'GRPCRoute',
    routes.map((name) => ({ namespace: INFRA, name })),
  );

const unimplemented = (rpc: Rpc): GrpcExpected => ({ rpc, code: STATUS.UNIMPLEMENTED });
const echoWith = (metadata: Record<string, string>, backend?: string): GrpcExpected =>
  backend ? { rpc: { method: 'Echo', metadata }, backend } : unimplemented({ method: 'Echo', metadata });

export const grpcRouteTests: ConformanceTest[] = [
  {
    shortName: 'GRPCExactMethodMatching',
    description: 'A single GRPCRoute with exact method matching for different backends',
    features: GRPC_CORE,
    manifests: ['grpcroute-exact-method-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await ready(s, sameNs, ['exact-matching']);
      await expectRpcs(s, addr, [
        { rpc: { method: 'Echo' }, backend: V1 },
        { rpc: { method: 'EchoTwo' }, backend: V2 },
        unimplemented({ method: 'EchoThree' }),
      ]);
    },
  },
  {
    shortName: 'GRPCRouteHeaderMatching',
    description: 'A single GRPCRoute with header matching for different backends',
    features: GRPC_CORE,
    manifests: ['grpcroute-header-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await ready(s, sameNs, ['grpc-header-matching']);
      await expectRpcs(s, addr, [
        echoWith({ Version: 'one' }, V1),
        echoWith({ Version: 'two' }, V2),
        echoWith({ Version: 'two', Color: 'orange' }, V1),
        echoWith({ Version: 'two', Color: 'blue' }, V2),
        echoWith({ Color: 'orange' }),
        echoWith({ 'Some-Other-Header': 'one' }),
        echoWith({ Color: 'blue' }, V1),
        echoWith({ Color: 'green' }, V1),
        echoWith({ Color: 'red' }, V2),
        echoWith({ Color: 'yellow' }, V2),
        echoWith({ Color: 'purple' }),
      ]);
    },
  },
  {
    shortName: 'GRPCRouteListenerHostnameMatching',
    description:
      'Multiple GRPC listeners with the same port and different hostnames, each with a different GRPCRoute',
    features: GRPC_CORE,
    manifests: ['grpcroute-listener-hostname-matching.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = { namespace: INFRA, name: 'grpcroute-listener-hostname-matching' };
      await ready(s, { ...gw, listeners: ['listener-1'] }, ['backend-v1']);
      await ready(s, { ...gw, listeners: ['listener-2'] }, ['backend-v2']);
      const addr = await ready(s, { ...gw, listeners: ['listener-3', 'listener-4'] }, ['backend-v3']);
      const at = (authority: string, backend?: string): GrpcExpected =>
        backend
          ? { rpc: { method: 'Echo', authority }, backend }
          : unimplemented({ method: 'Echo', authority });
      await expectRpcs(s, addr, [
        at('bar.com', V1),
        at('foo.bar.com', V2),
        at('baz.bar.com', V3),
        at('boo.bar.com', V3),
        at('multiple.prefixes.bar.com', V3),
        at('multiple.prefixes.foo.com', V3),
        at('foo.com'),
        at('no.matching.host'),
      ]);
    },
  },
  {
    shortName: 'GRPCRouteNamedRule',
    description: 'A GRPCRoute with a named GRPCRouteRule',
    features: [...GRPC_CORE, 'GRPCRouteNamedRouteRule'],
    manifests: ['grpcroute-named-rule.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await ready(s, sameNs, ['grpc-named-rules']);
      await expectRpcs(s, addr, [
        { rpc: { method: 'Echo' }, backend: V1 },
        { rpc: { method: 'EchoTwo' }, backend: V2 },
      ]);
    },
  },
  {
    shortName: 'GRPCRouteWeight',
    description: 'A GRPCRoute with weighted backends',
    features: GRPC_CORE,
    manifests: ['grpcroute-weight.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await ready(s, sameNs, ['weighted-backends']);
      if (!s.sendsTraffic) return;
      await eventually(addr, { rpc: { method: 'Echo' } }, s.timeouts);
      // As upstream (weight.TestWeightedDistribution), each call on a channel of its own (the
      // suite's entropy).
      await expectWeightedDistribution(
        { [V1]: 0.7, [V2]: 0.3, [V3]: 0 },
        async () => {
          const r = await sendRpc(addr, { method: 'Echo', metadata: { 'x-entropy': String(Math.random()) } });
          const why = compareRpc({ rpc: { method: 'Echo' } }, r);
          if (why) throw new ConformanceFailure(why);
          return deploymentOf(r.assertions!.context.pod);
        },
        s.log,
        () => eventually(addr, { rpc: { method: 'Echo' } }, s.timeouts),
      );
    },
  },
];
