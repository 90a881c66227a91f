/**
 * Results as the upstream ConformanceReport (conformance/apis/v1: apiVersion
 * gateway.networking.k8s.io/v1, kind ConformanceReport; a profile's core and extended status with
 * result success | partial | failure, statistics Passed / Failed / Skipped, and the names of the
 * skipped and failed tests). A core test the harness has not transcribed is skipped, named, so a
 * profile is never reported as passing what was not run.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import type { ConformanceTest, Outcome } from './suite.ts';

export interface Profile {
  name: string;
  /** The features of its core level: a test needing only these is core. */
  core: string[];
  /** Its extended features (upstream's names): those not claimed are listed unsupported. */
  extended: string[];
  /** Every upstream v1.6.1 core test of the profile, transcribed or not. */
  coreTests: string[];
}

/** upstream's GatewayExtendedFeatures, extended in every Gateway profile. */
const GATEWAY_EXTENDED = [
  'GatewayAddressEmpty',
  'GatewayBackendClientCertificate',
  'GatewayFrontendClientCertificateValidation',
  'GatewayFrontendClientCertificateValidationInsecureFallback',
  'GatewayHTTPListenerIsolation',
  'GatewayHTTPSListenerDetectMisdirectedRequests',
  'GatewayInfrastructurePropagation',
  'GatewayPort8080',
  'GatewayStaticAddresses',
  'ListenerSet',
];

/** The Gateway tests both profiles share (their features are Gateway, and ReferenceGrant). */
const GATEWAY_CORE_TESTS = [
  'GatewayClassObservedGenerationBump',
  'GatewayInvalidParametersRef',
  'GatewayInvalidRouteKind',
  'GatewayInvalidTLSConfiguration',
  'GatewayListenerUnsupportedProtocol',
  'GatewayModifyListeners',
  'GatewayObservedGenerationBump',
  'GatewaySecretInvalidReferenceGrant',
  'GatewaySecretMissingReferenceGrant',
  'GatewaySecretReferenceGrantAllInNamespace',
  'GatewaySecretReferenceGrantSpecific',
];

export const GATEWAY_HTTP: Profile = {
  name: 'GATEWAY-HTTP',
  core: ['Gateway', 'HTTPRoute', 'ReferenceGrant'],
  extended: [
    'BackendTLSPolicy',
    'BackendTLSPolicySANValidation',
    ...GATEWAY_EXTENDED,
    'HTTPRoute303RedirectStatusCode',
    'HTTPRoute307RedirectStatusCode',
    'HTTPRoute308RedirectStatusCode',
    'HTTPRouteBackendProtocolH2C',
    'HTTPRouteBackendProtocolWebSocket',
    'HTTPRouteBackendRequestHeaderModification',
    'HTTPRouteBackendTimeout',
    'HTTPRouteCORS',
    'HTTPRouteDestinationPortMatching',
    'HTTPRouteHostRewrite',
    'HTTPRouteMethodMatching',
    'HTTPRouteNamedRouteRule',
    'HTTPRouteParentRefPort',
    'HTTPRoutePathRedirect',
    'HTTPRoutePathRewrite',
    'HTTPRoutePortRedirect',
    'HTTPRouteQueryParamMatching',
    'HTTPRouteRequestMirror',
    'HTTPRouteRequestMultipleMirrors',
    'HTTPRouteRequestPercentageMirror',
    'HTTPRouteRequestTimeout',
    'HTTPRouteResponseHeaderModification',
    'HTTPRouteRetry',
    'HTTPRouteRetryBackendTimeout',
    'HTTPRouteRetryConnectionError',
    'HTTPRouteSchemeRedirect',
  ],
  coreTests: [
    ...GATEWAY_CORE_TESTS,
    'GatewayWithAttachedRoutes',
    'HTTPRouteCrossNamespace',
    'HTTPRouteExactPathMatching',
    'HTTPRouteHTTPSListener',
    'HTTPRouteHeaderMatching',
    'HTTPRouteHostnameIntersection',
    'HTTPRouteInvalidBackendRefUnknownKind',
    'HTTPRouteInvalidCrossNamespaceBackendRef',
    'HTTPRouteInvalidCrossNamespaceParentRef',
    'HTTPRouteInvalidNonExistentBackendRef',
    'HTTPRouteInvalidParentRefNotMatchingSectionName',
    'HTTPRouteInvalidReferenceGrant',
    'HTTPRouteListenerHostnameMatching',
    'HTTPRouteMatching',
    'HTTPRouteMatchingAcrossRoutes',
    'HTTPRouteMultipleGateways',
    'HTTPRouteNoBackendRefs',
    'HTTPRouteObservedGenerationBump',
    'HTTPRoutePartiallyInvalidViaInvalidReferenceGrant',
    'HTTPRoutePathMatchOrder',
    'HTTPRouteRedirectHostAndStatus',
    'HTTPRouteReferenceGrant',
    'HTTPRouteRequestHeaderModifier',
    'HTTPRouteServiceTypes',
    'HTTPRouteSimpleSameNamespace',
    'HTTPRouteWeight',
  ],
};

