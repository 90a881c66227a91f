/**
 * `npx tsx scripts/chart-schema.ts`: writes the `adapter` part of the chart's values.schema.json
 * from the vendor registry (src/main/chart-schema.ts); the rest of the file is left as it is.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { VENDORS } from '../adapters/index.ts';
import { chartAdapterSchema } from '../src/main/chart-schema.ts';

const path = new URL('../deploy/helm/npl-lb/values.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(path, 'utf8')) as { properties: Record<string, unknown> };
schema.properties.adapter = chartAdapterSchema(VENDORS);
writeFileSync(path, `${JSON.stringify(schema, null, 2)}\n`);
