/**
 * TLS ended on BIG-IP on a TCP listener (a TLSRoute in Terminate mode), through the adapter and
 * the AS3 simulator (which holds each declaration to the schema and its pointers): the Service_TCP's
 * serverTLS a TLS_Server of the listener's certificates, an iRule choosing each route's pool by the
 * server name once the handshake is done (exact names, then the longest wildcard, then the
 * catch-all; no match and no catch-all: rejected), read back exactly; the rule or the profile taken
 * off or edited by hand is written again; re-encrypted to a pool asking TLS (clientTLS and the
 * server-side iRule, as an HTTP service's); back to passthrough, all of it goes; a server name that is not
 * one (input past the validation boundary) is never written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withinApp } from '../../../../adapters/f5/declaration.ts';
import { sniRule } from '../../../../adapters/f5/tls-terminate.ts';
import { type L4VirtualService, type LbState, type Pool, SYSTEM_CA } from '../../../../src/model/types.ts';
import { converge as convergeOn } from '../../../support/converge.ts';
import { f5Certificate, startF5 } from '../../../support/f5-sim.ts';

const pool = (name: string): Pool => ({
  name,
  protocol: 'TCP',
  health: 'tcp',
  service: `infra/${name}`,
  servicePort: '443',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'infra/p', enabled: true }],
});
const POOLS = ['c1--exact', 'c1--wide', 'c1--narrow', 'c1--any'].map(pool);
const terminating = (certs: string[], catchAll = true): L4VirtualService => ({
  kind: 'l4',
  name: 'c1--gw-infra.gw-TLS-443',
  vip: '192.0.2.50',
  port: 443,
  protocol: 'TCP',
  pool: '',
  source: 'Gateway infra/gw',
  certificates: certs,
  sni: [
    ...(catchAll ? [{ host: '', pool: 'c1--any', source: 'TLSRoute infra/any' }] : []),
    { host: '*.example.com', pool: 'c1--wide', source: 'TLSRoute infra/w' },
    { host: '*.a.example.com', pool: 'c1--narrow', source: 'TLSRoute infra/n' },
    { host: 'b.example.com', pool: 'c1--exact', source: 'TLSRoute infra/e' },
  ],
});

describe('F5 TLS termination on a TCP listener (TLSRoute Terminate)', () => {
  for (const as3Version of ['3.56.0', '3.46.0'])
    it(`AS3 ${as3Version}: a TLS_Server of the certificates and an SNI iRule; read back exactly; a hand edit written again; back to passthrough`, async (t) => {
      // 3.56: an application per pool and per service (paths across them); 3.46: one application.
      const at = (pool: string) =>
        as3Version === '3.56.0' ? `/npl_lb_c1/P_${pool}/${pool}` : `/npl_lb_c1/npl_lb/${pool}`;
      const { adapter, objects: app, edit } = await startF5(t, as3Version);
      const a = await f5Certificate('c1--infra.a-tls', 'b.example.com');
      const b = await f5Certificate('c1--infra.w-tls', 'x.example.com');
      const converge = (want: LbState) => convergeOn(adapter, want);
      const vs = terminating([a.name, b.name]);
      const state = (v: L4VirtualService, certs = [a, b]): LbState => ({
        pools: POOLS,
        virtualServices: [v],
        certificates: certs,
      });
      await converge(state(vs));
      const o = app()[vs.name]!;
      assert.equal(o.class, 'Service_TCP');
      assert.equal(o.policyEndpoint, undefined, 'no ClientHello policy: BIG-IP ends the TLS');
      const tls = app()[String(o.serverTLS)]!;
      assert.equal(tls.class, 'TLS_Server');
      assert.deepEqual(
        (tls.certificates as { certificate: string }[]).map((c) => c.certificate.split('/').pop()),
        [a.name, b.name],
        'the default first',
      );
      const rule = app()[`${vs.name}_sni`]!.iRule as string;
      assert.deepEqual(o.iRules, [`${vs.name}_sni`]);
      assert.equal(
        rule,
        [
          'when CLIENTSSL_HANDSHAKE {',
          '  switch -glob -- [string tolower [SSL::sni name]] {',
          `    {b.example.com} { pool ${at('c1--exact')} }`,
          `    {*.a.example.com} { pool ${at('c1--narrow')} }`,
          `    {*.example.com} { pool ${at('c1--wide')} }`,
          `    default { pool ${at('c1--any')} }`,
          '  }',
          '}',
        ].join('\n'),
        'exact, the longest wildcard, then the catch-all',
      );

      // No catch-all: a name no route has is rejected, never sent somewhere.
      await converge(state(terminating([a.name, b.name], false)));
      assert.match(app()[`${vs.name}_sni`]!.iRule as string, /default \{ reject \}/);

      // The rule edited by hand (every name to one pool), then the profile taken off: each read as
      // serving no certificate, so the next pass writes them again.
      await converge(state(vs));
      edit(`${vs.name}_sni`, (r) => void (r.iRule = `when CLIENTSSL_HANDSHAKE { pool ${at('c1--any')} }`));
      assert.deepEqual(
        (await adapter.observe()).owned.virtualServices.map((v) => v.certificates),
        [[]],
      );
      await converge(state(vs));
      edit(vs.name, (o) => delete o.serverTLS);
      assert.deepEqual(
        (await adapter.observe()).owned.virtualServices.map((v) => v.certificates),
        [[]],
      );
      await converge(state(vs));

      // Re-encrypted to a pool whose members ask TLS (a BackendTLSPolicy on the route's backend):
      // the service's clientTLS and the iRule choosing that pool's profile, as an HTTP service's;
      // the iRule taken off by hand is written again.
      const secure: Pool = {
        ...pool('c1--exact'),
        backendTls: { serverName: 'echo.example.com', verifyNames: ['echo.example.com'], ca: SYSTEM_CA },
      };
      const reencrypting: LbState = { ...state(vs), pools: [secure, ...POOLS.slice(1)] };
      await converge(reencrypting);
      const r = app()[vs.name]!;
      assert.ok(r.clientTLS, 'a server-side profile');
      assert.deepEqual(r.iRules, [`${vs.name}_sni`, `${vs.name}_btls`]);
      assert.match(app()[`${vs.name}_btls`]!.iRule as string, /c1--exact" \{ SSL::profile /);
      edit(vs.name, (o) => void (o.iRules = [`${vs.name}_sni`]));
      assert.ok(
        ((await adapter.observe()).drifted ?? []).some((d) => d.name === 'c1--exact'),
        'seen as drifted',
      );
      await converge(reencrypting);

      // Back to passthrough: the ClientHello policy, no profile, no rule, no certificate.
      const passthrough: L4VirtualService = { ...vs, certificates: undefined };
      delete passthrough.certificates;
      await converge(state(passthrough, []));
      const p = app()[vs.name]!;
      assert.equal(p.serverTLS, undefined);
      assert.equal(p.iRules, undefined);
      assert.equal(app()[`${vs.name}_sni`], undefined);
      assert.ok(p.policyEndpoint, 'passed through by the ClientHello policy');
    });

  it('a server name or path that is not one is never written into the rule', () => {
    const paths = withinApp('npl_lb_c1').paths('vs');
    for (const host of [
      'a.example.com} { pool /x } {',
      'a[exec rm].example.com',
      'a b.example.com',
      '$x.example.com',
    ])
      assert.throws(() => sniRule([{ host, pool: 'c1--p', source: 's' }], paths), /not a server name/);
    assert.throws(
      () => sniRule([{ host: 'a.example.com', pool: 'p; reject', source: 's' }], paths),
      /not a BIG-IP path/,
    );
  });
});
