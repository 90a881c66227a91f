/**
 * A pool's HTTP check (the model's HttpCheck) as adapters keep it on a device that has no field for
 * it (a haproxy.cfg comment, a Data Plane description word, AS3 metadata): JSON, read back through
 * this schema. What does not read back as a check is none, and the next pass writes it again.
 */
import { z } from 'zod';
import type { HttpCheck } from '../model/types.ts';

const httpCheckSchema = z.object({
  type: z.literal('http'),
  path: z.string(),
  intervalSeconds: z.number().int(),
  timeoutSeconds: z.number().int(),
  rise: z.number().int(),
  fall: z.number().int(),
  tls: z.literal(true).optional(),
});

export const storeCheck = (c: HttpCheck): string => JSON.stringify(c);

/** The check kept as `text`, as a spread (`{}` when absent or unreadable). */
export function readStoredCheck(text: string | undefined): { check?: HttpCheck } {
  if (!text) return {};
  try {
    const r = httpCheckSchema.safeParse(JSON.parse(text));
    return r.success ? { check: r.data } : {};
  } catch {
    return {};
  }
}
