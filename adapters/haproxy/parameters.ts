/**
 * HAProxy's section of LoadBalancerParameters (`spec.haproxy`): a class's frontends' own limits
 * (`maxconn`, `timeout client`). Validated here, written by policy-lines.ts and the Data Plane
 * frontend layout.
 */
import { z } from 'zod';
import type { VendorParameters } from '../../src/adapter/vendor.ts';
import type { Placement } from '../../src/model/types.ts';

/** A frontend's own limits: connections at once, and how long a client may stay idle. */
export interface FrontendSettings {
  maxConnections?: number;
  clientTimeoutSeconds?: number;
}

export const haproxyParametersSchema = z
  .object({
    frontend: z
      .object({
        maxConnections: z.number().int().min(1).max(1_000_000).optional(),
        clientTimeoutSeconds: z.number().int().min(1).max(86_400).optional(),
      })
      .strict()
      .refine((f) => f.maxConnections !== undefined || f.clientTimeoutSeconds !== undefined, {
        message: 'name maxConnections, clientTimeoutSeconds or both',
      }),
  })
  .strict();

export const HAPROXY_PARAMETERS: VendorParameters = {
  section: 'haproxy',
  schema: haproxyParametersSchema,
  placement: (v) => ({ frontend: haproxyParametersSchema.parse(v).frontend }),
};

/** The frontend settings a placement carries (whole positive numbers only, else none). */
export function frontendOf(p: Placement | undefined): FrontendSettings | undefined {
  const f = p?.frontend as Record<string, unknown> | undefined;
  if (!f || typeof f !== 'object') return undefined;
  const n = (x: unknown) => (Number.isInteger(x) && (x as number) > 0 ? (x as number) : undefined);
  const maxConnections = n(f.maxConnections);
  const clientTimeoutSeconds = n(f.clientTimeoutSeconds);
  if (!maxConnections && !clientTimeoutSeconds) return undefined;
  return {
    ...(maxConnections ? { maxConnections } : {}),
    ...(clientTimeoutSeconds ? { clientTimeoutSeconds } : {}),
  };
}
