/**
 * The AS3 versions the BIG-IP adapter declares for, and the version AS3 reports of itself
 * (`GET /mgmt/shared/appsvcs/info`) as a number to compare. Pure.
 */
import { z } from 'zod';

/** The oldest AS3 we declare for (our declarations use nothing newer). */
export const MIN_AS3_VERSION = '3.36.0';

/** The first AS3 with per-application declarations. */
export const PER_APP_AS3_VERSION = '3.47.0';

/** AS3's answer about itself, as far as we read it. */
export const infoSchema = z.object({ version: z.string().regex(/^\d+\.\d+\.\d+/) }).loose();

/** `a.b.c` as one number, for comparing versions. */
export const versionNumber = (v: string): number => {
  const [a = 0, b = 0, c = 0] = v.split('.').map((x) => Number.parseInt(x, 10));
  return a * 1_000_000 + b * 1000 + c;
};
