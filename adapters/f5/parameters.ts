/**
 * BIG-IP's section of LoadBalancerParameters (`spec.f5`): the partition (an AS3 tenant) a class's
 * virtual services go to, as CIS places by partition. Validated here, read by placement.ts.
 */
import { z } from 'zod';
import type { VendorParameters } from '../../src/adapter/vendor.ts';
import type { Placement } from '../../src/model/types.ts';

/**
 * Names a partition cannot have: the declaration's own properties (an AS3 ADC's), and `Common`,
 * BIG-IP's shared partition, which holds no application of ours.
 */
export const AS3_RESERVED = [
  'Common',
  'class',
  'constants',
  'controls',
  'id',
  'label',
  'remark',
  'schemaVersion',
  'scratch',
  'target',
  'updateMode',
];

export const f5ParametersSchema = z
  .object({
    partition: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'a letter, then letters, digits and "_"')
      .refine((p) => !AS3_RESERVED.includes(p), {
        message: `not one of AS3's own names (${AS3_RESERVED.join(', ')})`,
      }),
  })
  .strict();

export const F5_PARAMETERS: VendorParameters = {
  section: 'f5',
  schema: f5ParametersSchema,
  placement: (v) => ({ partition: f5ParametersSchema.parse(v).partition }),
};

/** The partition a placement names. */
export const partitionOf = (p: Placement | undefined): string | undefined =>
  typeof p?.partition === 'string' ? p.partition : undefined;
