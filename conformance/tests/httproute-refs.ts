/**
 * Core HTTPRoute tests of references and status, transcribed from upstream v1.6.1: backends that
 * do not resolve (500 and the ResolvedRefs reason), ReferenceGrants given and taken away, parents
 * that do not match, and observedGeneration.
 */
import type { Expected } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import {
  APP,
  type ConformanceTest,
  expectAll,
  HTTP_CORE,
  INFRA,
  routesReady,
  type Suite,
  WEB,
} from '../harness/suite.ts';

const sameNs = { namespace: INFRA, name: 'same-namespace' };
const status500 = (path: string): Expected => ({
  request: { method: 'GET', path },
  response: { statusCode: 500 },
});
const REF_GRANT = ['Gateway', 'HTTPRoute', 'ReferenceGrant'];

/** A route accepted on same-namespace whose refs do not resolve, for this reason; `paths` answer 500. */
async function unresolved(s: Suite, name: string, reason: string, paths: string[]): Promise<string> {
  const route = { namespace: INFRA, name };
  const addr = await s.status.gatewayAndRoutesAccepted(sameNs, 'HTTPRoute', [route]);
  await s.status.routeCondition('HTTPRoute', route, sameNs, {
    type: 'ResolvedRefs',
    status: 'False',
    reason,
  });
  await expectAll(s, addr, paths.map(status500));
  return addr;
}

/** A route no listener takes: Accepted=False for this reason, no accepted parent, no route attached. */
async function notAttached(
  s: Suite,
  route: { namespace: string; name: string },
  reason: string,
  gw: { namespace: string; name: string } = sameNs,
): Promise<void> {
  await s.status.routeCondition('HTTPRoute', route, gw, { type: 'Accepted', status: 'False', reason });
  await s.status.routeNoAcceptedParents('HTTPRoute', route);
  await s.status.gatewayZeroRoutes(gw);
}

