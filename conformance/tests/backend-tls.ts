/**
 * BackendTLSPolicy tests, transcribed from upstream v1.6.1 (conformance/tests/backendtlspolicy*.go):
 * re-encryption to the tls-backend Pods (which report the server name they were asked for), the
 * policy's status per Gateway (Accepted, ResolvedRefs with the spec's reasons; Conflicted for the
 * newer of two), a hostname or CA that does not match failing at the gateway, a ConfigMap changed
 * and reconciled, and observedGeneration. Each runs only where the GatewayClass claims
 * BackendTLSPolicy (and SAN validation for the SAN test).
 */
import { ConformanceFailure, type Cond } from '../harness/status.ts';
import { expectFailure } from '../harness/http.ts';
import { type ConformanceTest, expectAll, INFRA, routesReady, type Suite } from '../harness/suite.ts';

const features = ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'];
const sameNs = { namespace: INFRA, name: 'same-namespace' };
const ref = (name: string) => ({ namespace: INFRA, name });
const ACCEPTED: Cond = { type: 'Accepted', status: 'True', reason: 'Accepted' };
const RESOLVED: Cond = { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' };
const NO_VALID_CA: Cond = { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' };
const INVALID_CA_REF: Cond = { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCACertificateRef' };
const POLICIES = '/apis/gateway.networking.k8s.io/v1/namespaces/gateway-conformance-infra/backendtlspolicies';
const CONFIG_MAPS = '/api/v1/namespaces/gateway-conformance-infra/configmaps';

/** GatewayAndRoutesMustBeAccepted (ResolvedRefs not required): the Gateway's address. */
const accepted = (s: Suite, route: string, gw = sameNs) =>
  s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', [ref(route)]);

const policyHas = (s: Suite, policy: string, conds: Cond[], gw = sameNs) =>
  conds.reduce(
    (p, c) => p.then(() => s.status.backendTlsPolicyCondition(ref(policy), gw, c)),
    Promise.resolve(),
  );

/** The route's requests over `path` answer 200 from the tls-backend, asked for `sni`. */
const reaches = (path: string, sni: string, host = 'abc.example.com') => ({
  request: { host, path, sni },
  response: { statusCode: 200 },
  namespace: INFRA,
});

/** Changing the CA ConfigMap a policy names is reconciled (upstream's last subtest). */
async function reconcile(s: Suite): Promise<void> {
  const policy = ref('reconcile-test');
  await policyHas(s, policy.name, [ACCEPTED, RESOLVED]);
  const shared = (await s.rig.api.get(`${CONFIG_MAPS}/tls-checks-ca-certificate`)) as {
    data?: Record<string, string>;
  };
  const original = shared?.data?.['ca.crt'] ?? '';
  const testCm = 'tls-checks-ca-certificate-reconcile-test';
  const refs = (name: string) => ({
    spec: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name }] } },
  });
  await s.rig.api.patch(`${POLICIES}/reconcile-test`, refs(testCm));
  try {
    await policyHas(s, policy.name, [NO_VALID_CA, INVALID_CA_REF]);
    await s.rig.api.request('POST', CONFIG_MAPS, {
      metadata: { namespace: INFRA, name: testCm },
      data: { 'ca.crt': original },
    });
    await policyHas(s, policy.name, [ACCEPTED, RESOLVED]);
    await s.rig.api.patch(`${CONFIG_MAPS}/${testCm}`, { data: { 'ca.crt': '' } });
    await policyHas(s, policy.name, [NO_VALID_CA, INVALID_CA_REF]);
    await s.rig.api.patch(`${CONFIG_MAPS}/${testCm}`, { data: { 'ca.crt': original } });
    await policyHas(s, policy.name, [ACCEPTED, RESOLVED]);
  } finally {
    await s.rig.api.patch(`${POLICIES}/reconcile-test`, refs('tls-checks-ca-certificate'));
    await s.rig.api.delete(`${CONFIG_MAPS}/${testCm}`);
  }
}

