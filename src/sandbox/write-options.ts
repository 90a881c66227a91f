/**
 * What a write request asks beside its body: `dryRun`, `fieldValidation`, the writer
 * (`fieldManager`, else its User-Agent's program), and the headers it is answered with.
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
    started: performance.timeOrigin + performance.now(),
  };
}

/**
 * The headers a write is answered with: its warnings (`Warning`), and when it began
 * (`Npl-Write-Started`: its body read, nothing stored yet, ms since the epoch to the microsecond;
 * a header of the sandbox's own, which an API server has not). A benchmark measures a change's
 * latency from it, the API server's own time to answer left out.
 */
export function writeHeaders(opts: WriteOptions): Record<string, string> {
  return {
    ...(opts.warnings.length > 0
      ? { Warning: opts.warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') }
      : {}),
    ...(opts.started !== undefined ? { 'Npl-Write-Started': opts.started.toFixed(3) } : {}),
  };
}
