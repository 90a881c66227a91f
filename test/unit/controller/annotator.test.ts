/**
 * Linear cold sync: what to annotate is computed once per version of the cache, not once per
 * Service (counted, not timed); a changed Services list computes it again.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { Annotator } from '../../../src/controller/annotator.ts';
import { serviceSchema } from '../../../src/kube/objects.ts';
import type { ClusterView } from '../../../src/source/desired.ts';

it('one computation of the annotation set for a whole cold start, one more after a change', async () => {
  const svc = (i: number) =>
    serviceSchema.parse({
      metadata: { name: `s${i}`, namespace: 'default' },
      spec: { type: 'ClusterIP', selector: { app: `s${i}` }, ports: [{ port: 80 }] },
    });
  const services = Array.from({ length: 2000 }, (_, i) => svc(i));
  const view: ClusterView = { services, ingresses: [], ingressClasses: [], pods: [], nodes: [] };
  const a = new Annotator(new KubeConfig(), parseControllerConfig('clusterName: c1'));
  for (const s of services) assert.equal(await a.reconcile(view, `default/${s.metadata.name}`), 'none');
  assert.equal(a.stats.computed, 1, '2,000 Services, one computation');
  const changed: ClusterView = { ...view, services: [...services, svc(2000)] };
  assert.equal(await a.reconcile(changed, 'default/s2000'), 'none');
  assert.equal(await a.reconcile(changed, 'default/s1'), 'none');
  assert.equal(a.stats.computed, 2);
  assert.equal(await a.reconcile(changed, 'default/nope'), 'none', 'a Service that is gone: nothing to do');
});
