/**
 * WebSocket on BIG-IP: every HTTP service of ours carries BIG-IP's own WebSocket profile
 * (`profileWebSocket: {bigip: /Common/websocket}`), so an upgrade on any route is passed and the
 * connection tunnelled (HTTPRouteBackendProtocolWebSocket). Through the adapter and the AS3
 * simulator (the schema holds the pointer's shape): written, read back with nothing to do; taken
 * off or swapped for another profile by hand, the service is seen drifted and written again.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { WEBSOCKET_PROFILE } from '../../../../adapters/f5/declaration.ts';
import { plan } from '../../../../src/plan/diff.ts';
import type { L7VirtualService, LbState, Pool } from '../../../../src/model/types.ts';
import { converge as convergeOn } from '../../../support/converge.ts';
import { startF5 } from '../../../support/f5-sim.ts';

type Json = Record<string, unknown>;

const pool: Pool = {
  name: 'c1--default-chat-80.l7',
  protocol: 'TCP',
  health: 'http',
  service: 'default/chat',
  servicePort: 'ws',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/chat-0', enabled: true }],
};
const vs: L7VirtualService = {
  kind: 'l7',
  name: 'c1--gw-default.gw-HTTP-80',
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl',
  defaultPool: undefined,
  routes: [
    {
      host: 'chat.example.com',
      path: '/',
      pathType: 'Prefix',
      pool: pool.name,
      source: 'HTTPRoute default/chat',
    },
  ],
};
const STATE: LbState = { pools: [pool], virtualServices: [vs], certificates: [] };

it('BIG-IP: the WebSocket profile on every HTTP service, read back; taken off or swapped by hand, written again', async (t) => {
  assert.equal(F5_CAPABILITIES.http?.webSocket, true);
  const { adapter, objects, edit: editObject } = await startF5(t);
  const converge = () => convergeOn(adapter, STATE);
  const service = () => objects()[vs.name]!;
  const edit = (change: (o: Json) => void) => editObject(vs.name, change);
  await converge();
  assert.deepEqual(service().profileWebSocket, { bigip: WEBSOCKET_PROFILE });
  for (const byHand of [
    (o: Json) => delete o.profileWebSocket,
    (o: Json) => void (o.profileWebSocket = { bigip: '/Common/my-websocket' }),
  ]) {
    edit(byHand);
    const changes = plan(STATE, await adapter.observe()).changes;
    assert.deepEqual(
      changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
      [`update virtualService ${vs.name}`],
      'the service is written again',
    );
    await converge();
    assert.deepEqual(service().profileWebSocket, { bigip: WEBSOCKET_PROFILE });
  }
});
