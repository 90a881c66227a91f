/**
 * Linear cold sync: the backends of our Ingresses are computed once per version of the Ingress
 * and IngressClass lists, not once per Service or per Service change (counted, not timed); each
 * Service is looked up by key.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { Annotator } from '../../../src/controller/annotator.ts';
import { serviceSchema } from '../../../src/kube/objects.ts';
import type { ClusterView } from '../../../src/source/desired.ts';

it('one computation for a whole cold start, none more when Services change, one when Ingresses do', async () => {
  const svc = (i: number) =>
    serviceSchema.parse({
      metadata: { name: `s${i}`, namespace: 'default' },
      spec: { type: 'ClusterIP', selector: { app: `s${i}` }, ports: [{ port: 80 }] },
    });
  const services = Array.from({ length: 2000 }, (_, i) => svc(i));
  const byKey = new Map(services.map((s) => [`default/${s.metadata.name}`, s]));
  let lookups = 0;
  const view: ClusterView = {
    services,
    ingresses: [],
    ingressClasses: [],
    pods: [],
    nodes: [],
    serviceByKey: (k) => (lookups++, byKey.get(k)),
  };
  const a = new Annotator(new KubeConfig(), parseControllerConfig('clusterName: c1'));
  for (const s of services) assert.equal(await a.reconcile(view, `default/${s.metadata.name}`), 'none');
  assert.equal(a.stats.computed, 1, '2,000 Services, one computation');
  assert.equal(lookups, 2000, 'each Service looked up by key, no scan');
  // Every Service's status is written (a new Services list each time): nothing is recomputed.
  for (let i = 0; i < 100; i++) {
    const changed: ClusterView = { ...view, services: [...services] };
    assert.equal(await a.reconcile(changed, `default/s${i}`), 'none');
  }
  assert.equal(a.stats.computed, 1);
  assert.equal(await a.reconcile({ ...view, ingresses: [] }, 'default/s1'), 'none');
  assert.equal(a.stats.computed, 2, 'a new Ingress list computes the backends again');
  assert.equal(await a.reconcile(view, 'default/nope'), 'none', 'a Service that is gone: nothing to do');
});