export const backendTlsTests: ConformanceTest[] = [
  {
    shortName: 'BackendTLSPolicy',
    description: 'BackendTLSPolicy must be used to configure TLS connection between gateway and backend',
    features,
    manifests: ['backendtlspolicy.yaml'],
    traffic: true,
    run: async (s) => {
      // Re-encrypt: an HTTPS listener's request sent on over TLS, the policy's hostname as SNI.
      const httpsGw = ref('same-namespace-with-https-listener');
      const httpsAddr = await routesReady(s, httpsGw, [ref('backendtlspolicy-reencrypt')]);
      await policyHas(s, 'normative-test', [ACCEPTED, RESOLVED], httpsGw);
      const secret = (await s.rig.api.get(
        `/api/v1/namespaces/${INFRA}/secrets/tls-validity-checks-certificate`,
      )) as { data?: Record<string, string> };
      const ca = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
      if (!ca) throw new ConformanceFailure('missing required server certificate pem for the test');
      await expectAll(
        s,
        httpsAddr,
        [
          {
            request: { host: 'https-listener.org', path: '/backendtlspolicy' },
            expectedRequest: { path: '/backendtlspolicy', sni: 'abc.example.com' },
            response: { statusCode: 200 },
            namespace: INFRA,
          },
        ],
        { ca, servername: 'https-listener.org' },
      );

      const addr = await routesReady(s, sameNs, [ref('backendtlspolicy')]);
      await policyHas(s, 'normative-test', [ACCEPTED, RESOLVED]);
      await expectAll(s, addr, [reaches('/backendtlspolicy', 'abc.example.com')]);
      // A hostname the backend's certificate does not carry, then a CA that did not sign it: both fail.
      await policyHas(s, 'host-mismatch', [ACCEPTED, RESOLVED]);
      if (s.sendsTraffic)
        await expectFailure(
          addr,
          { host: 'abc.example.org', path: '/backendtlspolicy-host-mismatch', sni: 'abc.example.com' },
          s.timeouts,
        );
      await policyHas(s, 'cert-mismatch', [ACCEPTED, RESOLVED]);
      if (s.sendsTraffic)
        await expectFailure(
          addr,
          { host: 'abc.example.com', path: '/backendtlspolicy-cert-mismatch', sni: 'abc.example.com' },
          s.timeouts,
        );
      await reconcile(s);
    },
  },
  {
    shortName: 'BackendTLSPolicyConflictResolution',
    description:
      'Verifies that when multiple BackendTLSPolicies target the same Service, only one policy is accepted while conflicting policies are rejected, and traffic continues to route successfully.',
    features,
    manifests: ['backendtlspolicy-conflict-resolution.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [ref('backendtlspolicy-conflict-resolution')]);
      const conflicted: Cond = { type: 'Accepted', status: 'False', reason: 'Conflicted' };
      await policyHas(s, 'conflicted-without-section-name-1', [ACCEPTED]);
      await policyHas(s, 'conflicted-without-section-name-2', [conflicted]);
      await expectAll(s, addr, [
        reaches('/backendtlspolicy-conflicted-without-section-name', 'other.example.com'),
      ]);
      await policyHas(s, 'conflicted-with-section-name-1', [ACCEPTED]);
      await policyHas(s, 'conflicted-with-section-name-2', [conflicted]);
      await expectAll(s, addr, [
        reaches('/backendtlspolicy-conflicted-with-section-name', 'other.example.com'),
      ]);
      await policyHas(s, 'not-conflicted-with-section-name', [ACCEPTED]);
      await policyHas(s, 'not-conflicted-without-section-name', [ACCEPTED]);
      await expectAll(s, addr, [
        reaches('/backendtlspolicy-not-conflicted-with-section-name', 'other.example.com'),
        reaches('/backendtlspolicy-not-conflicted-without-section-name', 'abc.example.com'),
      ]);
    },
  },
  {
    shortName: 'BackendTLSPolicyInvalidCACertificateRef',
    description:
      'A BackendTLSPolicy that specifies a single invalid CACertificateRef should have the Accepted and ResolvedRefs status condition set False with appropriate reasons, and HTTP requests to a backend targeted by this policy should fail with a 5xx response.',
    features,
    manifests: ['backendtlspolicy-invalid-ca-certificate-ref.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await accepted(s, 'backendtlspolicy-invalid-ca-certificate-ref');
      for (const name of ['nonexistent-ca-certificate-ref', 'malformed-ca-certificate-ref']) {
        await policyHas(s, name, [NO_VALID_CA, INVALID_CA_REF]);
        await expectAll(s, addr, [
          {
            request: { host: 'abc.example.com', path: `/backendtlspolicy-${name}` },
            response: { statusCodes: [500, 502, 503] },
            namespace: INFRA,
          },
        ]);
      }
    },
  },
  {
    shortName: 'BackendTLSPolicyInvalidKind',
    description:
      'A BackendTLSPolicy that specifies a single CACertificateRef with an invalid kind should have the Accepted and ResolvedRefs status condition set False with appropriate reasons, and HTTP requests to a backend targeted by this policy should fail with a 5xx response.',
    features,
    manifests: ['backendtlspolicy-invalid-kind.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await accepted(s, 'backendtlspolicy-invalid-kind-test');
      await policyHas(s, 'invalid-kind', [
        NO_VALID_CA,
        { type: 'ResolvedRefs', status: 'False', reason: 'InvalidKind' },
      ]);
      await expectAll(s, addr, [
        {
          request: { host: 'abc.example.com', path: '/backendtlspolicy-invalid-kind' },
          response: { statusCodes: [500, 502, 503] },
          namespace: INFRA,
        },
      ]);
    },
  },
  {
    shortName: 'BackendTLSPolicyObservedGenerationBump',
    description:
      'A BackendTLSPolicy in the gateway-conformance-infra namespace should update the observedGeneration in all of its Status.Conditions after an update to the spec',
    features,
    manifests: ['backendtlspolicy-observed-generation-bump.yaml'],
    traffic: false,
    run: async (s) => {
      const policy = ref('observed-generation-bump');
      const before = await s.status.backendTlsPolicyLatest(policy);
      if (before.stale) throw new ConformanceFailure(`BackendTLSPolicy before the update: ${before.stale}`);
      await s.rig.api.patch(`${POLICIES}/observed-generation-bump`, {
        spec: { validation: { hostname: 'foo.example.com' } },
      });
      await s.status.backendTlsPolicyCondition(policy, sameNs, { type: 'Accepted', status: 'True' });
      const after = await s.status.backendTlsPolicyLatest(policy);
      if (after.stale) throw new ConformanceFailure(`BackendTLSPolicy after the update: ${after.stale}`);
      if (after.generation === before.generation)
        throw new ConformanceFailure('generation should change after an update');
    },
  },
  {
    shortName: 'BackendTLSPolicySANValidation',
    description:
      'BackendTLSPolicy with subjectAltNames: requests succeed where a DNS or URI name of the backend certificate matches one of them, and fail where none does',
    features: [...features, 'BackendTLSPolicySANValidation'],
    manifests: ['backendtlspolicy-san.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [ref('backendtlspolicy-san-test')]);
      const pass = ['san-dns', 'san-uri', 'multiple-sans'];
      const fail = ['san-dns-mismatch', 'san-uri-mismatch', 'multiple-mismatch-sans'];
      for (const name of [...pass, ...fail])
        await policyHas(s, name, [{ type: 'Accepted', status: 'True', reason: 'Accepted' }]);
      await expectAll(
        s,
        addr,
        pass.map((n) => reaches(`/backendtlspolicy-${n}`, 'abc.example.com')),
      );
      if (s.sendsTraffic)
        for (const n of fail)
          await expectFailure(
            addr,
            { host: 'abc.example.com', path: `/backendtlspolicy-${n}`, sni: 'abc.example.com' },
            s.timeouts,
          );
    },
  },
];
