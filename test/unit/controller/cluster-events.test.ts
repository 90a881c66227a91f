/**
 * What Pod events tell the controller: while the next pass builds everything anyway (a cold start
 * lists every Pod), no Pod event looks its Services up; once passes are incremental, each names
 * the Services that select the Pod before and after. The annotation-to-apply clock starts only for
 * a Pod already known whose NodePortLocal annotation changed (a listed Pod is not a change).
 * Mutations this catches (tried): looking Services up during the cold start (the counter), starting
 * the clock for listed Pods, not naming the Service of a label move.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type EventSource, followCluster } from '../../../src/controller/cluster-events.ts';
import type { CacheKind } from '../../../src/controller/cache-kinds.ts';
import { NPL_POD_ANNOTATION } from '../../../src/kube/annotations.ts';
import type { InformerHandlers } from '../../../src/kube/informer.ts';
import type { RawObject } from '../../../src/kube/raw-client.ts';

function rig() {
  const handlers = new Map<CacheKind, InformerHandlers>();
  let lookups = 0;
  const source: EventSource = {
    on: (kind, h) => void handlers.set(kind, h),
    // Services select Pods by `app`: web-svc selects app=web, api-svc app=api.
    servicesSelecting: (ns, labels, out) => {
      lookups++;
      if (labels.app) out.add(`${ns}/${labels.app}-svc`);
    },
    servicesNaming: () => {},
  };
  const sink = {
    serviceType: 'NodePortLocal' as const,
    changed: new Set<string>(),
    everythingPending: true,
    passes: 0,
    everything() {
      this.everythingPending = true;
    },
    all() {
      return this.everythingPending;
    },
    enqueue: () => {},
    pass() {
      this.passes++;
    },
    annotationSeen: new Map<string, number>(),
    nodeMoved: () => false,
  };
  followCluster(source, sink);
  const pods = handlers.get('pods')!;
  return { sink, pods, lookups: () => lookups };
}

const pod = (name: string, app: string, npl?: string): RawObject => ({
  metadata: {
    name,
    namespace: 'default',
    labels: { app },
    annotations: npl === undefined ? {} : { [NPL_POD_ANNOTATION]: npl },
  },
});

describe('cluster events: Pods', () => {
  it('a cold start lists Pods without looking their Services up, and starts no clock; each asks for a pass', () => {
    const { sink, pods, lookups } = rig();
    for (let i = 0; i < 100; i++) pods.add!(pod(`p${i}`, 'web', '[]'));
    pods.update!(pod('p1', 'web', '[]'), pod('p1', 'api', '[]'));
    pods.delete!(pod('p2', 'web'));
    assert.equal(lookups(), 0);
    assert.equal(sink.changed.size, 0);
    assert.equal(sink.annotationSeen.size, 0, 'a listed Pod is not an annotation change');
    assert.equal(sink.passes, 102);
  });

  it('once passes are incremental, a Pod names its Services before and after, and a changed annotation starts the clock', () => {
    const { sink, pods } = rig();
    sink.everythingPending = false;
    pods.add!(pod('new', 'web', '[]'));
    assert.deepEqual([...sink.changed], ['default/web-svc']);
    assert.equal(sink.annotationSeen.size, 0, 'an added Pod starts no clock');
    sink.changed.clear();
    pods.update!(pod('a', 'web', '[]'), pod('a', 'api', '[]'));
    assert.deepEqual([...sink.changed].sort(), ['default/api-svc', 'default/web-svc'], 'a label move');
    assert.equal(sink.annotationSeen.size, 0, 'the same annotation: no clock');
    sink.changed.clear();
    pods.update!(pod('a', 'api', '[]'), pod('a', 'api', '[{"podPort":8080}]'));
    assert.deepEqual([...sink.changed], ['default/api-svc']);
    assert.ok(sink.annotationSeen.has('default/a'));
    pods.delete!(pod('a', 'api'));
    assert.ok(sink.changed.has('default/api-svc'));
  });
});
