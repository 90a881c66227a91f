/**
 * @kubernetes/client-node against the sandbox: our informer over real list and watch, a forced 410,
 * an API server restart mid-watch, optimistic concurrency, and a Lease renewed with MicroTime.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ApiException,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  V1MicroTime,
} from '@kubernetes/client-node';
import { apiServerSource, Informer } from '../../src/kube/informer.ts';
import { RESOURCES } from '../../src/kube/paths.ts';
import type { RawObject } from '../../src/kube/raw-client.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const pod = (name: string, node: string, labels: Record<string, string> = { app: 'web' }) => ({
  metadata: { name, labels },
  spec: { nodeName: node, containers: [{ name: 'c', image: 'x' }] },
});

function track(inf: Informer): { log: string[]; names: () => string[] } {
  const log: string[] = [];
  const n = (o: RawObject) => String((o.metadata as { name: string }).name);
  inf.on({
    add: (o) => log.push(`add ${n(o)}`),
    update: (_, o) => log.push(`update ${n(o)}`),
    delete: (o) => log.push(`delete ${n(o)}`),
  });
  return { log, names: () => inf.list().map(n).sort() };
}

describe('client-node and our informer on the sandbox', () => {
  it('sees ADDED, MODIFIED and DELETED through the same label and field selectors on list and watch', async (t) => {
    const { kc } = await useSandbox(t);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespacedPod({ namespace: 'default', body: pod('before', 'n1') });
    await core.createNamespacedPod({ namespace: 'default', body: pod('elsewhere', 'n2') });
    const inf = new Informer({
      name: 'pods',
      source: apiServerSource({
        kubeConfig: kc,
        resource: RESOURCES.pods,
        fieldSelector: 'spec.nodeName=n1',
        labelSelector: 'app=web',
      }),
    });
    const { log, names } = track(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    assert.deepEqual(names(), ['before']);
    await core.createNamespacedPod({ namespace: 'default', body: pod('after', 'n1') });
    await core.createNamespacedPod({ namespace: 'default', body: pod('other-node', 'n2') });
    await core.patchNamespacedPod(
      { namespace: 'default', name: 'after', body: { metadata: { labels: { app: 'web', v: '2' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedPod({ namespace: 'default', name: 'before' });
    await eventually(() => log.length >= 4, 5000, 'events');
    assert.deepEqual(log, ['add before', 'add after', 'update after', 'delete before']);
    assert.deepEqual(names(), ['after']);
  });

  it('a forced 410 (history compacted while the watch was down) relists without losing or duplicating state', async (t) => {
    const { kc, sandbox } = await useSandbox(t);
    const core = kc.makeApiClient(CoreV1Api);
    for (const n of ['a', 'b', 'c'])
      await core.createNamespacedPod({ namespace: 'default', body: pod(n, 'n1') });
    const inf = new Informer({
      name: 'pods',
      source: apiServerSource({ kubeConfig: kc, resource: RESOURCES.pods }),
      backoff: { initialMs: 20, maxMs: 200 },
    });
    const { log, names } = track(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    const listsBefore = inf.stats.lists;
    const gate = sandbox.restart(300);
    // While the server is down, change the data and compact its history.
    await new Promise((r) => setTimeout(r, 50));
    const opts = { dryRun: false, fieldValidation: 'Strict' as const, warnings: [] };
    const podsType = (await import('../../src/sandbox/kinds.ts')).RESOURCE_TYPES.find(
      (x) => x.kind === 'Pod',
    )!;
    sandbox.registry.delete(podsType, 'default', 'b', { dryRun: false });
    sandbox.registry.create(podsType, 'default', pod('d', 'n1'), opts);
    sandbox.registry.patch(
      podsType,
      'default',
      'c',
      'merge',
      { metadata: { labels: { v: '2' } } },
      undefined,
      opts,
    );
    sandbox.store.compact();
    await gate;
    await eventually(() => names().join() === 'a,c,d', 10_000, 'relisted state');
    assert.ok(inf.stats.lists > listsBefore, 'it relisted');
    assert.deepEqual(log, ['add a', 'add b', 'add c', 'update c', 'add d', 'delete b']);
  });

  it('survives a sandbox restart mid-watch and picks up changes made while it was down', async (t) => {
    const { kc, sandbox } = await useSandbox(t);
    const core = kc.makeApiClient(CoreV1Api);
    const inf = new Informer({
      name: 'pods',
      source: apiServerSource({ kubeConfig: kc, resource: RESOURCES.pods }),
      backoff: { initialMs: 20, maxMs: 200 },
    });
    const { log, names } = track(inf);
    inf.start();
    t.after(() => inf.stop());
    await inf.waitForSync();
    await core.createNamespacedPod({ namespace: 'default', body: pod('a', 'n1') });
    await eventually(() => names().join() === 'a', 5000, 'a');
    const restarting = sandbox.restart(200);
    await new Promise((r) => setTimeout(r, 50));
    const podsType = (await import('../../src/sandbox/kinds.ts')).RESOURCE_TYPES.find(
      (x) => x.kind === 'Pod',
    )!;
    sandbox.registry.create(podsType, 'default', pod('down', 'n1'), {
      dryRun: false,
      fieldValidation: 'Strict',
      warnings: [],
    });
    await restarting;
    await core.createNamespacedPod({ namespace: 'default', body: pod('b', 'n1') });
    await eventually(() => names().join() === 'a,b,down', 10_000, 'state after restart');
    assert.deepEqual(log, ['add a', 'add down', 'add b']);
    assert.ok(inf.stats.errors >= 1, 'the restart was seen as an error and survived');
  });

  it('update with a stale resourceVersion is 409 through client-node', async (t) => {
    const { kc } = await useSandbox(t);
    const core = kc.makeApiClient(CoreV1Api);
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('p', 'n1') });
    created.metadata!.labels = { app: 'web', x: '1' };
    await core.replaceNamespacedPod({ namespace: 'default', name: 'p', body: created });
    await assert.rejects(
      core.replaceNamespacedPod({ namespace: 'default', name: 'p', body: created }),
      (e: unknown) =>
        e instanceof ApiException && e.code === 409 && String(e.body).includes('"reason":"Conflict"'),
    );
  });

  it('creates and renews a Lease with microsecond times', async (t) => {
    const { kc } = await useSandbox(t);
    const leases = kc.makeApiClient(CoordinationV1Api);
    const t0 = new V1MicroTime();
    const lease = await leases.createNamespacedLease({
      namespace: 'kube-system',
      body: {
        metadata: { name: 'npl-lb-controller' },
        spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: t0, renewTime: t0 },
      },
    });
    const raw = await fetch(
      `${kc.getCurrentCluster()!.server}/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/npl-lb-controller`,
    );
    const body = (await raw.json()) as { spec: { renewTime: string } };
    assert.match(body.spec.renewTime, /\.\d{6}Z$/);
    lease.spec!.renewTime = new V1MicroTime(Date.now() + 1000);
    const renewed = await leases.replaceNamespacedLease({
      namespace: 'kube-system',
      name: 'npl-lb-controller',
      body: lease,
    });
    assert.ok(Number(renewed.metadata!.resourceVersion) > Number(lease.metadata!.resourceVersion));
    assert.ok(new Date(String(renewed.spec!.renewTime)).getTime() > t0.getTime());
  });
});
