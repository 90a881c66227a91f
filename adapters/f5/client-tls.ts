/**
 * Client certificates at a BIG-IP HTTPS virtual server (L7VirtualService.clientValidation: a
 * Gateway's spec.tls.frontend) as AS3 holds them: the TLS_Server's authenticationMode (`require`;
 * `request` for AllowInsecureFallback, which never ends the handshake) and authenticationTrustCA
 * pointing to a CA_Bundle of the application. Read back from those properties, never from our
 * metadata. Pure.
 */
import type { ClientValidation, L7VirtualService } from '../../src/model/types.ts';
import { listsIRule, remark } from './as3-text.ts';

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

/** The iRule sending a verified client's subject to the members (ClientValidation.subjectHeader). */
export const subjectRuleName = (vs: string): string => `${vs}_subject`;

/** An HTTP token (RFC 9110), as the validation boundary lets header names through. */
export const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;

/**
 * The iRule's text: the header as a client sent it removed first (never forged), then set to the
 * subject DN of a certificate that was presented and verified. A token holds no brace, backslash
 * or white space, so in braces it is one literal TCL word.
 */
export function subjectRule(header: string): string {
  if (!HTTP_TOKEN.test(header)) throw new Error(`not an HTTP token: ${JSON.stringify(header.slice(0, 64))}`);
  return [
    'when HTTP_REQUEST {',
    `  HTTP::header remove {${header}}`,
    '  if { [SSL::cert count] > 0 && [SSL::verify_result] == 0 } {',
    `    HTTP::header insert {${header}} [X509::subject [SSL::cert 0]]`,
    '  }',
    '}',
  ].join('\n');
}

/** The header a service's subject iRule sends, if it is listed and reads exactly as written. */
export function subjectHeaderOf(o: Json, app: Json, vs: string): string | undefined {
  const name = subjectRuleName(vs);
  const listed = listsIRule(o, name);
  const text = (app[name] as Json | undefined)?.iRule;
  if (!listed || typeof text !== 'string') return undefined;
  const header = /^when HTTP_REQUEST \{\n {2}HTTP::header remove \{([^{}\s\\]+)\}\n/.exec(text)?.[1];
  return header && HTTP_TOKEN.test(header) && text === subjectRule(header) ? header : undefined;
}
