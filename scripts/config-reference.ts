/**
 * Rewrites docs/configuration.md from the zod schemas.
 *   npx tsx scripts/config-reference.ts
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { configurationReference } from '../src/main/config-reference.ts';

const out = fileURLToPath(new URL('../docs/configuration.md', import.meta.url));
writeFileSync(out, configurationReference());
console.log(`wrote ${out}`);
