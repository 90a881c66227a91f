/**
 * The Gateway API CRDs' channels on the sandbox (src/sandbox/gateway-api.ts): the experimental
 * channel is the standard install with HTTPRoute's experimental CRD in its place. A rule's `retry`
 * is stored where that CRD is installed and pruned under the standard one, as a real API server
 * does; a value the experimental schema forbids is refused at the API, never stored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewayApiCrds, installGatewayApiCrds } from '../../../src/sandbox/gateway-api.ts';
import { api, useSandbox } from '../../support/sandbox.ts';

const CHANNEL = 'gateway.networking.k8s.io/channel';
const ROUTES = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';

const withRetry = (name: string, retry: Record<string, unknown>) => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name, namespace: 'default' },
  spec: {
    parentRefs: [{ name: 'gw' }],
    rules: [{ backendRefs: [{ name: 'web', port: 80 }], retry }],
  },
});

interface Crd {
  metadata?: { name?: string; annotations?: Record<string, string> };
}

describe('Gateway API channels on the sandbox', () => {
  it('experimental: the standard CRDs with HTTPRoute the experimental one (v1.6.1)', () => {
    const standard = gatewayApiCrds() as Crd[];
    const experimental = gatewayApiCrds('experimental') as Crd[];
    assert.deepEqual(
      experimental.map((c) => c.metadata?.name),
      standard.map((c) => c.metadata?.name),
    );
    for (const c of experimental) {
      const want = c.metadata?.name === 'httproutes.gateway.networking.k8s.io' ? 'experimental' : 'standard';
      assert.equal(c.metadata?.annotations?.[CHANNEL], want, c.metadata?.name);
      assert.equal(c.metadata?.annotations?.['gateway.networking.k8s.io/bundle-version'], 'v1.6.1');
    }
  });

  for (const channel of ['standard', 'experimental'] as const) {
    it(`${channel}: a rule's retry is ${channel === 'standard' ? 'pruned' : 'stored'}; a status out of range is refused`, async (t) => {
      const { url } = await useSandbox(t);
      await installGatewayApiCrds(url, {}, channel);
      const made = await api(url, 'POST', ROUTES, withRetry('r', { codes: [500, 503], attempts: 2 }));
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const got = (await api(url, 'GET', `${ROUTES}/r`)).body as { spec: { rules: { retry?: unknown }[] } };
      assert.deepEqual(
        got.spec.rules[0]!.retry,
        channel === 'experimental' ? { codes: [500, 503], attempts: 2 } : undefined,
      );
      const bad = await api(url, 'POST', ROUTES, withRetry('bad', { codes: [600], attempts: 0 }));
      if (channel === 'experimental') {
        assert.equal(bad.status, 422, JSON.stringify(bad.body));
        assert.match(JSON.stringify(bad.body), /retry/);
        assert.equal((await api(url, 'GET', `${ROUTES}/bad`)).status, 404);
      } else assert.equal(bad.status, 201, 'pruned, as the standard CRD has no retry');
    });
  }
});
