/**
 * The Data Plane API spec checker the contract and e2e tests hold every exchange to: it passes
 * what the spec describes and names what it does not (a body of the wrong shape, deep in a
 * referenced definition too, an undeclared query parameter or status, an unknown path), so a
 * simulator or adapter drifting from the published spec fails those tests.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Exchange } from '../../../sim/haproxy-dataplane/simulator.ts';
import { DataplaneSpec } from '../../support/dataplane-spec.ts';

const spec = new DataplaneSpec('v3');
const x = (over: Partial<Exchange>): Exchange => ({
  method: 'POST',
  path: '/v3/services/haproxy/configuration/backends',
  query: { transaction_id: 't1' },
  requestBody: { name: 'b1', mode: 'http', balance: { algorithm: 'roundrobin' } },
  status: 201,
  responseBody: { name: 'b1', mode: 'http', balance: { algorithm: 'roundrobin' } },
  headers: {},
  ...over,
});

it('passes an exchange the spec describes', () => {
  assert.deepEqual(spec.check(x({})), []);
});

it('names a body of the wrong shape, at the top and inside a referenced definition', () => {
  assert.match(spec.check(x({ requestBody: { name: 7 } })).join('\n'), /request body: .*name/);
  assert.match(
    spec.check(x({ requestBody: { name: 'b1', balance: { algorithm: 'no-such-algorithm' } } })).join('\n'),
    /request body: .*balance.*algorithm|request body: .*allowed values/,
  );
  assert.match(spec.check(x({ responseBody: { name: ['b1'] } })).join('\n'), /201 body: /);
});

it('names an undeclared query parameter and path, and holds another status to the error model', () => {
  assert.match(
    spec.check(x({ query: { nonsense: '1' } })).join('\n'),
    /query parameter nonsense is not declared/,
  );
  // A status the operation does not list is held to its default answer, the error model.
  assert.match(spec.check(x({ status: 418 })).join('\n'), /418 body: .*required property 'code'/);
  assert.match(spec.check(x({ path: '/v3/no/such/path' })).join('\n'), /no such path in the v3 spec/);
});
