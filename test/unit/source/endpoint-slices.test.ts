/**
 * The EndpointSlice index (src/source/endpoint-slices.ts): the Pods a Service without a selector
 * gets from its slices, the Services a Pod change reaches, kept right as slices come, change,
 * move to another Service and go; and a pool built through it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { NPL_POD_ANNOTATION } from '../../../src/kube/annotations.ts';
import {
  endpointSliceSchema,
  type EndpointSlice,
  nodeSchema,
  podSchema,
  serviceSchema,
} from '../../../src/kube/objects.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SliceIndex } from '../../../src/source/endpoint-slices.ts';

const slice = (name: string, service: string | undefined, pods: string[], ns = 'default'): EndpointSlice =>
  endpointSliceSchema.parse({
    metadata: { name, namespace: ns, labels: service ? { 'kubernetes.io/service-name': service } : {} },
    endpoints: pods.map((p) => {
      const [pns, pname] = p.includes('/') ? p.split('/') : [ns, p];
      return { targetRef: { kind: 'Pod', name: pname, namespace: pns } };
    }),
  });

describe('EndpointSlice index', () => {
  it('a Service gets the Pods of all its slices once; a Pod reaches every Service naming it; a slice that moves touches both', () => {
    const ix = new SliceIndex();
    assert.deepEqual(ix.put('default/s1', slice('s1', 'web', ['a', 'b'])), ['default/web']);
    ix.put('default/s2', slice('s2', 'web', ['b', 'c', 'other/x']));
    ix.put('default/s3', slice('s3', 'api', ['b']));
    assert.deepEqual(ix.podsOf('default/web'), ['default/a', 'default/b', 'default/c'], 'other/x refused');
    const reach = (pod: string) => {
      const out = new Set<string>();
      ix.servicesOf(pod, out);
      return [...out].sort();
    };
    assert.deepEqual(reach('default/b'), ['default/api', 'default/web']);
    // s2 now belongs to api: both Services are touched, b stays with web through s1.
    assert.deepEqual(ix.put('default/s2', slice('s2', 'api', ['c'])), ['default/web', 'default/api']);
    assert.deepEqual(ix.podsOf('default/web'), ['default/a', 'default/b']);
    assert.deepEqual(reach('default/c'), ['default/api']);
    // A slice without the label names nothing; a removed slice leaves nothing behind.
    ix.put('default/s4', slice('s4', undefined, ['a']));
    for (const k of ['default/s1', 'default/s2', 'default/s3', 'default/s4']) ix.put(k, undefined);
    assert.equal(ix.size, 0);
    assert.deepEqual(reach('default/b'), []);
    assert.deepEqual(ix.podsOf('default/web'), []);
  });

  it('equals an index built from scratch after any sequence of puts and removes', () => {
    const op = fc.record({
      slice: fc.constantFrom('s1', 's2', 's3'),
      service: fc.option(fc.constantFrom('web', 'api'), { nil: undefined }),
      pods: fc.subarray(['a', 'b', 'c', 'd']),
      remove: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 20 }), (ops) => {
        const live = new SliceIndex();
        const current = new Map<string, EndpointSlice>();
        for (const o of ops) {
          const k = `default/${o.slice}`;
          if (o.remove) {
            live.put(k, undefined);
            current.delete(k);
          } else {
            const s = slice(o.slice, o.service, o.pods);
            live.put(k, s);
            current.set(k, s);
          }
        }
        const fresh = new SliceIndex(current.values());
        for (const svc of ['default/web', 'default/api'])
          assert.deepEqual(live.podsOf(svc), fresh.podsOf(svc));
        for (const p of ['a', 'b', 'c', 'd']) {
          const [x, y] = [new Set<string>(), new Set<string>()];
          live.servicesOf(`default/${p}`, x);
          fresh.servicesOf(`default/${p}`, y);
          assert.deepEqual([...x].sort(), [...y].sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a pool of a Service without a selector has the named Pods as members; a Service with one ignores slices', () => {
    const pod = (name: string, app: string, nodePort: number) =>
      podSchema.parse({
        metadata: {
          name,
          namespace: 'default',
          labels: { app },
          annotations: {
            [NPL_POD_ANNOTATION]: JSON.stringify([
              { podPort: 8080, nodeIP: '192.0.2.1', nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
            ]),
          },
        },
        spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
      });
    const svc = (name: string, selector?: Record<string, string>) =>
      serviceSchema.parse({
        metadata: { name, namespace: 'default' },
        spec: {
          type: 'LoadBalancer',
          ...(selector ? { selector } : {}),
          ports: [{ name: 'http', port: 80, targetPort: 'http' }],
        },
      });
    const d = buildDesired(
      {
        services: [svc('manual'), svc('web', { app: 'web' })],
        pods: [pod('a', 'none', 61001), pod('b', 'web', 61002)],
        nodes: [
          nodeSchema.parse({
            metadata: { name: 'n1' },
            status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
          }),
        ],
        ingresses: [],
        ingressClasses: [],
        endpointSlices: [slice('m1', 'manual', ['a', 'ghost']), slice('w1', 'web', ['a'])],
      },
      parseControllerConfig('clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}'),
    );
    const ports = (service: string) =>
      d.state.pools.filter((p) => p.service === service).flatMap((p) => p.members.map((m) => m.port));
    assert.deepEqual(ports('default/manual'), [61001], 'a, named by its slice; the missing Pod left out');
    assert.deepEqual(ports('default/web'), [61002], 'its selector, not the slice');
  });
});
