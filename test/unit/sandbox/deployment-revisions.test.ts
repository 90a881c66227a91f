/**
 * A Deployment's revisions on its ReplicaSets (deployment-revisions.ts), as kube-controller-manager
 * keeps them: a new template's ReplicaSet at the next revision with the Deployment's annotations
 * (not its bookkeeping); the change-cause follows onto the newest one; a template rolled back to
 * takes the next revision and keeps its former one in its history, across two rollbacks; a
 * ReplicaSet just made is no rollback, and nothing but the change-cause moves on a settled one.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import {
  currentAnnotations,
  newestRevision,
  newReplicaSet,
  REVISION,
  REVISION_HISTORY,
} from '../../../src/sandbox/deployment-revisions.ts';
import type { JsonObject } from '../../../src/sandbox/openapi.ts';

const dep = (annotations: Record<string, string>): JsonObject => ({
  metadata: { name: 'web', uid: 'd1', annotations },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } } },
});
const rs = (revision: number, replicas: number, extra: Record<string, string> = {}): JsonObject => ({
  metadata: { name: `web-${revision}`, annotations: { [REVISION]: String(revision), ...extra } },
  spec: { replicas },
});

it('a new template, the change-cause, and rollbacks as kube-controller-manager keeps them', () => {
  const d = dep({
    'kubernetes.io/change-cause': 'image 2',
    'kubectl.kubernetes.io/last-applied-configuration': '{}',
    [REVISION]: '1',
  });
  const fresh = newReplicaSet(d, { metadata: { labels: { app: 'web' } }, spec: {} }, 'abc', 2);
  assert.deepEqual((fresh.metadata as JsonObject).annotations, {
    'kubernetes.io/change-cause': 'image 2',
    [REVISION]: '2',
    'deployment.kubernetes.io/desired-replicas': '3',
  });
  assert.deepEqual((fresh.spec as JsonObject).selector, {
    matchLabels: { app: 'web', 'pod-template-hash': 'abc' },
  });
  assert.equal((fresh.spec as JsonObject).replicas, 0, 'grown by the rollout');

  // Settled on revision 2: the change-cause follows; nothing else moves.
  const one = rs(1, 0);
  const two = rs(2, 3);
  assert.equal(newestRevision([one, two]), 2);
  assert.deepEqual(currentAnnotations(dep({ 'kubernetes.io/change-cause': 'x' }), two, [one, two]), {
    [REVISION]: '2',
    'kubernetes.io/change-cause': 'x',
  });

  // Rolled back to revision 1 while revision 2 still has Pods: revision 3, history "1".
  const back = currentAnnotations(dep({}), one, [one, two]);
  assert.equal(back[REVISION], '3');
  assert.equal(back[REVISION_HISTORY], '1');
  // Rolled back again to what was revision 2 (now older): revision 4, its history kept growing.
  const once = rs(3, 3, { [REVISION_HISTORY]: '1' });
  // A ReplicaSet just made for the template (not yet among the Deployment's): no rollback.
  const made = rs(2, 0);
  assert.equal(currentAnnotations(dep({}), made, [once])[REVISION], '2');
  const twoOld = rs(2, 0);
  const again2 = currentAnnotations(dep({}), twoOld, [once, twoOld]);
  assert.equal(again2[REVISION], '4');
  assert.equal(again2[REVISION_HISTORY], '2');
  assert.equal(newestRevision([]), 0);
});
