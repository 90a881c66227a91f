/**
 * The Avi simulator's answers to reads (sim/avi/store.ts): an object is walked into its answer
 * (absolute references) once per version, so a list of thousands of objects read page by page
 * does not hold the simulator's event loop (and the writes waiting behind it) for a walk of each
 * object on every read; a write answers, and lists, the new version at once; with `#name` the
 * names referred to are read each time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AviObjectStore } from '../../../../sim/avi/store.ts';
import { renderPool } from '../../../../adapters/avi/objects.ts';
import * as kit from '../../../support/model.ts';

const AT = { cloud: 'Default-Cloud', seGroup: 'Default-Group', vrf: 'global' };
type Answer = { results: Record<string, unknown>[]; count: number };

describe('Avi simulator answers', () => {
  it('one walk per version: a list read again is the same answer, a write lists the new version', () => {
    let base = 'https://127.0.0.1:9443';
    const store = new AviObjectStore(() => base);
    const tenant = store.tenantUuid('admin')!;
    for (let i = 0; i < 3; i++)
      store.create(
        'pool',
        renderPool(kit.pool(`c1--ns-s${i}-80`, [kit.member('192.0.2.1', 30000 + i)]), 'c1', AT),
        tenant,
      );
    const list = () =>
      store.list('pool', tenant, new URL(`${base}/api/pool?page_size=2`)) as unknown as Answer;
    const first = list();
    assert.equal(first.count, 3);
    assert.match(String(first.results[0]!.cloud_ref), /^https:\/\/127\.0\.0\.1:9443\/api\/cloud\//);
    const again = list();
    assert.equal(again.results[0], first.results[0], 'the same version: the same answer');

    const stored = [...store.store.get('pool')!.values()].find((o) => o.name === 'c1--ns-s0-80')!;
    const updated = renderPool(kit.pool('c1--ns-s0-80', [kit.member('192.0.2.9', 31000)]), 'c1', AT);
    store.update('pool', String(stored.uuid), { ...updated, _last_modified: stored._last_modified }, tenant);
    const after = list();
    assert.notEqual(after.results[0], first.results[0]);
    assert.deepEqual(
      (after.results[0]!.servers as { ip: { addr: string } }[]).map((s) => s.ip.addr),
      ['192.0.2.9'],
      'the new version listed at once',
    );
    assert.equal(after.results[1], first.results[1], 'the others unchanged: their answers kept');

    // Another address for the simulator: every answer walked again with it.
    base = 'https://127.0.0.1:9444';
    assert.match(String(list().results[1]!.cloud_ref), /^https:\/\/127\.0\.0\.1:9444\//);

    // With #name: the referred object's name, read each time.
    const named = store.list(
      'pool',
      tenant,
      new URL(`${base}/api/pool?page_size=1`),
      true,
    ) as unknown as Answer;
    assert.match(String(named.results[0]!.cloud_ref), /#Default-Cloud$/);
    assert.notEqual(
      (store.list('pool', tenant, new URL(`${base}/api/pool?page_size=1`), true) as unknown as Answer)
        .results[0],
      named.results[0],
    );
  });
});
