/** Every transcribed test, in the order the harness runs them. */
import type { ConformanceTest } from '../harness/suite.ts';
import { gatewayTests } from './gateway.ts';
import { gatewayExtendedTests } from './gateway-extended.ts';
import { hostnameIntersection } from './hostname-intersection.ts';
import { extendedHttpTests } from './httproute-extended.ts';
import { refTests } from './httproute-refs.ts';
import { routingTests } from './httproute-routing.ts';
import { listenerTests } from './listeners.ts';
import { redirectTests } from './redirects.ts';
import { tlsRouteTests } from './tlsroute.ts';
import { grpcRouteTests } from './grpcroute.ts';
import { backendTlsTests } from './backend-tls.ts';
import { clientCertificateTests } from './client-certificates.ts';
import { misdirectedTests } from './misdirected.ts';
import { listenerSetTests } from './listener-sets.ts';
import { listenerSetRouteTests } from './listener-set-routes.ts';
import { backendClientCertificateTests } from './backend-client-certificates.ts';
import { corsTests } from './cors.ts';
import { retryTests } from './retry.ts';
import { mirrorTests } from './mirrors.ts';

export const ALL_TESTS: ConformanceTest[] = [
  ...gatewayTests,
  ...listenerTests,
  ...routingTests,
  hostnameIntersection,
  ...refTests,
  ...extendedHttpTests,
  ...corsTests,
  ...retryTests,
  ...mirrorTests,
  ...redirectTests,
  ...gatewayExtendedTests,
  ...tlsRouteTests,
  ...grpcRouteTests,
  ...backendTlsTests,
  ...clientCertificateTests,
  ...misdirectedTests,
  ...listenerSetTests,
  ...listenerSetRouteTests,
  ...backendClientCertificateTests,
];
