/**
 * Command-line flags: node's parseArgs for the syntax, zod for the meaning, environment variables
 * (NPL_LB_<FLAG>) as fallbacks so a DaemonSet can set every flag. Errors are one clear line.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ErrorCodes, NplError } from '../runtime/errors.ts';

export interface FlagSpec {
  type: 'string' | 'boolean';
  description: string;
  default?: string;
  /** A one-letter alias (`-o`). */
  short?: string;
}

export type FlagSpecs = Record<string, FlagSpec>;

export const COMMON_FLAGS = {
  'log-format': { type: 'string', description: 'json or pretty', default: 'json' },
  'log-level': { type: 'string', description: 'trace, debug, info, warn, error', default: 'info' },
  help: { type: 'boolean', description: 'show this help' },
} as const satisfies FlagSpecs;

export const commonSchema = z.object({
  'log-format': z.enum(['json', 'pretty']),
  'log-level': z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
  help: z.boolean().default(false),
});

/** HOST:PORT (IPv6 hosts in brackets). */
export const hostPortSchema = z
  .string()
  .regex(/^(\[[^\]]+\]|[^:]+):\d+$/, 'must be HOST:PORT')
  .transform((s) => {
    const i = s.lastIndexOf(':');
    return { host: s.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(s.slice(i + 1)) };
  });

export function envName(flag: string): string {
  return `NPL_LB_${flag.toUpperCase().replaceAll('-', '_')}`;
}

export function helpText(command: string, summary: string, specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, s]) => {
    const arg = s.type === 'string' ? ` <value>` : '';
    const def = s.default !== undefined ? ` (default ${s.default})` : '';
    return `  ${s.short ? `-${s.short}, ` : ''}--${name}${arg}\n      ${s.description}${def}; env ${envName(name)}`;
  });
  return `Usage: npl-lb ${command} [flags]\n\n${summary}\n\nFlags:\n${rows.join('\n')}\n`;
}

/** Parses argv against the specs and validates with the schema; a bad flag is an NplError. */
export function parseFlags<S extends z.ZodType>(
  argv: string[],
  specs: FlagSpecs,
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(
      Object.entries(specs).map(([k, s]) => [k, { type: s.type, ...(s.short ? { short: s.short } : {}) }]),
    );
    values = parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (err) {
    throw new NplError(ErrorCodes.FLAG_INVALID, err instanceof Error ? err.message : String(err));
  }
  const merged: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(specs)) {
    const fromEnv = env[envName(name)];
    let v: unknown = values[name];
    if (v === undefined && fromEnv !== undefined) v = s.type === 'boolean' ? fromEnv === 'true' : fromEnv;
    if (v === undefined) v = s.default;
    if (v !== undefined) merged[name] = v;
  }
  const parsed = schema.safeParse(merged);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = String(issue.path[0] ?? '');
    throw new NplError(ErrorCodes.FLAG_INVALID, `invalid value for --${flag}: ${issue.message}`);
  }
  return parsed.data;
}
