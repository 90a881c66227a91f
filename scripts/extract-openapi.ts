/**
 * Regenerates src/sandbox/openapi/kube-openapi.json from the Kubernetes OpenAPI document in
 * ../shared/specs (or the path given as the first argument).
 *   npx tsx scripts/extract-openapi.ts [path/to/swagger.json]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extractServed, type SwaggerDoc } from '../src/sandbox/openapi-extract.ts';

const src =
  process.argv[2] ?? fileURLToPath(new URL('../../shared/specs/kubernetes/swagger.json', import.meta.url));
const out = fileURLToPath(new URL('../src/sandbox/openapi/kube-openapi.json', import.meta.url));
const full = JSON.parse(readFileSync(src, 'utf8')) as SwaggerDoc;
const cut = extractServed(full);
writeFileSync(out, `${JSON.stringify(cut)}\n`);
console.log(
  `wrote ${out}: ${Object.keys(cut.paths).length} paths, ${Object.keys(cut.definitions).length} definitions`,
);
