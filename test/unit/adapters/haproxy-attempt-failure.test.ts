/**
 * What a failed attempt at one Data Plane transaction comes to (adapters/haproxy/dataplane/
 * attempt-failure.ts): a change refused alone is dropped (400/422 on its own call: Invalid,
 * terminal; our own check of it: its code), the commit refused is narrowed, a conflict is read
 * again, and anything else (no answer, a 5xx, an error of no change) fails every change, retryably.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attemptFailure } from '../../../adapters/haproxy/dataplane/attempt-failure.ts';
import { DataplaneError } from '../../../adapters/haproxy/dataplane/client.ts';
import { AdapterError } from '../../../src/adapter/errors.ts';

const op = (index: number) => ({ index, run: async () => undefined });

describe('a failed Data Plane transaction attempt', () => {
  it('drops a change refused on its own call, or by our own check; narrows a refused commit', () => {
    for (const status of [400, 422])
      assert.deepEqual(attemptFailure(new DataplaneError(status, 'bad server'), false, op(3)), {
        kind: 'drop',
        index: 3,
        fail: { code: 'Invalid', message: 'bad server', terminal: true },
      });
    assert.deepEqual(
      attemptFailure(new AdapterError('Unsupported', 'no such word', { terminal: true }), false, op(1)),
      { kind: 'drop', index: 1, fail: { code: 'Unsupported', message: 'no such word', terminal: true } },
    );
    assert.deepEqual(attemptFailure(new DataplaneError(400, 'config check'), true, undefined), {
      kind: 'refused',
      message: 'config check',
    });
  });

  it('a conflict is read again; no answer, a 5xx, or a refusal of no one change fails every change, retryably', () => {
    const conflict = attemptFailure(new DataplaneError(409, 'version mismatch'), false, op(0));
    assert.equal(conflict.kind, 'conflict');
    assert.equal((conflict as { error: { terminal: boolean } }).error.terminal, false);
    assert.deepEqual(attemptFailure(new DataplaneError(0, 'ECONNREFUSED'), false, op(0)), {
      kind: 'fail',
      error: { code: 'Unavailable', message: 'ECONNREFUSED', terminal: false },
    });
    const fivexx = attemptFailure(new DataplaneError(503, 'busy'), false, op(0));
    assert.equal(fivexx.kind, 'fail');
    // A 400 on a call that is no one change's (index -1: the transaction's own) is not dropped.
    assert.equal(attemptFailure(new DataplaneError(400, 'bad'), false, op(-1)).kind, 'fail');
    assert.equal(attemptFailure(new Error('bug'), false, op(2)).kind, 'fail');
  });
});
