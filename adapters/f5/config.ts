/**
 * The `adapter:` block of the controller config for F5, and where credentials come from: the
 * environment (NPL_LB_F5_USERNAME, NPL_LB_F5_PASSWORD), which the Helm chart fills from a Secret.
 */
import { z } from 'zod';
import { credentials, parseSettings, tlsSettings, tlsTrust } from '../settings.ts';
import type { F5AdapterOptions } from './adapter.ts';

export const f5SettingsSchema = z
  .object({
    type: z.literal('f5').describe('F5 BIG-IP through AS3 declarations'),
    url: z.url({ protocol: /^https?$/ }).describe('the BIG-IP management address, https://host[:port]'),
    tenant: z
      .string()
      .regex(/^[A-Za-z][0-9A-Za-z_.-]{0,63}$/, 'must start with a letter; letters, digits, _ . - only')
      .optional()
      .describe(
        'the partition (AS3 tenant) npl-lb declares; default npl_lb_<clusterName>; npl-lb owns it whole',
      ),
    declarations: z
      .enum(['auto', 'tenant', 'application'])
      .default('auto')
      .describe(
        'auto: per application where AS3 has it (3.47+), whole tenants before; tenant or application to choose',
      ),
    ...tlsSettings,
    requestTimeoutSeconds: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe(
        'seconds before an API call that has not answered counts as failed (a declaration is polled past it)',
      ),
  })
  .strict();

export function f5Options(
  owner: string,
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): F5AdapterOptions {
  const s = parseSettings(f5SettingsSchema, settings);
  return {
    owner,
    url: s.url,
    ...credentials('F5', env),
    ...tlsTrust(s),
    timeoutMs: s.requestTimeoutSeconds * 1000,
    declarations: s.declarations,
    ...(s.tenant ? { tenant: s.tenant } : {}),
  };
}
