/**
 * A pool's HTTP check on Avi: its own HealthMonitor (HEALTH_MONITOR_HTTP: GET of the probe's path,
 * HTTP_2XX and HTTP_3XX, the probe's period, timeout and thresholds), written before the pool that
 * refers to it and held by the simulator to the Avi object model; a restart writes nothing; a
 * path change updates it; a pool that loses its check goes back to System-TCP and the monitor goes,
 * as it does with its pool.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AviAdapter } from '../../../../adapters/avi/adapter.ts';
import type { HttpCheck, Pool } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
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

describe('Avi: member checks from readiness probes', () => {
  it('a HealthMonitor of its own; a restart writes nothing; a path change updates it; losing the check removes it', async (t) => {
    const sim = new AviSimulator();
    const url = await sim.start();
    const adapters: AviAdapter[] = [];
    const make = async () => {
      const a = aviAdapter(url);
      adapters.push(a);
      await a.verify();
      return a;
    };
    t.after(async () => {
      for (const a of adapters) await a.close();
      await sim.close();
    });
    const state = (p: Pool) => ({ pools: [p], virtualServices: [] });
    const sync = async (a: AviAdapter, p: Pool) => {
      const changes = plan(state(p), await a.observe()).changes;
      const r = await a.apply(changes);
      assert.deepEqual(
        r.filter((x) => !x.ok),
        [],
        JSON.stringify(r.filter((x) => !x.ok)),
      );
      return changes.length;
    };
    const first = await make();
    assert.equal(await sync(first, pool(check)), 1);
    const hm = sim.objects('healthmonitor').get('c1--web-http-check') as Record<string, unknown>;
    assert.equal(hm.type, 'HEALTH_MONITOR_HTTP');
    assert.deepEqual(hm.http_monitor, {
      http_request: 'GET /healthz HTTP/1.0',
      http_response_code: ['HTTP_2XX', 'HTTP_3XX'],
    });
    assert.deepEqual(
      [hm.send_interval, hm.receive_timeout, hm.successful_checks, hm.failed_checks],
      [5, 2, 2, 3],
    );
    const refs = () =>
      (
        (sim.objects('pool').get('c1--web-http') as { health_monitor_refs: string[] })
          .health_monitor_refs[0] ?? ''
      )
        .split('/')
        .pop();
    assert.equal(refs(), String(hm.uuid));
    const writes = sim.stats.writes;
    const second = await make();
    assert.equal(await sync(second, pool(check)), 0, 'a restart plans nothing');
    assert.equal(sim.stats.writes, writes, 'and writes nothing');
    await sync(second, pool({ ...check, path: '/ready' }));
    assert.equal(
      (sim.objects('healthmonitor').get('c1--web-http-check') as { http_monitor: { http_request: string } })
        .http_monitor.http_request,
      'GET /ready HTTP/1.0',
    );
    await sync(second, pool());
    assert.equal(sim.objects('healthmonitor').has('c1--web-http-check'), false, 'the monitor went');
    const systemTcp = [
      ...(sim.objects('healthmonitor') as Map<string, { uuid: string; name: string }>).values(),
    ].find((m) => m.name === 'System-TCP')!;
    assert.equal(refs(), systemTcp.uuid);
    assert.equal(await sync(second, pool()), 0);
    // An HTTPS probe: HEALTH_MONITOR_HTTPS with the request in https_monitor (held to the object
    // model by the simulator), read back as the same check, and back to HTTP when the probe is.
    await sync(second, pool({ ...check, tls: true }));
    const hms = sim.objects('healthmonitor').get('c1--web-http-check') as Record<string, unknown>;
    assert.equal(hms.type, 'HEALTH_MONITOR_HTTPS');
    assert.deepEqual(hms.https_monitor, {
      http_request: 'GET /healthz HTTP/1.0',
      http_response_code: ['HTTP_2XX', 'HTTP_3XX'],
    });
    assert.equal(hms.http_monitor, undefined);
    assert.equal(await sync(await make(), pool({ ...check, tls: true })), 0, 'a restart writes nothing');
    await sync(second, pool(check));
    assert.equal(
      (sim.objects('healthmonitor').get('c1--web-http-check') as Record<string, unknown>).type,
      'HEALTH_MONITOR_HTTP',
    );
    // The pool goes: so does its monitor.
    await sync(second, pool(check));
    assert.ok(sim.objects('healthmonitor').has('c1--web-http-check'));
    await second.apply(plan({ pools: [], virtualServices: [] }, await second.observe()).changes);
    assert.equal(sim.objects('pool').has('c1--web-http'), false);
    assert.equal(sim.objects('healthmonitor').has('c1--web-http-check'), false);
  });
});

describe("Avi: members' health read by slices", () => {
  it('health(pools) reads those pools alone, a call each by the uuid it holds, without listing every pool; health() lists them all', async (t) => {
    const sim = new AviSimulator();
    const url = await sim.start();
    const a = aviAdapter(url);
    t.after(async () => {
      await a.close();
      await sim.close();
    });
    const pools = ['a', 'b', 'c'].map((n) =>
      kit.pool(`c1--${n}-http`, [kit.member('192.0.2.1', 61000, { node: 'n1', pod: `default/${n}-1` })], {
        service: `default/${n}`,
        servicePort: 'http',
      }),
    );
    const s = kit.state(pools, []);
    assert.ok((await a.apply(plan(s, await a.observe()).changes)).every((r) => r.ok));
    const before = sim.stats.calls;
    const slice = await a.health(['c1--b-http', 'c1--gone-http']);
    assert.deepEqual([...new Set(slice.map((h) => h.pool))], ['c1--b-http']);
    assert.equal(sim.stats.calls - before, 1, 'one call: the pool read by its uuid, nothing listed');
    const all = await a.health();
    assert.deepEqual([...new Set(all.map((h) => h.pool))].sort(), pools.map((p) => p.name).sort());
  });
});