export const GATEWAY_TLS: Profile = {
  name: 'GATEWAY-TLS',
  core: ['Gateway', 'TLSRoute', 'ReferenceGrant'],
  extended: [...GATEWAY_EXTENDED, 'TLSRouteModeMixed', 'TLSRouteModeTerminate'],
  coreTests: [
    ...GATEWAY_CORE_TESTS,
    'TLSRouteHostnameIntersection',
    'TLSRouteInvalidBackendRefNonexistent',
    'TLSRouteInvalidBackendRefUnknownKind',
    'TLSRouteInvalidNoMatchingListener',
    'TLSRouteInvalidNoMatchingListenerHostname',
    'TLSRouteInvalidReferenceGrant',
    'TLSRouteListenerPassthroughSupportedKinds',
    'TLSRouteListenerTerminateNotSupported',
    'TLSRouteSimpleSameNamespace',
  ],
};

export const GATEWAY_GRPC: Profile = {
  name: 'GATEWAY-GRPC',
  core: ['Gateway', 'GRPCRoute', 'ReferenceGrant'],
  extended: [...GATEWAY_EXTENDED, 'GRPCRouteNamedRouteRule'],
  coreTests: [
    ...GATEWAY_CORE_TESTS,
    'GRPCExactMethodMatching',
    'GRPCRouteHeaderMatching',
    'GRPCRouteListenerHostnameMatching',
    'GRPCRouteWeight',
  ],
};

const statistics = z.object({
  Passed: z.number().int(),
  Failed: z.number().int(),
  Skipped: z.number().int(),
});
const status = z.object({
  result: z.enum(['success', 'partial', 'failure']),
  statistics,
  skippedTests: z.array(z.string()).optional(),
  failedTests: z.array(z.string()).optional(),
});
/** The upstream report's shape, which every report written here is held to. */
export const conformanceReportSchema = z.object({
  apiVersion: z.literal('gateway.networking.k8s.io/v1'),
  kind: z.literal('ConformanceReport'),
  date: z.string(),
  gatewayAPIVersion: z.string(),
  gatewayAPIChannel: z.enum(['standard', 'experimental']),
  mode: z.string(),
  implementation: z.object({
    organization: z.string(),
    project: z.string(),
    url: z.string(),
    version: z.string(),
    contact: z.array(z.string()),
  }),
  profiles: z.array(
    z.object({
      name: z.string(),
      summary: z.string().min(1),
      core: status,
      extended: status
        .extend({
          supportedFeatures: z.array(z.string()).optional(),
          unsupportedFeatures: z.array(z.string()).optional(),
        })
        .optional(),
    }),
  ),
});
export type ConformanceReport = z.infer<typeof conformanceReportSchema>;

type Status = z.infer<typeof status>;

function levelStatus(names: string[], outcomes: Map<string, Outcome>): Status {
  const passed = names.filter((n) => outcomes.get(n)?.result === 'passed');
  const failed = names.filter((n) => outcomes.get(n)?.result === 'failed');
  const skipped = names.filter((n) => !outcomes.has(n) || outcomes.get(n)!.result === 'skipped');
  return {
    result: failed.length ? 'failure' : skipped.length ? 'partial' : 'success',
    statistics: { Passed: passed.length, Failed: failed.length, Skipped: skipped.length },
    ...(skipped.length ? { skippedTests: skipped } : {}),
    ...(failed.length ? { failedTests: failed } : {}),
  };
}

export function profileReport(
  p: Profile,
  tests: ConformanceTest[],
  outcomes: Outcome[],
  /** Every feature the GatewayClass claims (core ones included). */
  claimed: string[],
): ConformanceReport['profiles'][number] {
  const features = {
    supported: p.extended.filter((f) => claimed.includes(f)),
    unsupported: p.extended.filter((f) => !claimed.includes(f)),
  };
  const byName = new Map(outcomes.map((o) => [o.name, o]));
  const core = levelStatus(p.coreTests, byName);
  const extendedNames = tests
    .filter((t) => !t.features.every((f) => p.core.includes(f)))
    .filter((t) => t.features.every((f) => p.core.includes(f) || features.supported.includes(f)))
    .map((t) => t.shortName);
  const extended = levelStatus(extendedNames, byName);
  const what = (s: Status, level: string) =>
    s.result === 'success'
      ? `${level} tests succeeded.`
      : s.result === 'partial'
        ? `${level} tests partially succeeded with ${s.statistics.Skipped} test skips.`
        : `${level} tests failed with ${s.statistics.Failed} test failures.`;
  const hasExtended =
    extendedNames.length > 0 || features.supported.length > 0 || features.unsupported.length > 0;
  return {
    name: p.name,
    summary: hasExtended ? `${what(core, 'Core')} ${what(extended, 'Extended')}` : what(core, 'Core'),
    core,
    ...(hasExtended
      ? {
          extended: {
            ...extended,
            ...(features.supported.length ? { supportedFeatures: [...features.supported].sort() } : {}),
            ...(features.unsupported.length ? { unsupportedFeatures: [...features.unsupported].sort() } : {}),
          },
        }
      : {}),
  };
}

export function renderReport(r: ConformanceReport): string {
  return stringify(conformanceReportSchema.parse(r), { sortMapEntries: true });
}
