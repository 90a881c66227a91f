/**
 * Gateway API status writes, with a recording sink (no API server): written where it differs and
 * not again once shown, observedGeneration and a transition time that stays while the status
 * does, other controllers' route parents kept, a route write guarded by its resourceVersion, and
 * a listener whose virtual service the device refused not Programmed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayStatusWriter, type StatusSink } from '../../../src/controller/gateway-status.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import { INFRA, parent, pass, route } from '../source/gateway-support.ts';
import { baseGateways, gatewayClass } from '../source/gateway-support.ts';

class Recorder implements StatusSink {
  readonly writes: { kind: string; key: string; body: Record<string, any> }[] = []; // eslint-disable-line @typescript-eslint/no-explicit-any
  async patch(ref: ResourceRef, namespace: string, name: string, body: object): Promise<void> {
    this.writes.push({ kind: ref.kind, key: `${namespace}/${name}`, body: body as Record<string, unknown> });
  }
}

const routes = () => [
  route(INFRA, 'r', {
    parentRefs: [parent('same-namespace')],
    rules: [{ backendRefs: [{ name: 'infra-backend-v1', port: 8080 }] }],
  }),
];

describe('Gateway API status writer', () => {
  it('writes what differs with observedGeneration; once shown, writes nothing; keeps transition times', async () => {
    const sink = new Recorder();
    const w = new GatewayStatusWriter(
      sink,
      'c1',
      'npl-lb.io/gateway-controller',
      () => '2026-11-24T00:00:00Z',
    );
    const rs = routes();
    const view = { gatewayClasses: [gatewayClass()], gateways: baseGateways(), httpRoutes: rs };
    const result = pass({ routes: rs });
    const n = await w.write(view, result, () => false);
    assert.equal(n, 1 + 4 + 1, 'the class, the four base Gateways, the route');
    const gw = sink.writes.find((x) => x.key === `${INFRA}/same-namespace`)!.body.status;
    assert.deepEqual(gw.addresses, [{ type: 'IPAddress', value: '192.0.2.10' }]);
    assert.ok(gw.conditions.every((c: { observedGeneration: number }) => c.observedGeneration === 1));
    const r = sink.writes.find((x) => x.kind === 'HTTPRoute')!.body;
    assert.equal(
      r.metadata.resourceVersion,
      rs[0]!.metadata.resourceVersion,
      'guarded by its resourceVersion',
    );

    // The objects now show what was written: nothing more to write, a later time changes nothing.
    const shown = {
      gatewayClasses: view.gatewayClasses.map((c) => ({
        ...c,
        status: sink.writes.find((x) => x.kind === 'GatewayClass')!.body.status,
      })),
      gateways: view.gateways.map((g) => ({
        ...g,
        status: sink.writes.find(
          (x) => x.key === `${g.metadata.namespace}/${g.metadata.name}` && x.kind === 'Gateway',
        )!.body.status,
      })),
      httpRoutes: rs.map((x) => ({ ...x, status: r.status })),
    };
    const later = new GatewayStatusWriter(
      sink,
      'c1',
      'npl-lb.io/gateway-controller',
      () => '2026-11-25T00:00:00Z',
    );
    assert.equal(await later.write(shown, result, () => false), 0);
  });

  it('keeps other controllers’ parents; a refused virtual service is not Programmed (Pending)', async () => {
    const sink = new Recorder();
    const w = new GatewayStatusWriter(
      sink,
      'c1',
      'npl-lb.io/gateway-controller',
      () => '2026-11-24T00:00:00Z',
    );
    const rs = routes();
    const theirs = {
      parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'other' },
      controllerName: 'example.com/other',
      conditions: [],
    };
    rs[0]!.status.parents.push(theirs as never);
    const result = pass({ routes: rs });
    await w.write(
      { gateways: baseGateways().slice(0, 1), httpRoutes: rs },
      result,
      (vs) => vs === 'c1--gw-gateway-conformance-infra.same-namespace-HTTP-80',
    );
    const parents = sink.writes.find((x) => x.kind === 'HTTPRoute')!.body.status.parents;
    assert.deepEqual(
      parents.map((p: { controllerName: string }) => p.controllerName),
      ['example.com/other', 'npl-lb.io/gateway-controller'],
    );
    const gw = sink.writes.find((x) => x.kind === 'Gateway')!.body.status;
    const programmed = (cs: { type: string; status: string; reason: string }[]) =>
      cs.find((c) => c.type === 'Programmed');
    assert.deepEqual(programmed(gw.listeners[0].conditions)?.reason, 'Pending');
    assert.deepEqual(programmed(gw.conditions)?.status, 'False');
  });

  it('an allocated VIP (auto:) is published as the address the device gave it, and not before', async () => {
    const rs = routes();
    const view = { gatewayClasses: [gatewayClass()], gateways: baseGateways(), httpRoutes: rs };
    const result = pass({
      routes: rs,
      vips: { [`${INFRA}/same-namespace`]: `auto:gateway/${INFRA}/same-namespace` },
    });
    const address = (allocated: Map<string, string>) => (vip: string) =>
      vip.startsWith('auto:') ? allocated.get(vip.slice(5)) : vip;
    const before = new Recorder();
    await new GatewayStatusWriter(before, 'c1', 'npl-lb.io/gateway-controller').write(
      view,
      result,
      () => false,
      address(new Map()),
    );
    assert.deepEqual(
      before.writes.find((x) => x.key === `${INFRA}/same-namespace`)!.body.status.addresses,
      [],
    );
    const after = new Recorder();
    await new GatewayStatusWriter(after, 'c1', 'npl-lb.io/gateway-controller').write(
      view,
      result,
      () => false,
      address(new Map([[`gateway/${INFRA}/same-namespace`, '198.51.100.9']])),
    );
    assert.deepEqual(after.writes.find((x) => x.key === `${INFRA}/same-namespace`)!.body.status.addresses, [
      { type: 'IPAddress', value: '198.51.100.9' },
    ]);
  });
});
