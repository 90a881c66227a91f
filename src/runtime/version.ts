/**
 * The version of this installation: the `version` of the npl-lb package.json found walking up
 * from this file (src/runtime in a checkout, dist/src/runtime in a build or an installed package).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const manifest = z.object({ name: z.string(), version: z.string() });

let cached: string | undefined;

export function version(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const m = manifest.safeParse(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')));
      if (m.success && m.data.name === 'npl-lb') return (cached = m.data.version);
    } catch {
      // not here: one folder up
    }
    dir = dirname(dir);
  }
  return (cached = 'unknown');
}
