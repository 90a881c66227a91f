/**
 * Shared by the adapters' config modules: the `adapter:` block parsed with the adapter's zod schema
 * (one line naming the field on error), and credentials from the environment, which the Helm chart
 * fills from a Secret (NPL_LB_<VENDOR>_USERNAME, NPL_LB_<VENDOR>_PASSWORD).
 */
import type { z } from 'zod';
import { ErrorCodes, NplError } from '../src/runtime/errors.ts';

export function parseSettings<S extends z.ZodType>(schema: S, settings: unknown): z.infer<S> {
  const r = schema.safeParse(settings);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new NplError(ErrorCodes.CONFIG_INVALID, `adapter.${issue.path.join('.')}: ${issue.message}`);
}

export function credentials(
  vendor: 'F5' | 'AVI' | 'HAPROXY',
  env: NodeJS.ProcessEnv,
): { username: string; password: string } {
  const user = `NPL_LB_${vendor}_USERNAME`;
  const pass = `NPL_LB_${vendor}_PASSWORD`;
  const username = env[user];
  const password = env[pass];
  if (!username || !password) {
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `adapter: ${vendor} credentials missing: set ${user} and ${pass}`,
    );
  }
  return { username, password };
}
