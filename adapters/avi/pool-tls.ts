/**
 * A pool's TLS to its members on Avi (Pool.backendTls: a BackendTLSPolicy, or an Ingress's
 * re-encryption annotations): the pool speaks TLS with the system SSL profile, sends the policy's
 * hostname as SNI (`sni_enabled`, `server_name`), checks the member's certificate against the
 * names to verify (`host_check_enabled`, `domain_name`), and trusts the CA bundle of a PKI profile
 * of its own (`pki_profile_ref`: `<pool>-pki`, its `ca_certs` one per certificate, no CRL check:
 * the bundle is what is trusted), and presents the Gateway's client certificate where there is one
 * (`ssl_key_and_certificate_ref`). Read back from those same fields, so a name, a CA or a switch
 * changed by hand on the controller is seen and written again. Pure.
 */
import type { BackendTls, Pool } from '../../src/model/types.ts';
import { type AviObject, createdBy, markers, withSum } from './object-marks.ts';

type Raw = Record<string, unknown>;

/** The PKI profile a TLS pool trusts its members' CAs from. */
export const pkiProfileName = (pool: string): string => `${pool}-pki`;

/** The SSL profile of every TLS pool (the controller's own). */
export const POOL_SSL_PROFILE = 'System-Standard';

/** The pool's TLS fields (none for a clear-text pool). */
export function poolTlsFields(
  pool: string,
  tls: BackendTls | undefined,
  ref: (type: string, name: string) => string,
): Raw {
  if (!tls) return {};
  return {
    ssl_profile_ref: ref('sslprofile', POOL_SSL_PROFILE),
    pki_profile_ref: ref('pkiprofile', pkiProfileName(pool)),
    sni_enabled: true,
    server_name: tls.serverName,
    host_check_enabled: true,
    domain_name: [...tls.verifyNames],
    // The certificate presented to the members (a Gateway's backend client certificate).
    ...(tls.clientCertificate
      ? { ssl_key_and_certificate_ref: ref('sslkeyandcertificate', tls.clientCertificate) }
      : {}),
  };
}

/** The bundle as the PKI profile's `ca_certs`: one entry per certificate, as parsed at the boundary. */
export const caCerts = (ca: string): { certificate: string }[] =>
  (ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((certificate) => ({
    certificate,
  }));

/**
 * A pool's TLS as the controller holds it: present where the pool has an SSL profile, its CA the
 * PKI profile's certificates (the boundary's form: one per line, a newline after the last). A
 * pool with an SSL profile and no PKI profile verifies nothing: read with no CA, so it differs
 * from anything npl-lb writes and is written again.
 */
export function parsePoolTls(
  o: Raw,
  pki: Raw | undefined,
  clientCertificate: Raw | undefined,
): { backendTls?: BackendTls } {
  if (!o.ssl_profile_ref) return {};
  const certs = ((pki?.ca_certs ?? []) as { certificate?: unknown }[]).map((c) =>
    String(c.certificate ?? '').trim(),
  );
  const verify = o.host_check_enabled === true ? ((o.domain_name ?? []) as unknown[]).map(String) : [];
  return {
    backendTls: {
      serverName: o.sni_enabled === true ? String(o.server_name ?? '') : '',
      verifyNames: verify,
      ca: certs.length > 0 ? `${certs.join('\n')}\n` : '',
      ...(clientCertificate ? { clientCertificate: String(clientCertificate.name) } : {}),
    },
  };
}

/** A TLS pool's own PKI profile: the CA bundle its members' certificates must chain to. */
export function renderPkiProfile(p: Pool, owner: string): AviObject | undefined {
  if (!p.backendTls) return undefined;
  return withSum('pkiprofile', {
    name: pkiProfileName(p.name),
    created_by: createdBy(owner),
    markers: markers(owner, p.service),
    ca_certs: caCerts(p.backendTls.ca),
    crl_check: false,
  });
}
