/** The flags of `npl-lb demo`: the sandbox's port and work directory, the demo device's own, IPv6, the Gateway API channel. */
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText } from '../config/flags.ts';
import { DEMO_VENDOR } from './demo-load-balancer.ts';

export const DEMO_FLAGS = {
  port: { type: 'string', description: 'sandbox port, 0 for any free port', default: '0' },
  'work-dir': {
    type: 'string',
    description: "where the demo keeps its kubeconfig and its load balancer's files",
    default: '.npl-lb',
  },
  ...Object.fromEntries(
    Object.entries(DEMO_VENDOR.demo.flags).map(([name, f]) => [name, { type: 'string' as const, ...f }]),
  ),
  'dual-stack': {
    type: 'boolean',
    description:
      'IPv6 too: node-1 and its web Pod on ::1, a RequireDualStack Service web-dual on an IPv4 VIP and ::1',
  },
  'gateway-api-channel': {
    type: 'string',
    description:
      "the Gateway API CRDs' channel: standard, or experimental (HTTPRoute's experimental CRD: a rule's retry)",
    default: 'standard',
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

export const demoSchema = commonSchema.extend({
  port: z.coerce.number().int().min(0).max(65535),
  'work-dir': z.string().min(1),
  ...Object.fromEntries(Object.keys(DEMO_VENDOR.demo.flags).map((name) => [name, z.string().min(1)])),
  'dual-stack': z.boolean().default(false),
  'gateway-api-channel': z.enum(['standard', 'experimental']),
});

/** The values of the demo device's own flags, by name. */
export const deviceFlags = (flags: Record<string, unknown>): Record<string, string> =>
  Object.fromEntries(Object.keys(DEMO_VENDOR.demo.flags).map((name) => [name, String(flags[name])]));

export const DEMO_HELP = helpText(
  'demo',
  'Runs npl-lb on its embedded sandbox, on loopback only.',
  DEMO_FLAGS,
);
