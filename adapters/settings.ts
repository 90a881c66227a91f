/**
 * Shared by the adapters' config modules: the `adapter:` block parsed with the adapter's zod schema
 * (one line naming the field on error), and credentials from the environment, which the Helm chart
 * fills from a Secret (NPL_LB_<VENDOR>_USERNAME, NPL_LB_<VENDOR>_PASSWORD).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ErrorCodes, NplError } from '../src/runtime/errors.ts';

export function parseSettings<S extends z.ZodType>(schema: S, settings: unknown): z.infer<S> {
  const r = schema.safeParse(settings);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new NplError(ErrorCodes.CONFIG_INVALID, `adapter.${issue.path.join('.')}: ${issue.message}`);
}

export function credentials(vendor: string, env: NodeJS.ProcessEnv): { username: string; password: string } {
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

/**
 * How an adapter's HTTPS client trusts the device: the system's CAs, plus a PEM bundle
 * (`caFile`, for a private CA), or nothing at all (`insecureSkipVerify`, for labs). A `caFile`
 * that cannot be read, or holds no certificate, is a configuration error naming the field.
 */
export function tlsTrust(s: { insecureSkipVerify?: boolean; caFile?: string | undefined }): {
  insecureSkipVerify: boolean;
  ca?: string;
} {
  if (!s.caFile) return { insecureSkipVerify: s.insecureSkipVerify ?? false };
  let pem: string;
  try {
    pem = readFileSync(s.caFile, 'utf8');
  } catch (err) {
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `adapter.caFile: cannot read ${s.caFile}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  if (!/-----BEGIN CERTIFICATE-----/.test(pem)) {
    throw new NplError(ErrorCodes.CONFIG_INVALID, `adapter.caFile: ${s.caFile} holds no PEM certificate`);
  }
  return { insecureSkipVerify: s.insecureSkipVerify ?? false, ca: pem };
}

/** How an adapter's HTTPS client trusts its device: the fields every adapter block shares. */
export const tlsSettings = {
  insecureSkipVerify: z
    .boolean()
    .default(false)
    .describe('do not verify the device certificate (labs only; prefer caFile)'),
  caFile: z
    .string()
    .min(1)
    .optional()
    .describe('PEM bundle of a private CA that signs the device certificate'),
};
