/**
 * Core Gateway and GatewayClass status tests, transcribed from upstream v1.6.1: invalid parameters,
 * route kinds, certificates and protocols, certificate references across namespaces, and
 * observedGeneration.
 */
import { ConformanceFailure } from '../harness/status.ts';
import { type ConformanceTest, INFRA } from '../harness/suite.ts';

const GW_V1 = '/apis/gateway.networking.k8s.io/v1';
const HTTP_ROUTE = [{ kind: 'HTTPRoute' }];
const gw = (name: string) => ({ namespace: INFRA, name });
const GATEWAY = ['Gateway'];
const SECRET_GRANT = ['Gateway', 'ReferenceGrant'];

/** An HTTPS listener whose certificate reference does (or does not) resolve. */
const httpsListener = (resolved: boolean) => [
  {
    name: 'https',
    supportedKinds: HTTP_ROUTE,
    attachedRoutes: 0,
    conditions: resolved
      ? [
          { type: 'Programmed', status: 'True', reason: 'Programmed' },
          { type: 'ResolvedRefs', status: 'True' },
        ]
      : [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }],
  },
];

export const gatewayTests: ConformanceTest[] = [
  {
    shortName: 'GatewayClassObservedGenerationBump',
    description:
      'A GatewayClass should update the observedGeneration in all of its Status.Conditions after an update to the spec',
    features: GATEWAY,
    manifests: ['gatewayclass-observed-generation-bump.yaml'],
    traffic: false,
    run: async (s) => {
      const name = 'gatewayclass-observed-generation-bump';
      const path = `${GW_V1}/gatewayclasses/${name}`;
      await s.status.gatewayClassAccepted(name, undefined);
      const original = (await s.rig.api.get(path)) as { metadata: { generation: number } };
      await s.rig.api.patch(path, { spec: { description: 'new' } });
      await s.status.gatewayClassAccepted(name, undefined);
      const updated = (await s.rig.api.get(path)) as {
        metadata: { generation: number };
        status?: { conditions?: { observedGeneration?: number }[] };
      };
      if (updated.metadata.generation === original.metadata.generation)
        throw new ConformanceFailure('generation should change after an update');
    },
  },
  {
    shortName: 'GatewayInvalidParametersRef',
    description:
      'A Gateway whose infrastructure.parametersRef names an object that does not exist is not Accepted, reason InvalidParameters',
    features: GATEWAY,
    manifests: ['gateway-invalid-parameters-ref.yaml'],
    traffic: false,
    run: async (s) => {
      await s.status.gatewayLatest(gw('gateway-invalid-parameters-ref'));
      await s.status.gatewayCondition(gw('gateway-invalid-parameters-ref'), {
        type: 'Accepted',
        status: 'False',
        reason: 'InvalidParameters',
      });
    },
  },
  {
    shortName: 'GatewayInvalidRouteKind',
    description:
      'A Gateway in the gateway-conformance-infra namespace should fail to become ready an invalid Route kind is specified.',
    features: GATEWAY,
    manifests: ['gateway-invalid-route-kind.yaml'],
    traffic: false,
    run: async (s) => {
      const invalid = { type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' };
      await s.status.gatewayListeners(gw('gateway-only-invalid-route-kind'), [
        { name: 'http', supportedKinds: [], attachedRoutes: 0, conditions: [invalid] },
      ]);
      await s.status.gatewayListeners(gw('gateway-supported-and-invalid-route-kind'), [
        { name: 'http', supportedKinds: HTTP_ROUTE, attachedRoutes: 0, conditions: [invalid] },
      ]);
    },
  },
  {
    shortName: 'GatewayInvalidTLSConfiguration',
    description: 'A Gateway should fail to become ready if the Gateway has an invalid TLS configuration',
    features: GATEWAY,
    manifests: ['gateway-invalid-tls-configuration.yaml'],
    traffic: false,
    run: async (s) => {
      const listeners = [
        {
          name: 'https',
          supportedKinds: HTTP_ROUTE,
          attachedRoutes: 0,
          conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidCertificateRef' }],
        },
      ];
      await Promise.all(
        [
          'gateway-certificate-nonexistent-secret',
          'gateway-certificate-unsupported-group',
          'gateway-certificate-unsupported-kind',
          'gateway-certificate-malformed-secret',
        ].map((name) => s.status.gatewayListeners(gw(name), listeners)),
      );
    },
  },
  {
    shortName: 'GatewayListenerUnsupportedProtocol',
    description:
      'A Gateway whose listeners all have unsupported protocols is not Accepted; one with a supported listener is',
    features: GATEWAY,
    manifests: ['gateway-invalid-listeners-unsupported-protocol.yaml'],
    traffic: false,
    run: async (s) => {
      const unsupported = {
        name: 'invalid',
        supportedKinds: [],
        attachedRoutes: 0,
        conditions: [{ type: 'Accepted', status: 'False', reason: 'UnsupportedProtocol' }],
      };
      const only = gw('gateway-only-unsupported-protocols');
      await s.status.gatewayLatest(only);
      await s.status.gatewayCondition(only, {
        type: 'Accepted',
        status: 'False',
        reason: 'ListenersNotValid',
      });
      await s.status.gatewayListeners(only, [unsupported]);
      const mixed = gw('gateway-supported-and-unsupported-protocols');
      await s.status.gatewayLatest(mixed);
      await s.status.gatewayCondition(mixed, {
        type: 'Accepted',
        status: 'True',
        reason: 'ListenersNotValid',
      });
      await s.status.gatewayListeners(mixed, [
        {
          name: 'http',
          supportedKinds: HTTP_ROUTE,
          attachedRoutes: 0,
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
        },
        unsupported,
      ]);
    },
  },
  {
    shortName: 'GatewayObservedGenerationBump',
    description:
      'A Gateway in the gateway-conformance-infra namespace should update the observedGeneration in all of its Status.Conditions after an update to the spec',
    features: GATEWAY,
    manifests: ['gateway-observed-generation-bump.yaml'],
    traffic: false,
    run: async (s) => {
      const ref = gw('gateway-observed-generation-bump');
      const path = `${GW_V1}/namespaces/${INFRA}/gateways/${ref.name}`;
      await s.status.gatewayLatest(ref);
      const original = (await s.rig.api.get(path)) as {
        metadata: { generation: number };
        spec: { listeners: unknown[] };
      };
      const listeners = [
        ...original.spec.listeners,
        {
          name: 'alternate',
          hostname: 'foo.com',
          port: 80,
          protocol: 'HTTP',
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ];
      await s.rig.api.patch(path, { spec: { listeners } });
      await s.status.gatewayLatest(ref);
      const updated = (await s.rig.api.get(path)) as { metadata: { generation: number } };
      if (updated.metadata.generation === original.metadata.generation)
        throw new ConformanceFailure('generation should change after an update');
    },
  },
  {
    shortName: 'GatewaySecretInvalidReferenceGrant',
    description:
      'A Gateway in the gateway-conformance-infra namespace should fail to become ready if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant exists but does not grant permission to that specific Secret',
    features: SECRET_GRANT,
    manifests: ['gateway-secret-invalid-reference-grant.yaml'],
    traffic: false,
    run: (s) => s.status.gatewayListeners(gw('gateway-secret-invalid-reference-grant'), httpsListener(false)),
  },
  {
    shortName: 'GatewaySecretMissingReferenceGrant',
    description:
      'A Gateway in the gateway-conformance-infra namespace should fail to become programmed if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to the Secret does not exist',
    features: SECRET_GRANT,
    manifests: ['gateway-secret-missing-reference-grant.yaml'],
    traffic: false,
    run: (s) => s.status.gatewayListeners(gw('gateway-secret-missing-reference-grant'), httpsListener(false)),
  },
  {
    shortName: 'GatewaySecretReferenceGrantAllInNamespace',
    description:
      'A Gateway in the gateway-conformance-infra namespace should become programmed if the Gateway has a certificateRef for a Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to all Secrets in the namespace exists',
    features: SECRET_GRANT,
    manifests: ['gateway-secret-reference-grant-all-in-namespace.yaml'],
    traffic: false,
    run: (s) =>
      s.status.gatewayListeners(gw('gateway-secret-reference-grant-all-in-namespace'), httpsListener(true)),
  },
  {
    shortName: 'GatewaySecretReferenceGrantSpecific',
    description:
      'A Gateway in the gateway-conformance-infra namespace should become programmed if the Gateway has a certificateRef for a specific Secret in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to the specific Secret exists',
    features: SECRET_GRANT,
    manifests: ['gateway-secret-reference-grant-specific.yaml'],
    traffic: false,
    run: (s) => s.status.gatewayListeners(gw('gateway-secret-reference-grant-specific'), httpsListener(true)),
  },
];
