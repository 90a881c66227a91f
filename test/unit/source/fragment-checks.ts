/**
 * The two checks every "fields: carried or refused, never dropped" test makes (HTTPRoute, its
 * experimental fields, GRPCRoute): each schema leaf is covered by a fragment and no fragment names
 * a leaf the schema lacks; and one fragment alone is carried into the model, accepted, or refused
 * with a condition naming it.
 */
import assert from 'node:assert/strict';

interface Condition {
  type: string;
  status: boolean;
  message: string;
}

interface Checked<R> {
  id: string;
  expect: 'carried' | 'accepted' | 'refused';
  says?: RegExp;
  seen?: (routes: R[]) => boolean;
}

export function assertCovered(leaves: readonly string[], covered: ReadonlySet<string>): void {
  assert.deepEqual(
    leaves.filter((p) => !covered.has(p)),
    [],
    'schema fields nobody said what npl-lb does with',
  );
  assert.deepEqual(
    [...covered].filter((p) => !leaves.includes(p)),
    [],
    'fragments naming fields the schema lacks',
  );
}

/** One fragment set alone on a route: what the pass made of it (its parent's conditions, its routes). */
export function assertAlone<R>(f: Checked<R>, built: { conditions: Condition[]; routes: R[] }): void {
  const { conditions, routes } = built;
  if (f.expect === 'refused') {
    const why = conditions.find((c) => !c.status);
    assert.ok(why && f.says!.test(why.message), `${f.id}: ${JSON.stringify(conditions)}`);
    assert.equal(routes.length, 0, `${f.id}: a refused route serves nothing`);
    return;
  }
  assert.equal(
    conditions.find((c) => c.type === 'Accepted')?.status,
    true,
    `${f.id}: ${JSON.stringify(conditions)}`,
  );
  assert.ok(routes.length > 0, `${f.id}: served`);
  if (f.seen) assert.ok(f.seen(routes), `${f.id}: not in the model: ${JSON.stringify(routes)}`);
}
