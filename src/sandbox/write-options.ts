/**
 * What a write request asks beside its body: `dryRun`, `fieldValidation`, the writer
 * (`fieldManager`, else its User-Agent's program), and the Warning header it is answered with.
 */
import type { IncomingMessage } from 'node:http';
import { fieldManagerOf } from './field-managers.ts';
import type { FieldValidation, WriteOptions } from './registry.ts';
import { badRequest } from './status.ts';

function fieldValidation(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${v}"`);
}

export function writeOptions(q: URLSearchParams, req: IncomingMessage): WriteOptions {
  const dry = q.getAll('dryRun');
  for (const d of dry)
    if (d !== 'All') throw badRequest(`Invalid dry run value: unsupported dry run value "${d}"`);
  return {
    dryRun: dry.length > 0,
    fieldValidation: fieldValidation(q),
    warnings: [],
    fieldManager: fieldManagerOf(q, req),
  };
}

export function warningHeaders(opts: WriteOptions): Record<string, string> {
  if (opts.warnings.length === 0) return {};
  return { Warning: opts.warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') };
}
