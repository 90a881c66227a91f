/**
 * What a failed attempt at one Data Plane transaction comes to (the adapter's `transact`): one
 * change refused alone (400/422 on its own call, or our own check of it), dropped and the
 * transaction built again without it; the commit refused (HAProxy's check of the whole file:
 * narrowed down by commit-narrowing.ts); the configuration changed meanwhile (409/406: read again
 * and retried); or the device failing every change. Pure.
 */
import { AdapterError, codeForStatus, isTerminalCode } from '../../../src/adapter/errors.ts';
import type { Fail } from '../validate.ts';
import { DataplaneError } from './client.ts';
import type { Op } from './transaction-plan.ts';

export type AttemptFailure =
  | { kind: 'drop'; index: number; fail: Fail }
  | { kind: 'refused'; message: string }
  | { kind: 'conflict'; error: Fail }
  | { kind: 'fail'; error: Fail };

/** `committing`: the error came from the commit; `current`: the change's call it came from, if any. */
export function attemptFailure(err: unknown, committing: boolean, current: Op | undefined): AttemptFailure {
  const status = err instanceof DataplaneError ? err.status : 0;
  const message = (err as Error).message;
  if (status === 409 || status === 406)
    return {
      kind: 'conflict',
      error: {
        code: 'Conflict',
        message: `the configuration changed meanwhile (${message}); re-read and retried`,
        terminal: false,
      },
    };
  if (committing && (status === 400 || status === 422)) return { kind: 'refused', message };
  const ofChange = current !== undefined && current.index >= 0;
  if (ofChange && (status === 400 || status === 422))
    return { kind: 'drop', index: current.index, fail: { code: 'Invalid', message, terminal: true } };
  if (ofChange && err instanceof AdapterError && !(err instanceof DataplaneError))
    return {
      kind: 'drop',
      index: current.index,
      fail: { code: err.code, message, terminal: isTerminalCode(err.code) },
    };
  return {
    kind: 'fail',
    error: { code: status === 0 ? 'Unavailable' : codeForStatus(status), message, terminal: false },
  };
}
