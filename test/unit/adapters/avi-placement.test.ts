/**
 * Avi placement per class (issue 33 item 3): virtual services of two classes land in two Service
 * Engine groups on the Avi simulator (their SNI children with them), read back as placed, with
 * nothing to write after a restart; a class moving to another group is one update; a group the
 * controller does not have fails that virtual service alone, with the controller's words.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AviAdapter } from '../../../adapters/avi/adapter.ts';
import type { VirtualService } from '../../../src/model/types.ts';
import { plan } from '../../../src/plan/diff.ts';
import { AviSimulator } from '../../../sim/avi/simulator.ts';
import * as kit from '../../support/model.ts';

const seGroupOf = (sim: AviSimulator, vs: string): string => {
  const o = [...(sim.store.get('virtualservice')?.values() ?? [])].find((x) => x.name === vs);
  const uuid =
    String(o?.se_group_ref ?? '')
      .split('/')
      .pop() ?? '';
  return String(sim.store.get('serviceenginegroup')?.get(uuid)?.name ?? '');
};

describe('Avi: virtual services placed by their class', () => {
  it('two classes, two SE groups; read back as placed, nothing to write after a restart; moved in place; a missing group fails alone', async (t) => {
    const sim = new AviSimulator({ serviceEngineGroups: ['se-team-a', 'se-team-b'] });
    const url = await sim.start();
    t.after(() => sim.close());
    const make = () =>
      new AviAdapter({
        owner: 'c1',
        url,
        username: 'admin',
        password: 'admin',
        version: '22.1.3',
        tenant: 'admin',
      });
    const first = make();
    t.after(() => first.close());
    const p = kit.pool('c1--ns-web-80.l7', [kit.member('192.0.2.1', 61000)], { health: 'http' });
    const vs = (name: string, vip: string, seGroup?: string): VirtualService => ({
      ...kit.l7(name, [kit.route({ host: 'a.example', pool: p.name })], { vip }),
      ...(seGroup ? { placement: { serviceEngineGroup: seGroup } } : {}),
    });
    const s = kit.state(
      [p],
      [
        vs('c1--gw-a-HTTP-80', '192.0.2.10', 'se-team-a'),
        vs('c1--gw-b-HTTP-80', '192.0.2.11', 'se-team-b'),
        vs('c1--gw-c-HTTP-80', '192.0.2.12'),
      ],
    );
    const r = await first.apply(plan(s, await first.observe()).changes);
    assert.deepEqual(
      r.filter((x) => !x.ok),
      [],
    );
    assert.equal(seGroupOf(sim, 'c1--gw-a-HTTP-80'), 'se-team-a');
    assert.equal(seGroupOf(sim, 'c1--gw-b-HTTP-80'), 'se-team-b');
    assert.equal(seGroupOf(sim, 'c1--gw-c-HTTP-80'), 'Default-Group');
    assert.deepEqual(plan(s, await first.observe()).changes, [], 'observed as placed');
    const second = make();
    t.after(() => second.close());
    assert.deepEqual(plan(s, await second.observe()).changes, [], 'nothing to write after a restart');
    // Class a moves to team b's group: one update, in place.
    const moved = kit.state(
      [p],
      [vs('c1--gw-a-HTTP-80', '192.0.2.10', 'se-team-b'), ...s.virtualServices.slice(1)],
    );
    const changes = plan(moved, await second.observe()).changes;
    assert.deepEqual(
      changes.map((c) => `${c.op} ${c.name}`),
      ['update c1--gw-a-HTTP-80'],
    );
    assert.deepEqual(
      (await second.apply(changes)).filter((x) => !x.ok),
      [],
    );
    assert.equal(seGroupOf(sim, 'c1--gw-a-HTTP-80'), 'se-team-b');
    // A group the controller does not have: that virtual service fails, the others stand.
    const missing = kit.state(
      [p],
      [...moved.virtualServices, vs('c1--gw-d-HTTP-80', '192.0.2.13', 'se-nowhere')],
    );
    const out = await second.apply(plan(missing, await second.observe()).changes);
    const failed = out.filter((x) => !x.ok);
    assert.equal(failed.length, 1);
    assert.equal(failed[0]!.change.name, 'c1--gw-d-HTTP-80');
    assert.match(failed[0]!.error?.message ?? '', /se-nowhere|serviceenginegroup/i);
    assert.equal(seGroupOf(sim, 'c1--gw-b-HTTP-80'), 'se-team-b');
  });
});
