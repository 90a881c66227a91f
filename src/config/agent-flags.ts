/**
 * `npl-lb agent` flags (each also NPL_LB_<FLAG> in the environment, for the DaemonSet).
 */
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, hostPortSchema, parseFlags } from './flags.ts';

export const AGENT_FLAGS = {
  'node-name': { type: 'string', description: 'the Node this agent runs on (downward API spec.nodeName)' },
  kubeconfig: {
    type: 'string',
    description: 'kubeconfig path; else in-cluster, $KUBECONFIG, ~/.kube/config',
  },
  'port-range': { type: 'string', description: 'node ports to allocate, START-END', default: '61000-62000' },
  forwarding: { type: 'string', description: 'iptables, userspace or none', default: 'iptables' },
  'node-ip-preference': {
    type: 'string',
    description:
      'which Node address to publish: ExternalIP (else InternalIP) or InternalIP (else ExternalIP)',
    default: 'ExternalIP',
  },
  'http-address': {
    type: 'string',
    description: 'HOST:PORT for /metrics, /healthz, /readyz',
    default: '0.0.0.0:8081',
  },
  'resync-interval': {
    type: 'string',
    description: 'seconds between full rule resyncs (0: off)',
    default: '60',
  },
  cleanup: { type: 'boolean', description: 'remove the NPL-LB iptables chain and its jumps, then exit' },
  'cleanup-on-uninstall': {
    type: 'string',
    description:
      'NAMESPACE/NAME of the agent DaemonSet: on SIGTERM, when it is gone or being deleted (helm uninstall), remove the forwarding rules too',
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const portRange = z
  .string()
  .regex(/^\d+-\d+$/, 'must be START-END, e.g. 61000-62000')
  .transform((s) => {
    const [start, end] = s.split('-').map(Number) as [number, number];
    return { start, end };
  })
  .refine(
    (r) => r.start >= 1 && r.end <= 65535 && r.start <= r.end,
    'must satisfy 1 <= START <= END <= 65535',
  );

const schema = commonSchema
  .extend({
    'node-name': z.string().min(1).optional(),
    kubeconfig: z.string().min(1).optional(),
    'port-range': portRange,
    forwarding: z.enum(['iptables', 'userspace', 'none']),
    'node-ip-preference': z.enum(['ExternalIP', 'InternalIP']),
    'http-address': hostPortSchema,
    'resync-interval': z.coerce.number().min(0),
    cleanup: z.boolean().default(false),
    'cleanup-on-uninstall': z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be NAMESPACE/NAME')
      .optional(),
  })
  .refine((f) => f.help || f.cleanup || f['node-name'] !== undefined, {
    message: 'is required (the Node this agent runs on)',
    path: ['node-name'],
  });

export type AgentFlags = z.infer<typeof schema>;

export const AGENT_HELP = helpText(
  'agent',
  'The NodePortLocal agent: allocates node ports for Pods selected by Services annotated nodeportlocal.antrea.io/enabled: "true", forwards them, and writes Antrea\'s Pod annotation.',
  AGENT_FLAGS,
);

export function parseAgentFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): AgentFlags {
  return parseFlags(argv, AGENT_FLAGS, schema, env);
}
