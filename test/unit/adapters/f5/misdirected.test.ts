/**
 * Misdirected requests on BIG-IP (GatewayHTTPSListenerDetectMisdirectedRequests): an HTTPS
 * service with its listeners' hostnames carries an iRule answering 421 where the handshake's
 * server name and the Host select different listeners. The rule's switches are evaluated here as
 * Tcl's `switch -glob` would (first match; `*` any characters) and agree with the model's
 * listenerOf for every pair of names in a table; through the adapter and the AS3 simulator it is
 * written and read back, taken off or edited by hand it is written again, and a hostname that is
 * not one is never written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { misdirectedRule } from '../../../../adapters/f5/misdirected.ts';
import { listenerOf } from '../../../../src/model/http-match.ts';
import { plan } from '../../../../src/plan/diff.ts';
import type { L7VirtualService, LbState, Pool } from '../../../../src/model/types.ts';
import { converge as convergeOn } from '../../../support/converge.ts';
import { f5Certificate, startF5 } from '../../../support/f5-sim.ts';

/** The listener index each switch of the rule picks for `name` (Tcl `switch -glob`, first match). */
function picks(rule: string, name: string): string[] {
  const out: string[] = [];
  for (const block of rule.split('switch -glob -- ').slice(1)) {
    const cases = [...block.matchAll(/^\s+(\{([^}]*)\}|default) \{ set \w+ (\w+) \}$/gm)];
    const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
    const hit = cases.find((c) => c[1] === 'default' || glob(c[2]!).test(name));
    out.push(hit![3]!);
  }
  return out;
}

describe('BIG-IP: misdirected requests answered 421', () => {
  it("the rule's listener choice is the model's, for exact, wildcard and catch-all listeners", () => {
    for (const hosts of [
      ['a.example.com', '*.example.com', ''],
      ['*.example.com', '*.b.example.com'],
      ['a.example.com', 'b.example.com'],
    ]) {
      const rule = misdirectedRule(hosts);
      const index = (h: string | undefined) => (h === undefined ? 'none' : `l${hosts.indexOf(h)}`);
      for (const name of [
        'a.example.com',
        'x.example.com',
        'x.b.example.com',
        'b.example.com',
        'other.test',
        'example.com',
      ]) {
        const [sni, host] = picks(rule, name);
        assert.equal(sni, index(listenerOf(hosts, name)), `${hosts.join(',')}: ${name}`);
        assert.equal(host, sni, 'both switches choose alike');
      }
    }
    assert.match(
      misdirectedRule(['a.example.com']),
      /if \{ \$npl_lsni ne \$npl_lhost \} \{ HTTP::respond 421/,
    );
  });

  it('a hostname that is not one is never written', () => {
    for (const bad of ['a.example.com} { set npl_lsni l0 } {', 'a[exec x].example.com', 'A B', '$x.com'])
      assert.throws(() => misdirectedRule([bad]), /not a listener hostname/);
  });

  it('through the adapter: written, read back, a hand edit written again', async (t) => {
    assert.equal(F5_CAPABILITIES.http?.misdirectedRequests, true);
    const { adapter, objects, edit } = await startF5(t);
    const cert = await f5Certificate('c1--infra.a-tls', 'a.example.com');
    const pool: Pool = {
      name: 'c1--infra-web-80.l7',
      protocol: 'TCP',
      health: 'http',
      service: 'infra/web',
      servicePort: '80',
      members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'infra/web-0', enabled: true }],
    };
    const vs: L7VirtualService = {
      kind: 'l7',
      name: 'c1--gw-infra.gw-HTTPS-443',
      vip: '192.0.2.20',
      port: 443,
      ingressClass: 'gw',
      protocol: 'HTTPS',
      certificates: [cert.name],
      listenerHosts: ['*.example.com', 'a.example.com'],
      defaultPool: undefined,
      routes: [
        {
          host: 'a.example.com',
          path: '/',
          pathType: 'Prefix',
          pool: pool.name,
          source: 'HTTPRoute infra/a',
        },
      ],
    };
    const state: LbState = { pools: [pool], virtualServices: [vs], certificates: [cert] };
    const converge = () => convergeOn(adapter, state);
    await converge();
    const rule = `${vs.name}_421`;
    assert.deepEqual(objects()[vs.name]!.iRules, [rule]);
    assert.equal(objects()[rule]!.iRule, misdirectedRule(vs.listenerHosts!));
    for (const byHand of [
      () => edit(vs.name, (o) => delete o.iRules),
      () => edit(rule, (r) => void (r.iRule = 'when HTTP_REQUEST { }')),
    ]) {
      byHand();
      assert.deepEqual(
        plan(state, await adapter.observe()).changes.map((ch) => `${ch.op} ${ch.kind} ${ch.name}`),
        [`update virtualService ${vs.name}`],
      );
      await converge();
      assert.equal(objects()[rule]!.iRule, misdirectedRule(vs.listenerHosts!));
    }
    // No listener hosts (an HTTP service, or checks not asked): no rule.
    const { listenerHosts: _hosts, ...unchecked } = vs;
    const plain: LbState = { ...state, virtualServices: [unchecked] };
    await adapter.apply(plan(plain, await adapter.observe()).changes);
    assert.equal(objects()[rule], undefined);
    assert.equal(objects()[vs.name]!.iRules, undefined);
  });
});
