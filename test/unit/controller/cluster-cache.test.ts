/**
 * The cluster cache keeps the Pods that carry a readiness gate apart from the others, in step with
 * every add, change and delete: the gate writer reads them after each pass and each health read,
 * so what it costs follows what is gated, never the number of Pods in the cluster.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { CACHE_KINDS, type CacheKind } from '../../../src/controller/cache-kinds.ts';
import { ClusterCache } from '../../../src/controller/cluster-cache.ts';
import type { ListWatchSource, WatchEventType } from '../../../src/kube/informer.ts';
import type { RawObject } from '../../../src/kube/raw-client.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import { eventually } from '../../support/sandbox.ts';

const pod = (name: string, rv: number, gates: string[]): RawObject => ({
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: String(rv), labels: {} },
  spec: { containers: [], readinessGates: gates.map((conditionType) => ({ conditionType })) },
  status: { phase: 'Running' },
});

it('holds the gated Pods apart through adds, changes and deletes, and none of the others', async () => {
  const ac = new AbortController();
  let emit: ((type: WatchEventType, obj: RawObject) => void) | undefined;
  const source = (items: RawObject[], watched = false): ListWatchSource => ({
    list: () => Promise.resolve({ items, resourceVersion: '1' }),
    watch: (_rv, onEvent, signal) =>
      new Promise((r) => {
        if (watched) emit = onEvent;
        const end = () => r({});
        signal.addEventListener('abort', end);
        ac.signal.addEventListener('abort', end);
      }),
  });
  const sources = Object.fromEntries(CACHE_KINDS.map((k) => [k, source([])])) as Record<
    CacheKind,
    ListWatchSource
  >;
  sources.pods = source(
    [
      pod('gated', 1, ['npl-lb.io/load-balancer-ready']),
      pod('plain', 2, []),
      pod('other-gate', 3, ['example.com/ready']),
    ],
    true,
  );
  const cache = new ClusterCache(new KubeConfig(), silentLogger(), sources);
  const names = () => [...cache.gatedPods()].map((p) => p.metadata.name).sort();
  try {
    await cache.start(5);
    assert.deepEqual(names(), ['gated', 'other-gate']);
    await eventually(() => emit !== undefined, 5000, 'the Pod watch');
    // A gate taken away, a gate added, a gated Pod deleted, a new gated Pod.
    emit!('MODIFIED', pod('gated', 4, []));
    emit!('MODIFIED', pod('plain', 5, ['npl-lb.io/load-balancer-ready']));
    emit!('DELETED', pod('other-gate', 6, ['example.com/ready']));
    emit!('ADDED', pod('new', 7, ['npl-lb.io/load-balancer-ready']));
    await eventually(() => names().join() === 'new,plain', 5000, 'the gated Pods after the events');
    // The Pod list still has every Pod: only the gated ones are apart.
    assert.equal(cache.view().pods.length, 3);
  } finally {
    ac.abort();
    await cache.stop();
  }
});
