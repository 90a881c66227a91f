/**
 * BIG-IP keeps an iRule under 64 KiB (irule-size.ts): a virtual service whose rule would be larger
 * (here the route retries' rule, an arm line per retry pool) is refused by name, alone, before
 * anything is sent, and the rest of the batch goes; where pools' changes make the rule of a
 * service already on the device grow past it, those changes are refused and the service stays as
 * it was. The size is counted in UTF-8 bytes; the simulator refuses such a rule as the device does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5_MAX_IRULE_BYTES, oversizedRules } from '../../../../adapters/f5/irule-size.ts';
import { retryRuleName } from '../../../../adapters/f5/route-retry.ts';
import type { Change } from '../../../../src/adapter/changes.ts';
import type { L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { semanticProblems } from '../../../../sim/f5/semantics.ts';
import { startF5 } from '../../../support/f5-sim.ts';
import { l7, member, pool as kitPool, route } from '../../../support/model.ts';

type Json = Record<string, unknown>;

const pool = (name: string, extra: Partial<Pool> = {}): Pool =>
  kitPool(name, [member('192.0.2.1', 61000)], { health: 'http', ...extra });
const vs = (name: string, vip: string, pools: string[]): L7VirtualService =>
  l7(
    name,
    pools.map((p, i) => route({ path: `/p${i}`, pool: p })),
    { vip },
  );
/** Pools of long names (each arm line of the retry rule about 150 bytes): 450 make it past 64 KiB. */
const MANY = Array.from(
  { length: 450 },
  (_, i) => `c1--default-${'w'.repeat(100)}-80.l7.retry-${String(i).padStart(4, '0')}`,
);
const SMALL = 'c1--default-small-80.l7.retry-0001';
const BIG_VS = 'c1--gw-default.big-HTTP-80';
const SMALL_VS = 'c1--gw-default.small-HTTP-80';
const RETRY = { retries: 2, retryStatuses: [503] };

const create = (p: Pool | L7VirtualService): Change =>
  'members' in p
    ? { op: 'create', kind: 'pool', name: p.name, desired: p }
    : { op: 'create', kind: 'virtualService', name: p.name, desired: p };

describe('BIG-IP: an iRule past 64 KiB', () => {
  it('is found by its UTF-8 size, in our applications only', () => {
    const rule = (text: string) => ({ class: 'iRule', iRule: text });
    const tenants: [string, Json][] = [
      [
        'npl_lb_c1',
        {
          class: 'Tenant',
          npl_lb: {
            class: 'Application',
            over: rule('x'.repeat(F5_MAX_IRULE_BYTES + 1)),
            edge: rule('x'.repeat(F5_MAX_IRULE_BYTES)),
            // 3 bytes each in UTF-8: 21,845 of them are 65,535 bytes, one more is past it.
            wideEdge: rule('€'.repeat(21_845)),
            wideOver: rule('€'.repeat(21_846)),
            small: rule('when HTTP_REQUEST {}'),
          },
          someone_else: { class: 'Application', theirs: rule('x'.repeat(F5_MAX_IRULE_BYTES + 1)) },
        },
      ],
    ];
    assert.deepEqual(
      oversizedRules(tenants).map((r) => [r.app, r.name, r.bytes]),
      [
        ['npl_lb', 'over', 65_536],
        ['npl_lb', 'wideOver', 65_538],
      ],
    );
    // The simulator refuses it as the device does, by its path.
    const adc = { class: 'ADC', npl_lb_c1: tenants[0]![1] };
    const problems = semanticProblems(adc, new Set());
    assert.ok(
      problems.some((p) => p.startsWith('/npl_lb_c1/npl_lb/over/iRule: 65536 bytes')),
      String(problems),
    );
    assert.ok(!problems.some((p) => p.includes('/edge/') || p.includes('/wideEdge/')), String(problems));
  });

  for (const version of ['3.56.0', '3.46.0']) {
    it(`through the adapter on AS3 ${version}: the service refused by name, alone; pools that would grow it refused, the service kept`, async (t) => {
      const { adapter, objects } = await startF5(t, version);
      await adapter.observe();
      const big = vs(BIG_VS, '192.0.2.20', MANY);
      const small = vs(SMALL_VS, '192.0.2.21', [SMALL]);
      const results = await adapter.apply([
        ...MANY.map((n) => create(pool(n, RETRY))),
        create(pool(SMALL, RETRY)),
        create(big),
        create(small),
      ]);
      const failed = results.filter((r) => !r.ok);
      assert.deepEqual(
        failed.map((r) => [r.change.name, r.error?.code, r.error?.terminal]),
        [[BIG_VS, 'Invalid', true]],
      );
      assert.match(
        failed[0]!.error!.message,
        new RegExp(
          `^iRule ${retryRuleName(BIG_VS)} of ${BIG_VS} would be \\d{5,6} bytes; BIG-IP takes at most 65535`,
        ),
      );
      // The rest went: the small service with its rule, every pool; the large rule never sent.
      assert.ok(objects()[SMALL_VS]);
      assert.match(String(objects()[retryRuleName(SMALL_VS)]?.iRule), /set npl_retry_codes \{503\}/);
      assert.equal(objects()[BIG_VS], undefined);
      assert.equal(objects()[retryRuleName(BIG_VS)], undefined);
      assert.equal(objects()[MANY[449]!]?.class, 'Pool');

      // The same service without retries fits; then its pools asking retries would grow its rule
      // past the limit: those pool changes are refused, the service and its pools stay as they were.
      const plainPools = MANY.map((n) => pool(n));
      const again = await adapter.apply([
        ...plainPools.map((p): Change => ({
          op: 'update',
          kind: 'pool',
          name: p.name,
          desired: p,
          observed: pool(p.name, RETRY),
        })),
        create(big),
      ]);
      assert.deepEqual(
        again.filter((r) => !r.ok).map((r) => r.change.name),
        [],
      );
      assert.ok(objects()[BIG_VS]);
      const grow = await adapter.apply(
        plainPools.map((p): Change => ({
          op: 'update',
          kind: 'pool',
          name: p.name,
          desired: pool(p.name, RETRY),
          observed: p,
        })),
      );
      const refused = grow.filter((r) => !r.ok);
      assert.equal(refused.length, MANY.length);
      assert.match(
        refused[0]!.error!.message,
        new RegExp(
          `^with pool ${MANY[0]}, iRule ${retryRuleName(BIG_VS)} of ${BIG_VS} would be \\d{5,6} bytes`,
        ),
      );
      assert.equal(objects()[retryRuleName(BIG_VS)], undefined, 'the service kept its rules as they were');
      assert.equal(objects()[MANY[0]!]?.reselectTries, undefined);
      assert.ok(objects()[BIG_VS]);
    });
  }
});
