/**
 * What the Avi adapter writes, checked before it is sent: a zod schema per object type (the field
 * names a subset of the Avi field model, values within Avi's ranges), and the policy rules and
 * the rest held to the bundled field model as the controller holds them.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { validateAviObject } from './object-models.ts';
import type { AviObject, AviType } from './objects.ts';

// zod schemas of what we write: the field names are a subset of the Avi field model.
const rule = z
  .object({ name: z.string().min(1), index: z.number().int().min(1), enable: z.boolean() })
  .loose();
const ref = z.string().regex(/^\/api\/[a-z]+\?name=.+/);
const ip = z.object({
  addr: z.string().refine((a) => isIP(a) !== 0, 'must be an IP address'),
  type: z.enum(['V4', 'V6']),
});
const ip4 = z.object({
  addr: z.string().refine((a) => isIP(a) === 4, 'must be an IPv4 address'),
  type: z.literal('V4'),
});
const ip6 = z.object({
  addr: z.string().refine((a) => isIP(a) === 6, 'must be an IPv6 address'),
  type: z.literal('V6'),
});
const marker = z.object({ key: z.string().min(1), values: z.array(z.string()) });
/** The request of an HTTP(S) HealthMonitor: GET of a path, 2xx and 3xx meaning up. */
const monitorRequest = z
  .object({
    // The request line, then the probe's headers (a token, a colon, a printable value) each on a
    // line of its own: nothing that could end the request early or smuggle another.
    http_request: z
      .string()
      .regex(/^(?:GET|HEAD) \/\S* HTTP\/1\.0(?:\r\n[!#$%&'*+.^_`|~0-9A-Za-z-]+: [ -~]*)*$/),
    http_response_code: z.array(z.enum(['HTTP_1XX', 'HTTP_2XX', 'HTTP_3XX', 'HTTP_4XX', 'HTTP_5XX'])).min(1),
  })
  .strict();

const dnsName = z
  .string()
  .max(253)
  .regex(/^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i);
const PEM_CERTIFICATE = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/;

const base = {
  name: z.string().min(1).max(255),
  created_by: z.string().min(1),
  markers: z.array(marker),
  cloud_config_cksum: z.string().optional(),
};
export const SCHEMAS = {
  pool: z
    .object({
      ...base,
      description: z.string(),
      cloud_ref: ref,
      vrf_ref: ref,
      health_monitor_refs: z.array(ref),
      lb_algorithm: z.enum([
        'LB_ALGORITHM_ROUND_ROBIN',
        'LB_ALGORITHM_LEAST_CONNECTIONS',
        'LB_ALGORITHM_CONSISTENT_HASH',
      ]),
      lb_algorithm_hash: z
        .enum([
          'LB_ALGORITHM_CONSISTENT_HASH_SOURCE_IP_ADDRESS',
          'LB_ALGORITHM_CONSISTENT_HASH_CUSTOM_HEADER',
        ])
        .optional(),
      lb_algorithm_consistent_hash_hdr: z
        .string()
        .regex(/^[A-Za-z0-9_-]{1,64}$/)
        .optional(),
      enable_http2: z.boolean().optional(),
      application_persistence_profile_ref: ref.optional(),
      // Minutes, 0 (at once) to 300; connections per server, 0 for no limit.
      connection_ramp_duration: z.number().int().min(0).max(300),
      max_concurrent_connections_per_server: z.number().int().min(0).max(1_000_000).optional(),
      server_reselect: z
        .object({
          enabled: z.boolean(),
          num_retries: z.number().int().min(0).max(5).optional(),
          // A route's statuses: one range per status, each of the Gateway API's 400-599.
          svr_resp_code: z
            .object({
              ranges: z
                .array(
                  z
                    .object({
                      begin: z.number().int().min(400).max(599),
                      end: z.number().int().min(400).max(599),
                    })
                    .strict(),
                )
                .min(1)
                .max(16),
            })
            .strict()
            .optional(),
        })
        .strict()
        .optional(),
      // Milliseconds, 0 (the application profile's) to 6 hours.
      server_timeout: z.number().int().min(0).max(21_600_000).optional(),
      // Minutes before 31.2.1 (-1 infinite, 0 immediate), seconds from 31.2.1.
      graceful_disable_timeout: z.number().int().min(-1).max(7200).optional(),
      graceful_disable_timeout_sec: z.number().int().min(-1).max(432000).optional(),
      // TLS to the members (pool-tls.ts): the SNI and the names verified are DNS names.
      ssl_profile_ref: ref.optional(),
      pki_profile_ref: ref.optional(),
      sni_enabled: z.literal(true).optional(),
      server_name: dnsName.optional(),
      host_check_enabled: z.literal(true).optional(),
      domain_name: z.array(dnsName).min(1).optional(),
      ssl_key_and_certificate_ref: ref.optional(),
      servers: z.array(
        z
          .object({
            ip,
            port: z.number().int().min(1).max(65535),
            hostname: z.string(),
            enabled: z.boolean(),
            external_uuid: z.string().optional(),
          })
          .strict(),
      ),
    })
    .strict(),
  poolgroup: z
    .object({
      ...base,
      cloud_ref: ref,
      members: z.array(z.object({ pool_ref: ref, ratio: z.number().int().min(1).max(1000) }).strict()),
    })
    .strict(),
  vsvip: z
    .object({
      name: base.name,
      markers: base.markers,
      vsvip_cloud_config_cksum: z.string().optional(),
      cloud_ref: ref,
      vrf_context_ref: ref,
      vip: z
        .array(
          z.union([
            // Avi keeps an IPv4 VIP in ip_address and an IPv6 one in ip6_address.
            z.object({ vip_id: z.string(), ip_address: ip4 }).strict(),
            z.object({ vip_id: z.string(), ip6_address: ip6 }).strict(),
            z
              .object({
                vip_id: z.string(),
                auto_allocate_ip: z.literal(true),
                ipam_network_subnet: z
                  .object({
                    network_ref: ref,
                    subnet: z.object({ ip_addr: ip4, mask: z.number().int().min(0).max(32) }).strict(),
                  })
                  .strict(),
              })
              .strict(),
            z
              .object({
                vip_id: z.string(),
                auto_allocate_ip: z.literal(true),
                auto_allocate_ip_type: z.literal('V6_ONLY'),
                ipam_network_subnet: z
                  .object({
                    network_ref: ref,
                    subnet6: z.object({ ip_addr: ip6, mask: z.number().int().min(0).max(128) }).strict(),
                  })
                  .strict(),
              })
              .strict(),
          ]),
        )
        .length(1),
    })
    .strict(),
  // Rules are checked against the Avi field model (fieldProblems) beside this outline.
  httppolicyset: z
    .object({
      ...base,
      description: z.string(),
      http_request_policy: z.object({ rules: z.array(rule) }).strict(),
      http_response_policy: z
        .object({ rules: z.array(rule) })
        .strict()
        .optional(),
    })
    .strict(),
  virtualservice: z
    .object({
      ...base,
      description: z.string(),
      cloud_ref: ref,
      se_group_ref: ref,
      vrf_context_ref: ref,
      vsvip_ref: ref.optional(),
      services: z
        .array(
          z
            .object({
              port: z.number().int().min(1).max(65535),
              enable_ssl: z.boolean().optional(),
              enable_http2: z.boolean().optional(),
            })
            .strict(),
        )
        .min(1)
        .optional(),
      type: z.enum(['VS_TYPE_NORMAL', 'VS_TYPE_VH_PARENT', 'VS_TYPE_VH_CHILD']).optional(),
      vh_parent_vs_ref: ref.optional(),
      vh_domain_name: z.array(z.string().min(1)).min(1).optional(),
      ssl_key_and_certificate_refs: z.array(ref).min(1).max(1).optional(),
      ssl_profile_ref: ref.optional(),
      vs_datascripts: z
        .array(z.object({ index: z.number().int(), vs_datascript_set_ref: ref }).strict())
        .optional(),
      application_profile_ref: ref,
      network_profile_ref: ref,
      pool_ref: ref.optional(),
      pool_group_ref: ref.optional(),
      http_policies: z
        .array(z.object({ index: z.number().int(), http_policy_set_ref: ref }).strict())
        .optional(),
    })
    .strict(),
  sslkeyandcertificate: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      type: z.literal('SSL_CERTIFICATE_TYPE_VIRTUALSERVICE'),
      format: z.literal('SSL_PEM'),
      certificate: z.object({ certificate: z.string().startsWith('-----BEGIN CERTIFICATE-----') }).strict(),
      key: z.string().min(1),
    })
    .strict(),
  // A pool's own HTTP monitor (the Pods' readiness probe). The model has no created_by: ours are
  // marked by the clustername marker, as a VsVip.
  healthmonitor: z
    .object({
      name: base.name,
      markers: base.markers,
      description: z.string(),
      type: z.enum(['HEALTH_MONITOR_HTTP', 'HEALTH_MONITOR_HTTPS']),
      send_interval: z.number().int().min(1).max(3600),
      receive_timeout: z.number().int().min(1).max(2400),
      successful_checks: z.number().int().min(1).max(50),
      failed_checks: z.number().int().min(1).max(50),
      // The request sits in the field of the monitor's type (HealthMonitorHTTP in both).
      http_monitor: monitorRequest.optional(),
      https_monitor: monitorRequest.optional(),
    })
    .strict()
    .refine(
      (m) =>
        m.type === 'HEALTH_MONITOR_HTTPS'
          ? m.https_monitor && !m.http_monitor
          : m.http_monitor && !m.https_monitor,
      {
        message:
          'the request goes in http_monitor for HEALTH_MONITOR_HTTP, https_monitor for HEALTH_MONITOR_HTTPS',
      },
    ),
  vsdatascriptset: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      description: z.string(),
      datascript: z
        .array(
          z
            .object({
              evt: z.enum(['VS_DATASCRIPT_EVT_HTTP_REQ', 'VS_DATASCRIPT_EVT_L4_REQUEST']),
              script: z.string(),
            })
            .strict(),
        )
        .length(1),
      protocol_parser_refs: z.array(ref).optional(),
      pool_group_refs: z.array(ref).optional(),
    })
    .strict(),
  // A TLS pool's CA bundle, one certificate an entry (pool-tls.ts), no CRL check.
  pkiprofile: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      ca_certs: z
        .array(z.object({ certificate: z.string().regex(PEM_CERTIFICATE) }).strict())
        .min(1)
        .max(200),
      crl_check: z.literal(false),
      // AllowInsecureFallback (client certificates at the door): errors of a client's chain ignored.
      allow_pki_errors: z.tuple([z.literal('ALLOW_ALL_ERRORS')]).optional(),
    })
    .strict(),
  // Client certificates at an HTTPS virtual service (client-validation.ts): the HTTP profile's
  // mode and the PKI profile the clients' certificates are verified against.
  applicationprofile: z
    .object({
      name: base.name,
      created_by: base.created_by,
      markers: base.markers,
      cloud_config_cksum: z.string().optional(),
      type: z.literal('APPLICATION_PROFILE_TYPE_HTTP'),
      http_profile: z
        .object({
          ssl_client_certificate_mode: z.enum([
            'SSL_CLIENT_CERTIFICATE_REQUIRE',
            'SSL_CLIENT_CERTIFICATE_REQUEST',
          ]),
          pki_profile_ref: ref,
          websockets_enabled: z.literal(true),
        })
        .strict(),
    })
    .strict(),
  // A route's session cookie (route-session.ts): the pool's own cookie profile; the name is one
  // plain word (the validation boundary's), the timeout Avi's minutes (0: none).
  applicationpersistenceprofile: z
    .object({
      name: base.name,
      markers: base.markers,
      persistence_type: z.literal('PERSISTENCE_TYPE_HTTP_COOKIE'),
      http_cookie_persistence_profile: z
        .object({
          cookie_name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/),
          timeout: z.number().int().min(0).max(14_400),
          always_send_cookie: z.literal(false),
          is_persistent_cookie: z.literal(true).optional(),
        })
        .strict(),
    })
    .strict(),
} as const satisfies Record<AviType, z.ZodType>;

/** Problems with an object before it is sent (field and reason), none when it is valid. */
export function invalid(type: AviType, o: AviObject): string[] {
  const r = SCHEMAS[type].safeParse(o);
  const outline = r.success
    ? []
    : r.error.issues.map((i) => `${type} ${o.name}: ${i.path.join('.')}: ${i.message}`);
  // Policy rules and the rest held to the Avi field model (names and JSON types) as the controller does.
  const model = MODEL_FOR[type];
  const fields = model ? validateAviObject(model, o).map((p) => `${type} ${o.name}: ${p}`) : [];
  return [...outline, ...fields];
}

const MODEL_FOR: Partial<Record<AviType, string>> = {
  httppolicyset: 'HTTPPolicySet',
  virtualservice: 'VirtualService',
  sslkeyandcertificate: 'SSLKeyAndCertificate',
  pkiprofile: 'PKIProfile',
  applicationprofile: 'ApplicationProfile',
  applicationpersistenceprofile: 'ApplicationPersistenceProfile',
};
