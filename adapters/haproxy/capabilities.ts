/**
 * What HAProxy serves, on either transport: TCP (HAProxy does not balance UDP), L7 with every
 * Gateway API route feature of the model, TLS passthrough by SNI, and certificates (files on the
 * runtime transport, the Data Plane API's storage on the other).
 */
import type { Capabilities } from '../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';

export const HAPROXY_CAPABILITIES: Capabilities = {
  l4: { tcp: true, udp: false },
  l7: true,
  memberNodeTag: true,
  drainingMembers: true,
  http: ALL_HTTP,
  tlsPassthrough: true,
  certificates: true,
};
