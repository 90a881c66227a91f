/**
 * LoadBalancerParameters (npl-lb.io/v1alpha1): where a class's virtual services go on the load
 * balancer, per vendor (issue 33, per-class infrastructure). The CRD (deploy/helm/npl-lb/crds/)
 * checks shapes at the API; this schema parses the shared sections again at the validation
 * boundary, and each vendor's own section is parsed by that vendor's schema where it is used, so
 * an object the CRD did not check is refused with the field named, never half read.
 */
import { z } from 'zod';
import { cidrSchema } from '../config/controller-config.ts';
import { objectMetaSchema } from './objects.ts';
import { algorithmSchema, hashKeySchema, healthCheckSchema, keyedHashRule } from './policy-objects.ts';

export const PARAMETERS_GROUP = 'npl-lb.io';
export const PARAMETERS_KIND = 'LoadBalancerParameters';

/** The sections every vendor shares; any other key is one vendor's own (src/adapter/vendor.ts). */
export const SHARED_SECTIONS = ['defaults', 'vip'] as const;

/**
 * A vendor's section: an object, read by that vendor's schema where it is the configured load
 * balancer (src/source/gateway/parameters.ts); a section name is a vendor's `type`-like word.
 */
const vendorSection = z.record(z.string(), z.unknown());

export const parametersSpecSchema = z
  .object({
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
  .catchall(vendorSection)
  .superRefine((s, ctx) => {
    for (const k of Object.keys(s))
      if (!/^[a-z][a-z0-9]{0,30}$/.test(k))
        ctx.addIssue({ code: 'custom', path: [k], message: 'not a section: lowercase letters and digits' });
  })
  .refine((s) => Object.keys(s).length > 0, {
    message: "name a load balancer's section, vip or defaults",
  });
export type ParametersSpec = z.infer<typeof parametersSpecSchema>;

/** As the cache keeps it: the spec as it came, checked where it is used (parametersSpecSchema). */
export const loadBalancerParametersSchema = z
  .object({ metadata: objectMetaSchema, spec: z.unknown() })
  .loose();
export type LoadBalancerParameters = z.infer<typeof loadBalancerParametersSchema>;
