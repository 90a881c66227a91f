/**
 * The chart's GatewayClass, kept by the controller: created once the Gateway API is installed
 * (whenever that is) or whenever the class is gone, with our controllerName; an existing class of
 * the name left as it is; at most one create a minute; none configured, nothing.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { GatewayClassKeeper } from '../../../src/controller/gateway-class.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';

function keeper(name: string | undefined, fail: () => Error | undefined = () => undefined) {
  const created: object[] = [];
  let now = 0;
  const k = new GatewayClassKeeper({
    name,
    controllerName: 'npl-lb.io/gateway-controller',
    create: async (body) => {
      const err = fail();
      if (err) throw err;
      created.push(body);
    },
    log: silentLogger(),
    now: () => now,
  });
  return { k, created, tick: (ms: number) => (now += ms) };
}

it('created once the Gateway API is installed, with our controllerName; again if it is deleted', async () => {
  const { k, created, tick } = keeper('npl-lb');
  await k.keep(false, []);
  assert.equal(created.length, 0, 'not before the CRDs');
  await k.keep(true, []);
  await k.keep(true, []);
  await k.keep(true, [{ metadata: { name: 'npl-lb' } }]);
  assert.deepEqual(created, [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'npl-lb', labels: { 'app.kubernetes.io/managed-by': 'npl-lb' } },
      spec: {
        controllerName: 'npl-lb.io/gateway-controller',
        description: 'Gateways served by npl-lb on NodePortLocal members',
      },
    },
  ]);
  // Deleted (a helm upgrade from a chart that had it as a template): made again.
  tick(61_000);
  await k.keep(true, []);
  assert.equal(created.length, 2);
});

it('an existing class of the name is left alone; none configured makes nothing', async () => {
  const existing = keeper('npl-lb');
  await existing.k.keep(true, [{ metadata: { name: 'npl-lb' } }]);
  assert.equal(existing.created.length, 0);
  const none = keeper(undefined);
  await none.k.keep(true, []);
  assert.equal(none.created.length, 0);
});

it('a failed create is tried again after a minute, not at every pass', async () => {
  let failing = true;
  const { k, created, tick } = keeper('npl-lb', () => (failing ? new Error('unavailable') : undefined));
  await k.keep(true, []);
  tick(30_000);
  failing = false;
  await k.keep(true, []);
  assert.equal(created.length, 0, 'not at every pass');
  tick(31_000);
  await k.keep(true, []);
  assert.equal(created.length, 1);
});
