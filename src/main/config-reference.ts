/**
 * The configuration reference (docs/configuration.md), generated from the zod schemas the
 * controller parses its configuration with, so the document cannot drift from the code: a test
 * compares the file with this output. `npx tsx scripts/config-reference.ts` rewrites it.
 */
import { z } from 'zod';
import { aviSettingsSchema } from '../../adapters/avi/config.ts';
import { f5SettingsSchema } from '../../adapters/f5/config.ts';
import { haproxyDataplaneSchema, haproxyRuntimeSchema } from '../../adapters/haproxy/settings.ts';
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

export function configurationReference(): string {
  return `# Controller configuration reference

<!-- Generated from the zod schemas by scripts/config-reference.ts; a test fails when it drifts. -->

\`npl-lb controller --config FILE\` reads one YAML file of this shape; the Helm chart renders it
from its values. An unknown field or a bad value stops the controller with one line naming the
field (\`NPL_CONFIG_INVALID\`, exit code 2). Credentials never appear here: they come from
\`NPL_LB_<AVI|F5|HAPROXY>_USERNAME\` and \`_PASSWORD\` in the environment.

## Top level

${table(controllerConfigSchema, '', ['adapter'])}

## \`adapter\` for \`type: memory\`

No other field: the in-memory load balancer of dry runs and tests.

## \`adapter\` for \`type: avi\`

${table(aviSettingsSchema, 'adapter.')}

## \`adapter\` for \`type: f5\`

${table(f5SettingsSchema, 'adapter.')}

## \`adapter\` for \`type: haproxy\`, \`transport: runtime\` (the default transport)

${table(haproxyRuntimeSchema, 'adapter.')}

## \`adapter\` for \`type: haproxy\`, \`transport: dataplane\`

${table(haproxyDataplaneSchema, 'adapter.')}
`;
}
