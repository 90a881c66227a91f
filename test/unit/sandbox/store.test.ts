import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../../src/sandbox/status.ts';
import { Store, type StoreEvent } from '../../../src/sandbox/store.ts';

const obj = (name: string, ns = 'default') => ({ metadata: { name, namespace: ns } });

describe('store', () => {
  it('one cluster-wide, monotonically increasing resourceVersion across storage keys', () => {
    const s = new Store(10);
    const a = s.commit('pods.', 'ADDED', obj('a'));
    const b = s.commit('services.', 'ADDED', obj('b'));
    const c = s.commit('pods.', 'MODIFIED', obj('a'));
    const rvs = [a, b, c].map((x) => Number((x.obj.metadata as { resourceVersion: string }).resourceVersion));
    assert.deepEqual(rvs, [2, 3, 4]);
    assert.equal(s.currentRV(), 4);
  });
  it('lists sorted by namespace and name, per namespace or all', () => {
    const s = new Store(10);
    for (const [n, ns] of [
      ['b', 'x'],
      ['a', 'y'],
      ['c', 'x'],
    ] as const)
      s.commit('pods.', 'ADDED', obj(n, ns));
    assert.deepEqual(
      s.list('pods.').map((o) => (o.obj.metadata as { name: string }).name),
      ['b', 'c', 'a'],
    );
    assert.equal(s.list('pods.', 'x').length, 2);
  });
  it('replays history after a resourceVersion and tells subscribers', () => {
    const s = new Store(10);
    const seen: StoreEvent[] = [];
    const off = s.subscribe((e) => seen.push(e));
    s.commit('pods.', 'ADDED', obj('a'));
    s.commit('pods.', 'DELETED', obj('a'));
    off();
    s.commit('pods.', 'ADDED', obj('b'));
    assert.deepEqual(
      seen.map((e) => e.type),
      ['ADDED', 'DELETED'],
    );
    assert.deepEqual(
      s.since(2).map((e) => e.type),
      ['DELETED', 'ADDED'],
    );
    assert.equal(s.get('pods.', 'default', 'a'), undefined);
  });
  it('gives 410 Expired once the bounded history no longer reaches back', () => {
    const s = new Store(2);
    for (const n of ['a', 'b', 'c', 'd']) s.commit('pods.', 'ADDED', obj(n));
    assert.throws(
      () => s.since(2),
      (e: unknown) => e instanceof ApiError && e.code === 410 && e.status.reason === 'Expired',
    );
    assert.equal(s.since(3).length, 2);
    s.compact();
    assert.throws(
      () => s.since(4),
      (e: unknown) => e instanceof ApiError && e.code === 410,
    );
    assert.equal(s.since(s.currentRV()).length, 0);
  });
});
