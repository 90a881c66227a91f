/**
 * The Gateway API conformance harness (conformance/): every upstream core test is transcribed, and
 * its status half passes on the BIG-IP simulator (the two HAProxy transports, with real traffic,
 * have files of their own: conformance-haproxy-*.test.ts); the reports are upstream
 * ConformanceReports and the ones committed under docs/conformance/ say what a run says. The
 * harness itself is held to fail: a wrong expectation, a status that never comes and a manifest
 * that cannot be read each fail their test with why, and a profile with a failure is reported as
 * failed.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GATEWAY_GRPC, GATEWAY_HTTP, GATEWAY_TLS, profileReport } from '../../conformance/harness/report.ts';
import { startRig } from '../../conformance/harness/rig.ts';
import {
  type ConformanceTest,
  expectAll,
  INFRA,
  routesReady,
  runTest,
} from '../../conformance/harness/suite.ts';
import { ALL_TESTS } from '../../conformance/tests/index.ts';
import { compareRpc } from '../../conformance/tests/grpcroute.ts';
import { sendRpc, STATUS } from '../../conformance/harness/grpc-echo.ts';
import { expectTcpEcho } from '../../conformance/harness/tls.ts';
import { SHARED } from '../support/cli-process.ts';
import { adapterCaseName, checkAdapterRun } from '../support/conformance-adapter.ts';
import { haproxyMissing } from '../support/haproxy.ts';

const skip = haproxyMissing();
describe('Gateway API conformance harness', { skip }, () => {
  it('transcribes every upstream GATEWAY-HTTP core test once, with the upstream manifests', () => {
    const names = ALL_TESTS.map((t) => t.shortName);
    assert.equal(new Set(names).size, names.length, 'a test transcribed twice');
    for (const p of [GATEWAY_HTTP, GATEWAY_TLS, GATEWAY_GRPC])
      assert.deepEqual(
        p.coreTests.filter((n) => !names.includes(n)),
        [],
        `${p.name} core tests not transcribed`,
      );
    for (const t of ALL_TESTS) {
      for (const m of t.manifests) {
        assert.ok(
          existsSync(new URL(`../../conformance/manifests/tests/${m}`, import.meta.url)),
          `${t.shortName}: ${m}`,
        );
      }
    }
  });

  const BASE = join(SHARED, 'specs/gateway-api/conformance-base-manifests-v1.6.1.yaml');
  it(
    'the bundled base manifests are upstream v1.6.1 ones, byte for byte',
    // Compares the bundle with the workspace's copy when there is one; the harness never needs it.
    { skip: !existsSync(BASE) && 'no ../shared/specs here' },
    () => {
      assert.equal(
        readFileSync(new URL('../../conformance/manifests/base.yaml', import.meta.url), 'utf8'),
        readFileSync(BASE, 'utf8'),
      );
    },
  );

  it(adapterCaseName('f5'), () => checkAdapterRun('f5'));

  it('fails a test whose expectation does not hold, one whose status never comes, and one that cannot be read', async (t) => {
    // Addresses of its own (block 5): the runtime transport's run may be going on beside it.
    const rig = await startRig('haproxy-runtime', { block: 5 });
    t.after(() => rig.close());
    // The cases that need a Programmed Gateway first get the time a loaded machine takes for it
    // (a clean-clone run under the whole suite timed out at 1.5 s); the one about a status that
    // never comes waits 1.5 s for it.
    const timeouts = { statusMs: 30_000, consistencyMs: 1500, pollMs: 50 };
    const quick = { ...timeouts, statusMs: 1500 };
    const wrongBackend: ConformanceTest = {
      shortName: 'WrongBackend',
      description: 'HTTPRouteSimpleSameNamespace expecting the wrong backend',
      features: ['Gateway', 'HTTPRoute'],
      manifests: ['httproute-simple-same-namespace.yaml'],
      traffic: true,
      run: async (s) => {
        const addr = await routesReady(s, { namespace: INFRA, name: 'same-namespace' }, [
          { namespace: INFRA, name: 'gateway-conformance-infra-test' },
        ]);
        await expectAll(s, addr, [{ request: { path: '/' }, backend: 'infra-backend-v2', namespace: INFRA }]);
      },
    };
    const o1 = await runTest(rig, wrongBackend, { timeouts });
    assert.equal(o1.result, 'failed');
    assert.match(
      (o1 as { reason: string }).reason,
      /answered by Pod infra-backend-v1-\S+, want infra-backend-v2/,
    );

    const neverAccepted: ConformanceTest = {
      ...wrongBackend,
      shortName: 'NeverAccepted',
      run: async (s) => {
        // The route's first status may take longer than the quick timeout on a loaded machine
        // (a clean-clone run saw "no status for the Gateway"): wait up to 30 s for one, then give
        // the condition that never comes its 1.5 s.
        const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/httproutes/gateway-conformance-infra-test`;
        for (const until = Date.now() + 30_000; Date.now() < until;) {
          const o = (await s.status.get(path)) as { status?: { parents?: unknown[] } } | undefined;
          if (o?.status?.parents?.length) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        await s.status.routeCondition(
          'HTTPRoute',
          { namespace: INFRA, name: 'gateway-conformance-infra-test' },
          { namespace: INFRA, name: 'same-namespace' },
          { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' },
        );
      },
    };
    const o2 = await runTest(rig, neverAccepted, { timeouts: quick });
    assert.equal(o2.result, 'failed');
    assert.match(
      (o2 as { reason: string }).reason,
      /timed out after 1500 ms \(Accepted=False\/NotAllowedByListeners not in \[Accepted=True/,
    );

    const cm = (await rig.api.get(`/api/v1/namespaces/${INFRA}/configmaps/tls-checks-ca-certificate`)) as {
      data: Record<string, string>;
    };
    const plainExpected: ConformanceTest = {
      ...wrongBackend,
      shortName: 'TlsBackendSaidPlain',
      features: ['Gateway', 'TLSRoute'],
      manifests: ['tlsroute-simple-same-namespace.yaml'],
      run: async (s) => {
        const addr = await s.status.gatewayAddress({ namespace: INFRA, name: 'gateway-tlsroute' });
        await expectTcpEcho(
          addr,
          'abc.example.com',
          cm.data['ca.crt']!,
          { backendIsTLS: false, backend: 'tcp-backend', namespace: INFRA },
          s.timeouts,
        );
      },
    };
    const o4 = await runTest(rig, plainExpected, { timeouts });
    assert.equal(o4.result, 'failed');
    assert.match((o4 as { reason: string }).reason, /backend TLS true, want false/);

    // gRPC: a call answered by another backend than expected fails, with why; and when the
    // backend's Pods are gone the call is not OK (UNAVAILABLE), never answered by someone else.
    const grpcWrong: ConformanceTest = {
      ...wrongBackend,
      shortName: 'GrpcWrongBackend',
      features: ['Gateway', 'GRPCRoute'],
      manifests: ['grpcroute-exact-method-matching.yaml'],
      run: async (s) => {
        const addr = await s.status.gatewayAndRoutesAccepted(
          { namespace: INFRA, name: 'same-namespace' },
          'GRPCRoute',
          [{ namespace: INFRA, name: 'exact-matching' }],
        );
        const ok = await sendRpc(addr, { method: 'Echo' });
        assert.equal(
          compareRpc({ rpc: { method: 'Echo' }, backend: 'grpc-infra-backend-v1' }, ok),
          undefined,
        );
        const why = compareRpc({ rpc: { method: 'Echo' }, backend: 'grpc-infra-backend-v2' }, ok);
        assert.match(why ?? '', /answered by Pod grpc-infra-backend-v1-\S+, want grpc-infra-backend-v2/);
        assert.match(
          compareRpc({ rpc: { method: 'EchoTwo' }, backend: 'grpc-infra-backend-v2' }, ok) ?? '',
          /the backend saw \/\S+\/Echo, want \/\S+\/EchoTwo/,
        );
        // The fault: every backend Pod stopped; the load balancer answers, the call fails.
        await s.rig.stopBackends(INFRA, [
          'grpc-infra-backend-v1',
          'grpc-infra-backend-v2',
          'grpc-infra-backend-v3',
        ]);
        const gone = await sendRpc(addr, { method: 'Echo' });
        assert.notEqual(gone.code, STATUS.OK);
        assert.match(compareRpc({ rpc: { method: 'Echo' } }, gone) ?? '', /^status \S+, want OK/);
      },
    };
    const o5 = await runTest(rig, grpcWrong, { timeouts });
    assert.equal(o5.result, 'passed', JSON.stringify(o5));

    const unreadable: ConformanceTest = {
      ...wrongBackend,
      shortName: 'Unreadable',
      manifests: ['no-such-file.yaml'],
    };
    const o3 = await runTest(rig, unreadable, { timeouts });
    assert.equal(o3.result, 'failed');
    assert.match((o3 as { reason: string }).reason, /no-such-file\.yaml/);

    // What a failed test did to the cluster is gone: the route of the wrong test was deleted.
    assert.equal(
      await rig.api.get(
        `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/httproutes/gateway-conformance-infra-test`,
      ),
      undefined,
    );
    // A profile with a failure is a failure, naming it; the rest of the core is counted skipped.
    const p = profileReport(
      GATEWAY_HTTP,
      [wrongBackend],
      [{ ...o1, name: 'HTTPRouteSimpleSameNamespace' }],
      ['Gateway', 'HTTPRoute'],
    );
    assert.equal(p.core.result, 'failure');
    assert.deepEqual(p.core.failedTests, ['HTTPRouteSimpleSameNamespace']);
    assert.equal(p.core.statistics.Skipped, 36);
  });
});
