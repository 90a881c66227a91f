import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JsonObject } from '../../../src/sandbox/openapi.ts';
import { OpenApi } from '../../../src/sandbox/openapi.ts';
import { jsonPatch, mergePatch, StrategicMerge } from '../../../src/sandbox/patch.ts';
import { ApiError } from '../../../src/sandbox/status.ts';

const api = new OpenApi();
const smp = new StrategicMerge(api);
const podSchema = api.definition('io.k8s.api.core.v1.Pod')!;
const svcSchema = api.definition('io.k8s.api.core.v1.Service')!;

const pod = (): JsonObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x'] },
  spec: {
    containers: [
      { name: 'c1', image: 'i1', ports: [{ containerPort: 80, protocol: 'TCP' }] },
      { name: 'c2', image: 'i2' },
    ],
    tolerations: [{ key: 't1' }],
  },
});

describe('JSON merge patch (RFC 7386)', () => {
  it('merges maps, deletes with null, replaces lists', () => {
    const out = mergePatch(pod(), {
      metadata: { labels: { a: null, c: '3' } },
      spec: { tolerations: [{ key: 't2' }] },
    });
    assert.deepEqual((out as JsonObject).metadata, {
      name: 'p',
      labels: { b: '2', c: '3' },
      finalizers: ['x'],
    });
    assert.deepEqual(((out as JsonObject).spec as JsonObject).tolerations, [{ key: 't2' }]);
  });
  it('idempotency: an empty patch changes nothing', () => assert.deepEqual(mergePatch(pod(), {}), pod()));
});

describe('JSON patch (RFC 6902)', () => {
  it('applies add, replace, remove, test', () => {
    const out = jsonPatch(pod(), [
      { op: 'test', path: '/metadata/name', value: 'p' },
      { op: 'add', path: '/metadata/labels/c', value: '3' },
      { op: 'replace', path: '/spec/containers/1/image', value: 'i3' },
      { op: 'remove', path: '/metadata/labels/a' },
    ]);
    assert.deepEqual((out.metadata as JsonObject).labels, { b: '2', c: '3' });
    assert.equal(((out.spec as JsonObject).containers as JsonObject[])[1]!.image, 'i3');
  });
  it('a failing test op is 422 and leaves the input alone', () => {
    const input = pod();
    assert.throws(
      () => jsonPatch(input, [{ op: 'test', path: '/metadata/name', value: 'other' }]),
      (e: unknown) => e instanceof ApiError && e.code === 422,
    );
    assert.deepEqual(input, pod());
  });
  it('a non-array patch is 400', () => {
    assert.throws(
      () => jsonPatch(pod(), { op: 'add' }),
      (e: unknown) => e instanceof ApiError && e.code === 400,
    );
  });
});

describe('strategic merge patch', () => {
  it('merges containers by name and keeps the others (patchMergeKey from the OpenAPI document)', () => {
    const out = smp.apply(pod(), { spec: { containers: [{ name: 'c2', image: 'new' }] } }, podSchema);
    const cs = (out.spec as JsonObject).containers as JsonObject[];
    assert.deepEqual(
      cs.map((c) => [c.name, c.image]),
      [
        ['c1', 'i1'],
        ['c2', 'new'],
      ],
    );
  });
  it('appends a new container and deletes one with $patch: delete', () => {
    const out = smp.apply(
      pod(),
      {
        spec: {
          containers: [
            { name: 'c3', image: 'i3' },
            { name: 'c1', $patch: 'delete' },
          ],
        },
      },
      podSchema,
    );
    const cs = (out.spec as JsonObject).containers as JsonObject[];
    assert.deepEqual(
      cs.map((c) => c.name),
      ['c2', 'c3'],
    );
  });
  it('replaces lists without a merge strategy (tolerations)', () => {
    const out = smp.apply(pod(), { spec: { tolerations: [{ key: 't2' }] } }, podSchema);
    assert.deepEqual((out.spec as JsonObject).tolerations, [{ key: 't2' }]);
  });
  it('unions primitive lists with merge strategy (finalizers) and removes with $deleteFromPrimitiveList', () => {
    const out = smp.apply(pod(), { metadata: { finalizers: ['y', 'x'] } }, podSchema);
    assert.deepEqual((out.metadata as JsonObject).finalizers, ['x', 'y']);
    const out2 = smp.apply(out, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x'] } }, podSchema);
    assert.deepEqual((out2.metadata as JsonObject).finalizers, ['y']);
  });
  it('orders merged lists by $setElementOrder, as kubectl apply sends it', () => {
    const out = smp.apply(
      pod(),
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'c2' }, { name: 'c1' }],
          containers: [{ name: 'c1', image: 'z' }],
        },
      },
      podSchema,
    );
    const cs = (out.spec as JsonObject).containers as JsonObject[];
    assert.deepEqual(
      cs.map((c) => `${c.name}:${c.image}`),
      ['c2:i2', 'c1:z'],
    );
  });
  it('merges Service ports by port and deletes map keys with null', () => {
    const svc: JsonObject = {
      metadata: { name: 's', annotations: { keep: '1', drop: '2' } },
      spec: {
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 81 },
        ],
      },
    };
    const out = smp.apply(
      svc,
      { metadata: { annotations: { drop: null } }, spec: { ports: [{ port: 81, name: 'bb' }] } },
      svcSchema,
    );
    assert.deepEqual((out.metadata as JsonObject).annotations, { keep: '1' });
    assert.deepEqual((out.spec as JsonObject).ports, [
      { name: 'a', port: 80 },
      { name: 'bb', port: 81 },
    ]);
  });
  it('$patch: replace on a map replaces it', () => {
    const out = smp.apply(pod(), { metadata: { labels: { $patch: 'replace', z: '9' } } }, podSchema);
    assert.deepEqual((out.metadata as JsonObject).labels, { z: '9' });
  });
  it('$retainKeys drops the keys not listed', () => {
    const out = smp.apply(pod(), { metadata: { labels: { $retainKeys: ['a'], a: '1' } } }, podSchema);
    assert.deepEqual((out.metadata as JsonObject).labels, { a: '1' });
  });
  it('idempotency: an empty patch changes nothing', () =>
    assert.deepEqual(smp.apply(pod(), {}, podSchema), pod()));
  it('a list element without its merge key is a 400', () => {
    assert.throws(
      () => smp.apply(pod(), { spec: { containers: [{ image: 'x' }] } }, podSchema),
      (e: unknown) => e instanceof ApiError && e.code === 400,
    );
  });
});
