/**
 * LoadBalancerParameters (npl-lb.io/v1alpha1): where a class's virtual services go on the load
 * balancer, per vendor (issue 33, per-class infrastructure). The CRD (deploy/helm/npl-lb/crds/)
 * checks shapes at the API; this schema parses them again at the validation boundary, so an
 * object the CRD did not check is refused with the field named, never half read.
 */
import { z } from 'zod';
import { cidrSchema } from '../config/controller-config.ts';
import { objectMetaSchema } from './objects.ts';
import { algorithmSchema, hashKeySchema, healthCheckSchema, keyedHashRule } from './policy-objects.ts';

export const PARAMETERS_GROUP = 'npl-lb.io';
export const PARAMETERS_KIND = 'LoadBalancerParameters';

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

export const parametersSpecSchema = z
  .object({
    avi: z
      .object({
        serviceEngineGroup: z
          .string()
          .min(1)
          .max(128)
          .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'letters, digits, "_", "." and "-"'),
      })
      .strict()
      .optional(),
    f5: z
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
      .strict()
      .optional(),
    haproxy: z
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
      .strict()
      .optional(),
    /**
     * What the pools of the class's virtual services get where no BackendPolicy (nor an Ingress's
     * annotations) says: an algorithm (a keyed hash with its hashKey) and a health check, as a
     * BackendPolicy writes them.
     */
    defaults: z
      .object({
        algorithm: algorithmSchema.optional(),
        hashKey: hashKeySchema.optional(),
        healthCheck: healthCheckSchema.optional(),
      })
      .strict()
      .refine((d) => d.algorithm !== undefined || d.healthCheck !== undefined, {
        message: 'name an algorithm, a healthCheck or both',
      })
      .refine(...keyedHashRule)
      .optional(),
    /**
     * Where the class's VIPs come from: CIDRs inside the controller's `vip.cidrs` (any vendor;
     * not where the load balancer allocates VIPs itself).
     */
    vip: z
      .object({ cidrs: z.array(cidrSchema).min(1).max(16) })
      .strict()
      .optional(),
  })
  .strict()
  .refine(
    (s) =>
      s.avi !== undefined ||
      s.f5 !== undefined ||
      s.haproxy !== undefined ||
      s.vip !== undefined ||
      s.defaults !== undefined,
    { message: 'name the avi, f5, haproxy, vip or defaults settings' },
  );
export type ParametersSpec = z.infer<typeof parametersSpecSchema>;

/** As the cache keeps it: the spec as it came, checked where it is used (parametersSpecSchema). */
export const loadBalancerParametersSchema = z
  .object({ metadata: objectMetaSchema, spec: z.unknown() })
  .loose();
export type LoadBalancerParameters = z.infer<typeof loadBalancerParametersSchema>;
