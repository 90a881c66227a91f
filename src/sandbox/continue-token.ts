/**
 * A list's `continue` key: the resourceVersion the first page was read at and the key
 * (namespace/name) the next page starts after, as base64url JSON. A key that cannot be read is the
 * API server's 400. Pure.
 */
import { badRequest } from './status.ts';

export interface ContinueToken {
  rv: number;
  start: string;
}

export function parseContinue(raw: string | null): ContinueToken | undefined {
  if (!raw) return undefined;
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as ContinueToken;
    if (typeof t.rv === 'number' && typeof t.start === 'string') return t;
  } catch {
    // fall through
  }
  throw badRequest('continue key is not valid: illegal base64 data');
}

/** The key of the page after `last`, at resourceVersion `rv`. */
export function continueAfter(rv: number, last: { namespace?: string; name: string }): string {
  return Buffer.from(JSON.stringify({ rv, start: `${last.namespace ?? ''}/${last.name}` })).toString(
    'base64url',
  );
}
