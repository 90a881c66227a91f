/**
 * The Gateway backend client certificate tests, transcribed from upstream v1.6.1
 * (conformance/tests/gateway-tls-backend-client-certificate.go and
 * gateway-invalid-tls-backend-configuration.go): a Gateway's `spec.tls.backend.clientCertificateRef`
 * presented to a TLS backend that verifies its clients (the echo Pod reports the certificate it
 * was shown), and every way the reference can be wrong said on the Gateway's ResolvedRefs condition
 * while the Gateway stays accepted.
 */
import { namespacesReady } from '../harness/namespaces.ts';
import { ConformanceFailure } from '../harness/status.ts';
import { type ConformanceTest, expectAll, INFRA } from '../harness/suite.ts';

const features = ['Gateway', 'GatewayBackendClientCertificate', 'HTTPRoute', 'BackendTLSPolicy'];
const ref = (name: string) => ({ namespace: INFRA, name });

export const backendClientCertificateTests: ConformanceTest[] = [
  {
    shortName: 'GatewayTLSBackendClientCertificate',
    description:
      'A Gateway with a client certificate configured should present the certificate when connecting to a backend using TLS.',
    features,
    manifests: ['gateway-tls-backend-client-certificate.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('gateway-tls-backend-client-certificate');
      const route = ref('gateway-tls-backend-client-certificate');
      // Its manifests start a backend Pod of their own: upstream waits for it (NamespacesMustBeReady).
      await namespacesReady(s, [INFRA]);
      const addr = await s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', [route]);
      await s.status.routeCondition('HTTPRoute', route, gw, { type: 'ResolvedRefs', status: 'True' });
      await s.status.backendTlsPolicyCondition(ref('gateway-tls-backend-client-certificate-test'), gw, {
        type: 'Accepted',
        status: 'True',
      });
      await s.status.gatewayCondition(gw, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' });
      const secret = (await s.rig.api.get(
        `/api/v1/namespaces/${INFRA}/secrets/tls-checks-client-certificate`,
      )) as { data?: Record<string, string> } | undefined;
      const clientCert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString('utf8');
      if (!clientCert) throw new ConformanceFailure('missing required server certificate pem for the test');
      await expectAll(s, addr, [
        {
          request: { host: 'abc.example.com', path: '/', sni: 'abc.example.com', clientCert },
          response: { statusCodes: [200] },
          namespace: INFRA,
        },
      ]);
    },
  },
  {
    shortName: 'GatewayInvalidTLSBackendConfiguration',
    description:
      'A Gateway should have ResolvedRefs condition set false if the Gateway has an invalid backend TLS configuration',
    features,
    manifests: ['gateway-invalid-tls-backend-configuration.yaml'],
    traffic: false,
    run: async (s) => {
      for (const [name, reason] of [
        ['gateway-client-certificate-nonexistent-secret', 'InvalidClientCertificateRef'],
        ['gateway-client-certificate-unsupported-group', 'InvalidClientCertificateRef'],
        ['gateway-client-certificate-unsupported-kind', 'InvalidClientCertificateRef'],
        ['gateway-client-certificate-malformed-secret', 'InvalidClientCertificateRef'],
        ['gateway-client-certificate-missing-reference-grant', 'RefNotPermitted'],
      ] as const) {
        await s.status.gatewayLatest(ref(name));
        await s.status.gatewayCondition(ref(name), { type: 'ResolvedRefs', status: 'False', reason });
        await s.status.gatewayCondition(ref(name), { type: 'Accepted', status: 'True', reason: 'Accepted' });
      }
    },
  },
];
