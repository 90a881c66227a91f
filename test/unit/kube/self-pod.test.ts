/**
 * The controller's own Pod, read once by name (a list: the chart lets it list Pods, not get
 * them): its uid makes `kubectl describe pod` show the device-wide Events. Absent env, an absent
 * Pod or an unreadable API: none, never a throw.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { selfPod } from '../../../src/kube/self-pod.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { Cluster } from '../../support/cluster.ts';
import { useSandbox } from '../../support/sandbox.ts';

it('finds its own Pod by POD_NAME and POD_NAMESPACE; none without them or when it is not there', async (t) => {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.pod('npl-lb-controller-0', { node: 'n1', ports: [] });
  await c.pod('npl-lb-controller-1', { node: 'n1', ports: [] });
  const log = silentLogger();
  const me = await selfPod(kc, { POD_NAME: 'npl-lb-controller-0', POD_NAMESPACE: 'default' }, log);
  assert.equal(me?.kind, 'Pod');
  assert.equal(me?.name, 'npl-lb-controller-0');
  assert.equal(me?.namespace, 'default');
  assert.ok(me?.uid && me.uid.length > 0);
  assert.equal(await selfPod(kc, {}, log), undefined);
  assert.equal(await selfPod(kc, { POD_NAME: 'gone', POD_NAMESPACE: 'default' }, log), undefined);
  // A name that would widen a field selector is only ever compared whole.
  assert.equal(
    await selfPod(
      kc,
      { POD_NAME: 'npl-lb-controller-0,metadata.namespace=default', POD_NAMESPACE: 'default' },
      log,
    ),
    undefined,
  );
});
