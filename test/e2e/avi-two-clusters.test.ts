/**
 * Several clusters, one Service Engine group, as NodePortLocal makes possible: two controllers with
 * different `clusterName`s, the same `serviceEngineGroup`, identical namespace and Service names
 * (and Ingress), on one Avi Controller simulator. Neither clashes with the other, neither's pass
 * updates or deletes the other's objects, a controller that starts from empty (its first sync)
 * leaves the other's objects as they were, and a `deleteConfig` of one removes its own alone.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { deleteOwnedConfig } from '../../src/controller/delete-config.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { aviAdapter, runController, webCluster } from '../support/lb-fixtures.ts';
import { eventually } from '../support/sandbox.ts';

type Stored = Record<string, unknown> & { name: string; _last_modified: string };

const adapterFor = (url: string, owner: string) => aviAdapter(url, { owner, seGroup: 'Default-Group' });

const controller = (t: TestContext, kc: KubeConfig, url: string, name: string, cidr: string) =>
  runController(t, kc, adapterFor(url, name), name, cidr);

describe('Avi: two clusters sharing one Service Engine group', () => {
  it('identical names never clash; neither touches the other, starting from empty or deleting its config', async (t) => {
    const sim = new AviSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const one = await webCluster(t, '127.0.12.1', 41001);
    const two = await webCluster(t, '127.0.12.2', 41002);

    /** Every object on the controller by type/name, with who made it and when it was last written. */
    const snapshot = () => {
      const out = new Map<string, { createdBy: unknown; at: string }>();
      for (const type of ['pool', 'poolgroup', 'vsvip', 'httppolicyset', 'virtualservice']) {
        for (const [n, o] of sim.objects(type) as Map<string, Stored>)
          out.set(`${type}/${n}`, { createdBy: o.created_by, at: o._last_modified });
      }
      return out;
    };
    const of = (s: Map<string, { createdBy: unknown }>, owner: string) =>
      [...s].filter(([, v]) => v.createdBy === `npl-lb-${owner}`).map(([k]) => k);

    const first = await controller(t, one.kc, url, 'c1', '192.0.2.0/28');
    const has = (type: string, name: string) => () => sim.objects(type).has(name);
    await eventually(has('virtualservice', 'c1--default-web-TCP-80'), 10_000, 'c1 L4 virtual service');
    await eventually(has('virtualservice', 'c1--ingress-npl'), 10_000, 'c1 L7 virtual service');
    await first.ctl.settled();
    const c1Only = snapshot();
    const c1Objects = of(c1Only, 'c1');
    assert.ok(c1Objects.length >= 5, c1Objects.join(', '));

    // The second cluster starts from empty: its first sync creates its own and leaves c1's alone.
    const second = await controller(t, two.kc, url, 'c2', '192.0.2.16/28');
    await eventually(has('virtualservice', 'c2--default-web-TCP-80'), 10_000, 'c2 L4 virtual service');
    await eventually(has('virtualservice', 'c2--ingress-npl'), 10_000, 'c2 L7 virtual service');
    await second.ctl.settled();
    const both = snapshot();
    for (const k of c1Objects) assert.deepEqual(both.get(k), c1Only.get(k), `${k} untouched by c2`);
    const c2Objects = of(both, 'c2');
    assert.equal(c2Objects.length, c1Objects.length, 'the same shape, under its own names');
    for (const k of c2Objects) assert.ok(k.includes('c2--') || k.includes('c2-'), k);
    // Both serve on the same SE group; each pool names its own node.
    const servers = (n: string) =>
      ((sim.objects('pool').get(n) as Stored).servers as { ip: { addr: string }; port: number }[]).map(
        (s) => `${s.ip.addr}:${s.port}`,
      );
    assert.deepEqual(servers('c1--default-web-http'), ['127.0.12.1:41001']);
    assert.deepEqual(servers('c2--default-web-http'), ['127.0.12.2:41002']);

    // c1 scales while c2 runs: c2's objects are not written.
    await one.c.nplPod('web-2', { node: 'n1', entries: [{ nodeIP: '127.0.12.1', nodePort: 41003 }] });
    await eventually(() => servers('c1--default-web-http').length === 2, 10_000, 'c1 scaled');
    await first.ctl.settled();
    const after = snapshot();
    for (const k of c2Objects) assert.deepEqual(after.get(k), both.get(k), `${k} untouched by c1's pass`);

    // deleteConfig of c2 (its controller stopped first): c2's objects go, c1's stay as they were.
    await second.stop();
    const adapter = adapterFor(url, 'c2');
    t.after(() => adapter.close());
    const r = await deleteOwnedConfig(adapter, createLogger({ name: 'test', level: 'silent' }), {
      pauseMs: 50,
    });
    // Counted in the model's objects (pools, virtual services); their Avi children go with them.
    assert.ok(r.deleted >= 2, `${r.deleted}`);
    const left = snapshot();
    assert.deepEqual(of(left, 'c2'), []);
    for (const k of c1Objects)
      assert.deepEqual(left.get(k), after.get(k), `${k} untouched by c2's deleteConfig`);
  });
});
