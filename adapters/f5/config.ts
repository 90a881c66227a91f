/**
 * The `adapter:` block of the controller config for F5, and where credentials come from: the
 * environment (NPL_LB_F5_USERNAME, NPL_LB_F5_PASSWORD), which the Helm chart fills from a Secret.
 */
import { z } from 'zod';
import { ErrorCodes, NplError } from '../../src/runtime/errors.ts';
import type { F5AdapterOptions } from './adapter.ts';

export const f5SettingsSchema = z
  .object({
    type: z.literal('f5'),
    /** https://host[:port] of the BIG-IP management interface. */
    url: z.url({ protocol: /^https?$/ }),
    /** The partition (AS3 tenant) our objects live in; default npl_lb_<clusterName>. */
    tenant: z
      .string()
      .regex(/^[A-Za-z][0-9A-Za-z_.-]{0,63}$/, 'must start with a letter; letters, digits, _ . - only')
      .optional(),
    insecureSkipVerify: z.boolean().default(false),
    requestTimeoutSeconds: z.number().int().positive().default(60),
  })
  .strict();

export function f5Options(
  owner: string,
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): F5AdapterOptions {
  const r = f5SettingsSchema.safeParse(settings);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new NplError(ErrorCodes.CONFIG_INVALID, `adapter.${issue.path.join('.')}: ${issue.message}`);
  }
  const username = env.NPL_LB_F5_USERNAME;
  const password = env.NPL_LB_F5_PASSWORD;
  if (!username || !password) {
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      'adapter: F5 credentials missing: set NPL_LB_F5_USERNAME and NPL_LB_F5_PASSWORD',
    );
  }
  return {
    owner,
    url: r.data.url,
    username,
    password,
    insecureSkipVerify: r.data.insecureSkipVerify,
    timeoutMs: r.data.requestTimeoutSeconds * 1000,
    ...(r.data.tenant ? { tenant: r.data.tenant } : {}),
  };
}
