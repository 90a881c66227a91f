/**
 * The configuration reference (docs/configuration.md), generated from the zod schemas the
 * controller parses its configuration with, so the document cannot drift from the code: a test
 * compares the file with this output. `npx tsx scripts/config-reference.ts` rewrites it.
 */
import { z } from 'zod';
import { VENDORS } from '../../adapters/index.ts';
import type { Vendor } from '../adapter/vendor.ts';
import { controllerConfigSchema } from '../config/controller-config.ts';

interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(s: JsonSchema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``;
  if (s.enum) return s.enum.map((v) => `\`${String(v)}\``).join(', ');
  const t = Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'any');
  if (t === 'array') return `list of ${typeOf(s.items ?? {})}`;
  return s.format ? `${t} (${s.format})` : t;
}

function rules(s: JsonSchema): string {
  const out: string[] = [];
  if (s.minimum !== undefined || s.maximum !== undefined) out.push(`${s.minimum ?? ''}..${s.maximum ?? ''}`);
  if (s.minLength !== undefined && s.minLength > 1) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  const p = s.pattern ?? s.items?.pattern;
  if (p) out.push(`matches \`${p}\``);
  return out.join('; ');
}

function rows(schema: JsonSchema, prefix: string): string[] {
  const out: string[] = [];
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const path = `${prefix}${name}`;
    if (s.properties && s.type === 'object') {
      out.push(...rows(s, `${path}.`));
      continue;
    }
    const required = schema.required?.includes(name) && s.default === undefined;
    const def =
      s.default === undefined ? (required ? '**required**' : '') : `\`${JSON.stringify(s.default)}\``;
    out.push(
      `| \`${path}\` | ${cell(typeOf(s))} | ${def} | ${cell(rules(s))} | ${cell(s.description ?? '')} |`,
    );
  }
  return out;
}

function table(schema: z.ZodType, prefix: string, skip: string[] = []): string {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  for (const k of skip) delete json.properties?.[k];
  return [
    '| field | type | default | rules | meaning |',
    '| ----- | ---- | ------- | ----- | ------- |',
    ...rows(json, prefix),
  ].join('\n');
}

/** One vendor's `adapter` blocks: a table per shape, or what it is when it has no field. */
const vendorSections = (v: Vendor): string[] =>
  v.settings.length === 0
    ? [`## \`adapter\` for \`type: ${v.type}\`\n\n${v.summary ?? 'No other field.'}\n`]
    : v.settings.map((s) => `## \`adapter\` for ${s.title}\n\n${table(s.schema, 'adapter.')}\n`);

/** The reference for the registered vendors (adapters/index.ts). */
export function configurationReference(vendors: readonly Vendor[] = VENDORS): string {
  const words = vendors.flatMap((v) => (v.credentials ? [v.credentials] : []));
  return `# Controller configuration reference

<!-- Generated from the zod schemas by scripts/config-reference.ts; a test fails when it drifts. -->

\`npl-lb controller --config FILE\` reads one YAML file of this shape; the Helm chart renders it
from its values. An unknown field or a bad value stops the controller with one line naming the
field (\`NPL_CONFIG_INVALID\`, exit code 2). Credentials never appear here: they come from
\`NPL_LB_<${words.join('|')}>_USERNAME\` and \`_PASSWORD\` in the environment.

## Top level

${table(controllerConfigSchema, '', ['adapter'])}

${vendors.flatMap(vendorSections).join('\n')}`;
}
