/**
 * `npl-lb controller` flags (each also NPL_LB_<FLAG>).
 */
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, hostPortSchema, parseFlags } from './flags.ts';

export const CONTROLLER_FLAGS = {
  config: {
    type: 'string',
    description: 'the controller configuration file (YAML, mirrors the Helm values)',
  },
  kubeconfig: {
    type: 'string',
    description: 'kubeconfig path; else in-cluster, $KUBECONFIG, ~/.kube/config',
  },
  'http-address': {
    type: 'string',
    description: 'HOST:PORT for /metrics, /healthz, /readyz, /api/v1/state',
    default: '0.0.0.0:8080',
  },
  'leader-elect': {
    type: 'string',
    description: 'elect one active replica on a Lease (true or false)',
    default: 'true',
  },
  'lease-name': {
    type: 'string',
    description: 'the Lease used for leader election',
    default: 'npl-lb-controller',
  },
  'lease-namespace': {
    type: 'string',
    description: 'its namespace (the Pod namespace by default)',
    default: 'default',
  },
  'delete-config': {
    type: 'string',
    description:
      'remove every object this cluster owns on the load balancer, then idle without reconciling (true or false); the uninstall hook adds --once to exit when done',
    default: 'false',
  },
  once: {
    type: 'boolean',
    description: 'with --delete-config: exit when done instead of idling',
  },
  'scale-down': {
    type: 'string',
    description:
      'with --delete-config: NAMESPACE/NAME of the controller Deployment to scale to 0 first, so that no running replica puts back what is removed (the uninstall hook)',
  },
  'shutdown-timeout': {
    type: 'string',
    description: 'seconds to drain in-flight work after SIGTERM before exiting with code 1',
    default: '25',
  },
  'webhook-address': {
    type: 'string',
    description:
      'HOST:PORT to serve the readiness gate injection webhook on (HTTPS, its own certificate); unset: no webhook',
  },
  'webhook-service': {
    type: 'string',
    description: 'the webhook Service name (its certificate is made for <service>.<namespace>.svc)',
    default: 'npl-lb-webhook',
  },
  'webhook-secret': {
    type: 'string',
    description: 'the Secret the webhook certificate is kept in (in the Pod namespace)',
    default: 'npl-lb-webhook-tls',
  },
  'webhook-configuration': {
    type: 'string',
    description: "the MutatingWebhookConfiguration whose caBundle trusts the webhook's certificate",
    default: 'npl-lb-readiness-gate',
  },
  'webhook-check-seconds': {
    type: 'string',
    description:
      'how often the webhook certificate is checked for rotation (and for one another replica rotated)',
    default: '3600',
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema
  .extend({
    config: z.string().min(1).optional(),
    kubeconfig: z.string().min(1).optional(),
    'http-address': hostPortSchema,
    'leader-elect': z.enum(['true', 'false']).transform((v) => v === 'true'),
    'lease-name': z.string().min(1),
    'lease-namespace': z.string().min(1),
    'delete-config': z.enum(['true', 'false']).transform((v) => v === 'true'),
    once: z.boolean().default(false),
    'scale-down': z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be NAMESPACE/NAME')
      .optional(),
    'shutdown-timeout': z.coerce.number().positive().max(3600),
    'webhook-address': hostPortSchema.optional(),
    'webhook-service': z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a DNS label'),
    'webhook-secret': z.string().min(1),
    'webhook-configuration': z.string().min(1),
    'webhook-check-seconds': z.coerce.number().positive().max(86400),
  })
  .refine((f) => f.help || f.config !== undefined, { message: 'is required', path: ['config'] });

export type ControllerFlags = z.infer<typeof schema>;

export const CONTROLLER_HELP = helpText(
  'controller',
  'The load-balancer controller: turns Services, Ingresses and NodePortLocal Pod annotations into virtual services and pools on the configured adapter.',
  CONTROLLER_FLAGS,
);

export function parseControllerFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): ControllerFlags {
  return parseFlags(argv, CONTROLLER_FLAGS, schema, env);
}
