/** BackendTLSPolicy (gateway.networking.k8s.io/v1, GEP-1897), as the controller's cache keeps it. */
import { z } from 'zod';
import { condition, gatewayMeta } from './gateway-objects.ts';

/**
 * BackendTLSPolicy (v1): the Service ports it targets, and its validation kept as it came (what
 * npl-lb does with each field is decided in source/gateway/backend-tls.ts; nothing is dropped).
 */
export const backendTlsPolicySchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        targetRefs: z
          .array(
            z
              .object({
                group: z.string().default(''),
                kind: z.string(),
                name: z.string(),
                sectionName: z.string().optional(),
              })
              .loose(),
          )
          .default([]),
        validation: z
          .object({
            caCertificateRefs: z
              .array(z.object({ group: z.string().default(''), kind: z.string(), name: z.string() }).loose())
              .default([]),
            wellKnownCACertificates: z.string().optional(),
            hostname: z.string().default(''),
            subjectAltNames: z
              .array(
                z
                  .object({ type: z.string(), hostname: z.string().optional(), uri: z.string().optional() })
                  .loose(),
              )
              .default([]),
          })
          .loose()
          .default({ caCertificateRefs: [], hostname: '', subjectAltNames: [] }),
        options: z.record(z.string(), z.unknown()).optional(),
      })
      .loose(),
    status: z
      .object({
        ancestors: z
          .array(
            z
              .object({
                ancestorRef: z.unknown(),
                controllerName: z.string(),
                conditions: z.array(condition).default([]),
              })
              .loose(),
          )
          .default([]),
      })
      .loose()
      .default({ ancestors: [] }),
  })
  .loose();
export type BackendTlsPolicy = z.infer<typeof backendTlsPolicySchema>;
