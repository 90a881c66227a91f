/**
 * What a write request asks beside its body: `dryRun`, `fieldValidation`, the writer
 * (`fieldManager`, else its User-Agent's program), and the Warning header it is answered with;
 * and the moment the write began, in a header of the sandbox's own.
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

/**
 * The moment a write began (its body read, nothing stored yet), in ms since the epoch to the
 * microsecond: `Npl-Write-Started`, a header of the sandbox's own (an API server has none). A
 * benchmark measures a change's latency from it, the API server's own time to answer left out.
 */
export function writeStarted(): Record<string, string> {
  return { 'Npl-Write-Started': (performance.timeOrigin + performance.now()).toFixed(3) };
}