export const refTests: ConformanceTest[] = [
  {
    shortName: 'HTTPRouteInvalidBackendRefUnknownKind',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason InvalidKind when attempting to bind to a Gateway in the same namespace if the route has a BackendRef that points to an unknown Kind.',
    features: HTTP_CORE,
    manifests: ['httproute-invalid-backendref-unknown-kind.yaml'],
    traffic: true,
    run: async (s) => void (await unresolved(s, 'invalid-backend-ref-unknown-kind', 'InvalidKind', ['/v2'])),
  },
  {
    shortName: 'HTTPRouteInvalidCrossNamespaceBackendRef',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason RefNotPermitted when attempting to bind to a Gateway in the same namespace if the route has a BackendRef Service in the gateway-conformance-web-backend namespace and a ReferenceGrant granting permission to route to that Service does not exist',
    features: REF_GRANT,
    manifests: ['httproute-invalid-cross-namespace-backend-ref.yaml'],
    traffic: true,
    run: async (s) =>
      void (await unresolved(s, 'invalid-cross-namespace-backend-ref', 'RefNotPermitted', ['/'])),
  },
  {
    shortName: 'HTTPRouteInvalidNonExistentBackendRef',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set a ResolvedRefs status False with reason BackendNotFound and return 500 when binding to a Gateway in the same namespace if the route has a BackendRef Service that does not exist',
    features: HTTP_CORE,
    manifests: ['httproute-invalid-nonexistent-backendref.yaml'],
    traffic: true,
    run: async (s) => void (await unresolved(s, 'invalid-nonexistent-backend-ref', 'BackendNotFound', ['/'])),
  },
  {
    shortName: 'HTTPRouteInvalidReferenceGrant',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace, with a backendRef in the gateway-conformance-web-backend namespace, should fail to attach to a Gateway in the same namespace if a ReferenceGrant does not exist for the HTTPRoute to the Service',
    features: REF_GRANT,
    manifests: ['httproute-invalid-reference-grant.yaml'],
    traffic: true,
    run: async (s) => void (await unresolved(s, 'reference-grant', 'RefNotPermitted', ['/'])),
  },
  {
    shortName: 'HTTPRoutePartiallyInvalidViaInvalidReferenceGrant',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should attach to Gateway in the same namespace and route to the valid backend, while a backendRef in another namespace without a ReferenceGrant answers 500',
    features: REF_GRANT,
    manifests: ['httproute-partially-invalid-via-invalid-reference-grant.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await unresolved(s, 'invalid-reference-grant', 'RefNotPermitted', ['/v2']);
      await expectAll(s, addr, [
        {
          request: { method: 'GET', path: '/' },
          response: { statusCode: 200 },
          backend: 'app-backend-v1',
          namespace: APP,
        },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteReferenceGrant',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace, with a backendRef in the gateway-conformance-web-backend namespace, should attach to Gateway in the gateway-conformance-infra namespace; deleting the ReferenceGrant makes it answer 500',
    features: REF_GRANT,
    manifests: ['httproute-reference-grant.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'reference-grant' }]);
      await expectAll(s, addr, [
        {
          request: { method: 'GET', path: '/' },
          response: { statusCode: 200 },
          backend: 'web-backend',
          namespace: WEB,
        },
      ]);
      await s.rig.api.delete(
        `/apis/gateway.networking.k8s.io/v1beta1/namespaces/${WEB}/referencegrants/reference-grant`,
      );
      await expectAll(s, addr, [status500('/')]);
    },
  },
  {
    shortName: 'HTTPRouteNoBackendRefs',
    description:
      'An HTTPRoute rule with omitted or empty backendRefs answers 500, a rule with a backend forwards',
    features: HTTP_CORE,
    manifests: ['httproute-omitted-backendrefs.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, sameNs, [{ namespace: INFRA, name: 'omitted-backendrefs' }]);
      await expectAll(s, addr, [
        { request: { path: '/forward' }, backend: 'infra-backend-v1', namespace: INFRA },
        { request: { path: '/omitted-no-forward' }, response: { statusCode: 500 } },
        { request: { path: '/empty-no-forward' }, response: { statusCode: 500 } },
      ]);
    },
  },
  {
    shortName: 'HTTPRouteInvalidCrossNamespaceParentRef',
    description:
      'A single HTTPRoute in the gateway-conformance-web-backend namespace should fail to attach to a Gateway in another namespace that it is not allowed to',
    features: HTTP_CORE,
    manifests: ['httproute-invalid-cross-namespace-parent-ref.yaml'],
    traffic: false,
    run: async (s) => {
      const route = { namespace: WEB, name: 'invalid-cross-namespace-parent-ref' };
      await s.status.routeCondition('HTTPRoute', route, sameNs, {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
      });
      await notAttached(s, route, 'NotAllowedByListeners');
    },
  },
  {
    shortName: 'HTTPRouteInvalidParentRefNotMatchingSectionName',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that does not have a listener of the sectionName in its parentRef',
    features: HTTP_CORE,
    manifests: ['httproute-invalid-parentref-not-matching-section-name.yaml'],
    traffic: false,
    run: (s) =>
      notAttached(
        s,
        { namespace: INFRA, name: 'httproute-listener-not-matching-section-name' },
        'NoMatchingParent',
      ),
  },
  {
    shortName: 'HTTPRouteInvalidParentRefNotMatchingListenerPort',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that does not have a matching ListenerPort.',
    features: [...HTTP_CORE, 'HTTPRouteDestinationPortMatching'],
    manifests: ['httproute-invalid-parentref-not-matching-listener-port.yaml'],
    traffic: false,
    run: async (s) => {
      const route = { namespace: INFRA, name: 'httproute-listener-not-matching-route-port' };
      await s.status.routeCondition('HTTPRoute', route, sameNs, {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
      });
      await notAttached(s, route, 'NoMatchingParent');
    },
  },
  {
    shortName: 'HTTPRouteInvalidParentRefSectionNameNotMatchingPort',
    description:
      'A single HTTPRoute in the gateway-conformance-infra namespace should set the Accepted status to False with reason NoMatchingParent when attempting to bind to a Gateway that SectionName does not match Port value.',
    features: [...HTTP_CORE, 'HTTPRouteParentRefPort'],
    manifests: ['httproute-invalid-parentref-section-name-not-matching-port.yaml'],
    traffic: false,
    run: (s) =>
      notAttached(
        s,
        { namespace: INFRA, name: 'httproute-listener-section-name-not-matching-port' },
        'NoMatchingParent',
        {
          namespace: INFRA,
          name: 'gateway-with-one-not-matching-port-and-section-name-route',
        },
      ),
  },
  {
    shortName: 'HTTPRouteObservedGenerationBump',
    description:
      'An HTTPRoute in the gateway-conformance-infra namespace should update the observedGeneration in all of its Status.Conditions after an update to the spec',
    features: HTTP_CORE,
    manifests: ['httproute-observed-generation-bump.yaml'],
    traffic: false,
    run: async (s) => {
      const route = { namespace: INFRA, name: 'observed-generation-bump' };
      const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/httproutes/${route.name}`;
      const original = (await s.rig.api.get(path)) as {
        metadata: { generation: number };
        spec: { rules: { backendRefs: { name: string }[] }[] };
      };
      await s.status.routeLatest('HTTPRoute', route);
      const rules = structuredClone(original.spec.rules);
      rules[0]!.backendRefs[0]!.name = 'infra-backend-v2';
      await s.rig.api.patch(path, { spec: { rules } });
      await s.status.routeCondition('HTTPRoute', route, sameNs, { type: 'Accepted', status: 'True' });
      await s.status.routeCondition('HTTPRoute', route, sameNs, {
        type: 'ResolvedRefs',
        status: 'True',
        reason: 'ResolvedRefs',
      });
      await s.status.routeLatest('HTTPRoute', route);
      const updated = (await s.rig.api.get(path)) as { metadata: { generation: number } };
      if (updated.metadata.generation === original.metadata.generation)
        throw new ConformanceFailure('generation should change after an update');
    },
  },
];
