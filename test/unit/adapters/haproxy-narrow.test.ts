/**
 * One change that would break HAProxy's reload fails alone: the bisection finds exactly the
 * refused changes (property-based), and on a real HAProxy a virtual service whose VIP is not on
 * this host is reported while the rest of its batch goes live, in one reload.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { narrowRefused } from '../../../adapters/haproxy/narrow.ts';
import type { L4VirtualService, Pool } from '../../../src/model/types.ts';
import { haproxyMissing, startHaproxy } from '../../support/haproxy.ts';
import { eventually } from '../../support/sandbox.ts';

describe('narrowing a refused batch', () => {
  it('finds exactly the culprits, in order, in few checks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 64 }),
        fc.uniqueArray(fc.nat(63), { maxLength: 5 }),
        async (n, badIdx) => {
          const items = Array.from({ length: n }, (_, i) => i);
          const bad = new Set(badIdx.filter((i) => i < n));
          let checks = 0;
          const got = await narrowRefused(items, async (subset) => {
            checks++;
            return subset.every((i) => !bad.has(i));
          });
          assert.deepEqual(
            got,
            [...bad].sort((a, b) => a - b),
          );
          // k culprits among n: about 2k·log2(n) checks, never a check per item for large n.
          const bound = 1 + 2 * Math.max(1, bad.size) * Math.ceil(Math.log2(n) + 1);
          assert.ok(checks <= bound, `${checks} checks for ${bad.size} of ${n}`);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a check that fails for another reason stops the search (the batch fails as retryable)', async () => {
    await assert.rejects(
      narrowRefused([1, 2, 3], async () => {
        throw new Error('haproxy binary gone');
      }),
      /binary gone/,
    );
  });
});

describe('runtime transport on a real HAProxy', { skip: haproxyMissing() }, () => {
  it('a VIP that is not on this host fails alone; the rest of the batch goes live in one reload', async (t) => {
    const rig = await startHaproxy(t);
    // The test shares HAProxy's network namespace, so new binds can be tried first.
    const adapter = rig.adapter('c1', { healthChecks: false, checkBinds: true });
    t.after(() => adapter.close());
    const app = createServer((_q, res) => res.end('ok\n'));
    await new Promise<void>((r) => app.listen(18211, '127.0.34.9', () => r()));
    t.after(() => new Promise<void>((r) => app.close(() => r())));
    const pool: Pool = {
      name: 'c1--web',
      protocol: 'TCP',
      health: 'tcp',
      service: 'default/web',
      servicePort: 'http',
      members: [{ address: '127.0.34.9', port: 18211, node: 'n1', pod: 'default/web-1', enabled: true }],
    };
    const l4 = (name: string, vip: string): L4VirtualService => ({
      kind: 'l4',
      name,
      vip,
      port: 18210,
      protocol: 'TCP',
      pool: pool.name,
      source: `default/${name}`,
    });
    const good = l4('c1--good', '127.0.34.10');
    // 192.0.2.0/24 is documentation space: never on this host, so HAProxy cannot bind it.
    const away = l4('c1--away', '192.0.2.77');
    const results = await adapter.apply([
      { op: 'create', kind: 'pool', name: pool.name, desired: pool },
      { op: 'create', kind: 'virtualService', name: away.name, desired: away },
      { op: 'create', kind: 'virtualService', name: good.name, desired: good },
    ]);
    assert.deepEqual(
      results.map((r) => [r.change.name, r.ok, r.error?.code, r.error?.terminal]),
      [
        ['c1--web', true, undefined, undefined],
        ['c1--away', false, 'BindFailed', true],
        ['c1--good', true, undefined, undefined],
      ],
    );
    assert.match(results[1]!.error!.message, /192\.0\.2\.77:18210.*not on this host/);
    assert.equal(adapter.stats.reloads, 1, 'one reload for what could go live');
    await eventually(
      async () =>
        (await request('http://127.0.34.10:18210/', { reset: true })
          .then((r) => r.body.text())
          .catch(() => '')) === 'ok\n',
      5000,
      'the good virtual service serves',
    );
    const observed = await adapter.observe();
    assert.deepEqual(
      observed.owned.virtualServices.map((v) => v.name),
      ['c1--good'],
    );
  });

  it('a change haproxy -c refuses is found by bisection and fails alone; the others are reloaded', async (t) => {
    // A checker that refuses any file holding the word "poison" (stands for any value HAProxy's
    // parser rejects), and otherwise is the real `haproxy -c`.
    const dir = mkdtempSync(join(tmpdir(), 'npl-narrow-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const bin = join(dir, 'haproxy');
    writeFileSync(
      bin,
      '#!/bin/sh\nfor a; do f="$a"; done\nif [ "$1" = "-c" ] && grep -q poison "$f"; then echo "[ALERT] poisoned" >&2; exit 1; fi\nexec haproxy "$@"\n',
    );
    chmodSync(bin, 0o755);
    const rig = await startHaproxy(t);
    const adapter = rig.adapter('c1', { healthChecks: false, bin });
    t.after(() => adapter.close());
    const pool = (name: string, service: string): Pool => ({
      name,
      protocol: 'TCP',
      health: 'tcp',
      service,
      servicePort: 'http',
      members: [],
    });
    const names = ['c1--a', 'c1--b', 'c1--c', 'c1--d', 'c1--e', 'c1--f'];
    const results = await adapter.apply(
      names.map((n) => ({
        op: 'create' as const,
        kind: 'pool' as const,
        name: n,
        desired: pool(n, n === 'c1--d' ? 'default/poison' : `default/${n}`),
      })),
    );
    assert.deepEqual(
      results.filter((r) => !r.ok).map((r) => [r.change.name, r.error?.code, r.error?.terminal]),
      [['c1--d', 'ConfigInvalid', true]],
    );
    assert.equal(adapter.stats.reloads, 1);
    assert.deepEqual(
      (await adapter.observe()).owned.pools.map((p) => p.name).sort(),
      names.filter((n) => n !== 'c1--d'),
    );
  });
});
