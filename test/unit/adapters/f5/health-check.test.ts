/**
 * A pool's HTTP check on BIG-IP: its own AS3 Monitor (monitorType http) beside it, GET of the
 * probe's path expecting a 2xx or 3xx status line, the probe's timings as BIG-IP's interval,
 * timeout and time until up; the simulator holds the declaration to F5's schema; a restart writes
 * nothing; a pool that loses its check goes back to the tcp monitor and its Monitor goes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { APP } from '../../../../adapters/f5/declaration.ts';
import type { HttpCheck, Pool } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import * as kit from '../../../support/model.ts';

const check: HttpCheck = {
  type: 'http',
  path: '/healthz',
  intervalSeconds: 5,
  timeoutSeconds: 2,
  rise: 2,
  fall: 3,
};
const pool = (c?: HttpCheck): Pool =>
  kit.pool('c1--web-http', [kit.member('192.0.2.1', 61000, { node: 'n1', pod: 'default/web-1' })], {
    health: 'http',
    service: 'default/web',
    servicePort: 'http',
    ...(c ? { check: c } : {}),
  });

describe('F5: member checks from readiness probes', () => {
  it('a Monitor of its own, schema-valid; a restart writes nothing; losing the check removes it', async (t) => {
    const sim = new BigIpSimulator();
    const url = await sim.start();
    const make = () =>
      new F5Adapter({
        owner: 'c1',
        url,
        username: 'admin',
        password: 'admin',
        taskPollMs: 10,
        declarations: 'tenant',
      });
    const adapter = make();
    t.after(async () => {
      await adapter.close();
      await sim.close();
    });
    const state = (p: Pool) => ({
      pools: [p],
      virtualServices: [kit.l4('c1--web-TCP-80', p.name, { source: 'default/web' })],
    });
    const sync = async (a: F5Adapter, p: Pool) => {
      const changes = plan(state(p), await a.observe()).changes;
      const r = await a.apply(changes);
      assert.deepEqual(
        r.filter((x) => !x.ok),
        [],
        JSON.stringify(r.filter((x) => !x.ok)),
      );
      return changes.length;
    };
    assert.ok((await sync(adapter, pool(check))) > 0);
    const app = sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;
    assert.deepEqual(app['c1--web-http']!.monitors, [{ use: 'c1--web-http_check' }]);
    const m = app['c1--web-http_check']!;
    assert.equal(m.class, 'Monitor');
    assert.equal(m.monitorType, 'http');
    assert.equal(m.send, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.equal(m.receive, 'HTTP/1\\.[01] [23][0-9][0-9]');
    assert.deepEqual([m.interval, m.timeout, m.timeUntilUp], [5, 16, 5]);
    // A restart (a new adapter on the same device) plans nothing.
    const again = make();
    t.after(() => again.close());
    assert.equal(await sync(again, pool(check)), 0, 'a restart writes nothing');
    // The path changes: the Monitor follows.
    await sync(again, pool({ ...check, path: '/ready' }));
    const app2 = sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;
    assert.equal(app2['c1--web-http_check']!.send, 'GET /ready HTTP/1.0\r\n\r\n');
    // No probe any more: the tcp monitor, and the Monitor is gone.
    await sync(again, pool());
    const app3 = sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;
    assert.deepEqual(app3['c1--web-http']!.monitors, ['tcp']);
    assert.equal(app3['c1--web-http_check'], undefined);
    assert.equal(await sync(again, pool()), 0);
    // An HTTPS probe: an https Monitor (the simulator holds it to the AS3 schema), kept across a
    // restart, and back to http when the probe is.
    await sync(again, pool({ ...check, tls: true }));
    const app4 = sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;
    assert.equal(app4['c1--web-http_check']!.monitorType, 'https');
    assert.equal(app4['c1--web-http_check']!.send, 'GET /healthz HTTP/1.0\r\n\r\n');
    const third = make();
    t.after(() => third.close());
    assert.equal(await sync(third, pool({ ...check, tls: true })), 0, 'a restart writes nothing');
    await sync(third, pool(check));
    const app5 = sim.tenants.get('npl_lb_c1')?.[APP] as Record<string, Record<string, unknown>>;
    assert.equal(app5['c1--web-http_check']!.monitorType, 'http');
  });
});
