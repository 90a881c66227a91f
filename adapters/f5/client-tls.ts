/**
 * Client certificates at a BIG-IP HTTPS virtual server (L7VirtualService.clientValidation: a
 * Gateway's spec.tls.frontend) as AS3 holds them: the TLS_Server's authenticationMode (`require`;
 * `request` for AllowInsecureFallback, which never ends the handshake) and authenticationTrustCA
 * pointing to a CA_Bundle of the application. Read back from those properties, never from our
 * metadata. Pure.
 */
import type { ClientValidation, L7VirtualService } from '../../src/model/types.ts';
import { remark } from './as3-text.ts';

type Json = Record<string, unknown>;

/** The CA_Bundle a TLS_Server validates client certificates against. */
export const clientCaName = (vs: string): string => `${vs}_clientca`;

/** The TLS_Server's properties that ask clients for a certificate, or none. */
export function clientAuthentication(vs: L7VirtualService): Json {
  const c = vs.clientValidation;
  return c
    ? {
        authenticationMode: c.insecureFallback ? 'request' : 'require',
        authenticationTrustCA: clientCaName(vs.name),
      }
    : {};
}

/** The application's CA_Bundle for those, or none. */
export function clientCaObjects(vs: L7VirtualService): Record<string, Json> {
  const c = vs.clientValidation;
  return c
    ? {
        [clientCaName(vs.name)]: {
          class: 'CA_Bundle',
          remark: remark(`npl-lb client certificate CAs of ${vs.name}`),
          bundle: c.ca,
        },
      }
    : {};
}

/**
 * The validation a TLS_Server carries: `require` or `request` with a CA_Bundle it points to;
 * anything else (`ignore`, a pointer to nothing or to another class) reads as none, so the next
 * pass writes it again.
 */
export function clientValidationOf(tls: Json | undefined, app: Json): ClientValidation | undefined {
  const mode = tls?.authenticationMode;
  if (mode !== 'require' && mode !== 'request') return undefined;
  const ptr = tls?.authenticationTrustCA;
  const bundle = typeof ptr === 'string' ? (app[ptr] as Json | undefined) : undefined;
  if (bundle?.class !== 'CA_Bundle' || typeof bundle.bundle !== 'string') return undefined;
  return { ca: bundle.bundle, insecureFallback: mode === 'request' };
}
