/**
 * Client certificates at an Avi HTTPS virtual service (L7VirtualService.clientValidation: a
 * Gateway's `spec.tls.frontend`): an application profile of the service's own (`<vs>-mtls`,
 * type HTTP) whose HTTP profile asks clients for a certificate (`ssl_client_certificate_mode`:
 * REQUIRE, or REQUEST for AllowInsecureFallback) and verifies it against a PKI profile of its own
 * (`<vs>-cpki`: the CA bundle's certificates, no CRL check; with the fallback,
 * `allow_pki_errors: [ALLOW_ALL_ERRORS]`, so a client whose certificate does not verify is served
 * too). The service and its SNI children point at that profile instead of System-Secure-HTTP. Read
 * back from those fields: a mode, a CA or the fallback changed by hand reads as something npl-lb
 * never writes, and is written again. The verified subject in a header is not offered
 * (Capabilities.http.clientSubjectHeader absent). Pure but for the removal through the device's objects.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Change } from '../../src/adapter/changes.ts';
import type { ClientValidation, L7VirtualService } from '../../src/model/types.ts';
import type { AviType } from './objects.ts';
import { caCerts } from './pool-tls.ts';
import { type AviObject, byName, createdBy, markers, withSum } from './object-marks.ts';

type Raw = Record<string, unknown>;

export const clientAppProfileName = (vs: string): string => `${vs}-mtls`;
export const clientPkiProfileName = (vs: string): string => `${vs}-cpki`;

const REQUIRE = 'SSL_CLIENT_CERTIFICATE_REQUIRE';
const REQUEST = 'SSL_CLIENT_CERTIFICATE_REQUEST';
const ALL_ERRORS = 'ALLOW_ALL_ERRORS';

/** The application profile an L7 service points at: its own where it validates clients. */
export const applicationProfileRef = (vs: L7VirtualService): string =>
  vs.clientValidation
    ? byName('applicationprofile', clientAppProfileName(vs.name))
    : byName('applicationprofile', vs.protocol === 'HTTPS' ? 'System-Secure-HTTP' : 'System-HTTP');

/** The PKI profile, then the application profile, of a service that validates clients (none else). */
export function clientValidationObjects(
  vs: L7VirtualService,
  owner: string,
): { type: 'pkiprofile' | 'applicationprofile'; object: AviObject }[] {
  const c = vs.clientValidation;
  if (!c || vs.protocol !== 'HTTPS') return [];
  const common = { created_by: createdBy(owner), markers: markers(owner, '') };
  return [
    {
      type: 'pkiprofile',
      object: withSum('pkiprofile', {
        name: clientPkiProfileName(vs.name),
        ...common,
        ca_certs: caCerts(c.ca),
        crl_check: false,
        ...(c.insecureFallback ? { allow_pki_errors: [ALL_ERRORS] } : {}),
      }),
    },
    {
      type: 'applicationprofile',
      object: withSum('applicationprofile', {
        name: clientAppProfileName(vs.name),
        ...common,
        type: 'APPLICATION_PROFILE_TYPE_HTTP',
        http_profile: {
          ssl_client_certificate_mode: c.insecureFallback ? REQUEST : REQUIRE,
          pki_profile_ref: byName('pkiprofile', clientPkiProfileName(vs.name)),
          // WebSocket upgrades proxied, as System-HTTP and System-Secure-HTTP do by default.
          websockets_enabled: true,
        },
      }),
    },
  ];
}

/**
 * The validation a service's application profile asks, from its fields (`profile` and its PKI
 * profile as read, by the references the service and profile hold): REQUIRE without errors
 * allowed, or REQUEST with every error allowed; anything else (NONE, REQUEST without the errors
 * allowed, REQUIRE with them, no PKI profile or no certificate in it) reads as none.
 */
export function clientValidationOf(
  profile: Raw | undefined,
  pki: Raw | undefined,
): ClientValidation | undefined {
  const http = profile?.http_profile as
    { ssl_client_certificate_mode?: unknown; websockets_enabled?: unknown } | undefined;
  const mode = http?.ssl_client_certificate_mode;
  if (mode !== REQUIRE && mode !== REQUEST) return undefined;
  // A profile of ours that no longer proxies WebSocket (changed by hand) is not the one written.
  if (http?.websockets_enabled === false) return undefined;
  const certs = (pki?.ca_certs as { certificate?: unknown }[] | undefined) ?? [];
  if (certs.length === 0 || certs.some((x) => typeof x.certificate !== 'string')) return undefined;
  const errors = (pki?.allow_pki_errors as unknown[] | undefined) ?? [];
  const allowsAll = errors.includes(ALL_ERRORS);
  if ((mode === REQUEST) !== allowsAll || errors.some((e) => e !== ALL_ERRORS)) return undefined;
  return {
    ca: `${certs.map((x) => String(x.certificate).trim()).join('\n')}\n`,
    insecureFallback: mode === REQUEST,
  };
}

/**
 * Whether an update finds the validation read back unlike the one asked (changed by hand): the
 * profiles are then written even where the checksum left on them still matches.
 */
export const clientValidationByHand = (c: Change): boolean =>
  c.op === 'update' &&
  c.kind === 'virtualService' &&
  c.desired.kind === 'l7' &&
  !isDeepStrictEqual(
    c.observed.kind === 'l7' ? c.observed.clientValidation : undefined,
    c.desired.clientValidation,
  );

/** A service's client-certificate profiles, once it no longer points at them: the application profile first. */
export async function removeClientProfiles(
  /** The device's objects (device-objects.ts: AviDeviceObjects), by what this needs of them. */
  objects: { remove: (type: AviType, name: string) => Promise<void> },
  vs: string,
): Promise<void> {
  await objects.remove('applicationprofile', clientAppProfileName(vs));
  await objects.remove('pkiprofile', clientPkiProfileName(vs));
}
