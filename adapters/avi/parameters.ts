/**
 * Avi's section of LoadBalancerParameters (`spec.avi`): the Service Engine group a class's virtual
 * services are placed on (AKO's AviInfraSetting `seGroup`). Validated here, read by vs-objects.ts.
 */
import { z } from 'zod';
import type { VendorParameters } from '../../src/adapter/vendor.ts';
import type { Placement } from '../../src/model/types.ts';

export const aviParametersSchema = z
  .object({
    serviceEngineGroup: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "." and "-"'),
  })
  .strict();

export const AVI_PARAMETERS: VendorParameters = {
  section: 'avi',
  schema: aviParametersSchema,
  placement: (v) => ({ serviceEngineGroup: aviParametersSchema.parse(v).serviceEngineGroup }),
};

/** The Service Engine group a placement names (a string, as the section's schema took it). */
export const seGroupOf = (p: Placement | undefined): string | undefined =>
  typeof p?.serviceEngineGroup === 'string' ? p.serviceEngineGroup : undefined;
