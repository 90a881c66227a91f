/**
 * A member made while its Pod was not yet ready, then enabled, on a real HAProxy, every transport.
 * The runtime transport writes a disabled member as `weight 0` in the file; a pool made with one
 * loads it so, and enabling it at runtime must bring its weight back, not only its admin state
 * (`ready` alone left it at weight 0: "draining", serving nothing, until the next reload; seen as
 * a Pod that became Ready just after its pool was made, in GatewayTLSBackendClientCertificate).
 * Then disabled and enabled again at runtime, and across a reload.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { L7VirtualService, LbState } from '../../src/model/types.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';
import { eventually } from '../support/sandbox.ts';
import { converge } from '../support/converge.ts';

const VIP = '127.0.63.1';
const PORT = 18097;
const MEMBER = { ip: '127.0.63.11', port: 18113 };
const POOL = 'e2e--web-80.l7';

function state(enabled: boolean, other = false): LbState {
  const vs: L7VirtualService = {
    kind: 'l7',
    name: 'e2e--ingress-web',
    vip: VIP,
    port: PORT,
    ingressClass: 'npl-lb',
    routes: [{ host: '', path: '/', pathType: 'Prefix', pool: POOL, source: 'default/web', order: 0 }],
    defaultPool: undefined,
  };
  const members = [
    kit.member(MEMBER.ip, MEMBER.port, { pod: 'default/web-0', enabled }),
    // A second member (structure unchanged) forces nothing; `other` adds one to force a reload.
    ...(other ? [kit.member('127.0.63.12', 18114, { pod: 'default/web-1', enabled: false })] : []),
  ];
  return {
    pools: [kit.pool(POOL, members, { health: 'http', service: 'default/web', servicePort: '80' })],
    virtualServices: [vs],
  };
}

const status = async (): Promise<number> => {
  const res = await request(`http://${VIP}:${PORT}/`, { headers: { host: 'web.example' } });
  await res.body.text();
  return res.statusCode;
};
const becomes = (code: number, what: string) =>
  eventually(async () => (await status()) === code, 15_000, what);

for (const tr of TRANSPORTS)
  describe(`a member enabled after its pool was made (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('made disabled, enabled at runtime: served; disabled and enabled again; across a reload', async (t) => {
      assertNoListeners('127.0.63.', [PORT]);
      const server = createServer((_req, res) => res.end('web-0\n'));
      await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
      t.after(() => new Promise<void>((r) => server.close(() => r())));
      const rig = await tr.start(t, 4);
      const adapter = guardOwnership(rig.adapter);

      await converge(adapter, state(false));
      await rig.idle();
      await becomes(503, 'a disabled member serves nothing');
      const reloads = rig.reloads();
      await converge(adapter, state(true));
      await becomes(200, 'the member enabled is served');
      if (tr.name === 'runtime transport')
        assert.equal(rig.reloads(), reloads, 'enabled at runtime, no reload');

      await converge(adapter, state(false));
      await becomes(503, 'disabled again');
      await converge(adapter, state(true));
      await becomes(200, 'enabled again');

      // A reload (a member added) keeps it served, and the new disabled one serves nothing.
      await converge(adapter, state(true, true));
      await rig.idle();
      await becomes(200, 'served across the reload');
      assert.deepEqual(rig.specProblems(), []);
    });
  });
