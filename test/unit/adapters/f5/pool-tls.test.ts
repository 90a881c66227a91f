/**
 * Issue 48, items 1 and 3 on BIG-IP: a pool's TLS to its members (Pool.backendTls) through a
 * change, in both AS3 layouts, on the simulator (which holds every object to the AS3 3.56 schema
 * and every pointer to an object that exists). A TLS pool gets a TLS_Client of its own (the SNI
 * sent, the one name checked, validation on, its own CA_Bundle or BIG-IP's public CAs, the
 * Gateway's client certificate) and its HTTP monitor checks over it; each HTTP virtual server
 * sending to it carries a server-ssl profile and the iRule choosing each pool's own, turning TLS
 * off for a clear-text pool. Through a change: a rotated CA rewrites the bundle in place, TLS taken
 * away leaves clear text and removes the profile, the iRule and the profile on the virtual server;
 * a certificate still presented by a pool is not deleted before the pool lets it go. Bad input and
 * faults: a weighted rule over backends of different TLS is refused before anything is written (and
 * by the source for the route, by name), a hand edit of the virtual server's wiring is repaired.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { poolCaName, poolTlsName, serverTlsRuleName } from '../../../../adapters/f5/pool-tls.ts';
import { semanticProblems } from '../../../../sim/f5/semantics.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import { plan } from '../../../../src/plan/diff.ts';
import {
  type BackendTls,
  type Certificate,
  type L7VirtualService,
  type Pool,
  SYSTEM_CA,
} from '../../../../src/model/types.ts';
import { caBundle } from '../../../../src/source/gateway/backend-tls.ts';
import { modelCertificate, testAuthority } from '../../../support/certs.ts';
import * as kit from '../../../support/model.ts';

type Json = Record<string, unknown>;
const TLS_POOL = 'c1--default-web-443.l7';
const PLAIN_POOL = 'c1--default-api-80.l7';
const VS = 'c1--ingress-npl';

async function pem(name: string): Promise<string> {
  const b = caBundle((await testAuthority(name)).cert);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
}

const pool = (name: string, port: number, tls?: BackendTls): Pool => ({
  ...kit.pool(name, [kit.member('192.0.2.1', port, { node: 'n1', pod: `default/${name}-0` })], {
    health: 'http',
    service: `default/${name}`,
    servicePort: 'web',
  }),
  check: { type: 'http', path: '/healthz', intervalSeconds: 5, timeoutSeconds: 1, rise: 1, fall: 3 },
  ...(tls ? { backendTls: tls } : {}),
});

const vs = (routes: L7VirtualService['routes']): L7VirtualService => ({
  kind: 'l7',
  name: VS,
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl',
  defaultPool: undefined,
  routes,
});
const route = (path: string, p: string): L7VirtualService['routes'][number] => ({
  host: 'a.example',
  path,
  pathType: 'Prefix',
  pool: p,
  source: `default/${p}`,
});

async function setup(
  t: { after: (fn: () => Promise<void>) => void },
  declarations: 'tenant' | 'application',
) {
  const sim = new BigIpSimulator({ as3Version: '3.56.0' });
  const adapter = new F5Adapter({
    owner: 'c1',
    url: await sim.start(),
    username: 'admin',
    password: 'admin',
    taskPollMs: 10,
    declarations,
  });
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  const apply = async (state: {
    pools: Pool[];
    virtualServices: L7VirtualService[];
    certificates?: Certificate[];
  }) => {
    const results = await adapter.apply(plan(state, await adapter.observe()).changes);
    return {
      failed: results
        .filter((r) => !r.ok)
        .map((r) => `${r.change.op} ${r.change.kind} ${r.change.name}: ${r.error?.message}`),
      left: plan(state, await adapter.observe()).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
    };
  };
  /** Every object of ours by name, whatever application holds it. */
  const objects = (): Record<string, Json> =>
    Object.assign(
      {},
      ...Object.values(sim.tenants.get('npl_lb_c1') ?? {})
        .filter((a): a is Json => (a as Json | null)?.class === 'Application')
        .map((a) => a),
    ) as Record<string, Json>;
  return { sim, adapter, apply, objects };
}

for (const layout of ['tenant', 'application'] as const) {
  describe(`BIG-IP pools with TLS to their members (${layout} declarations)`, () => {
    it('a TLS_Client per pool, its monitor over TLS, the virtual server choosing each pool’s TLS; a rotated CA in place; TLS removed, all of it goes', async (t) => {
      const { apply, objects } = await setup(t, layout);
      const [ca, next] = [await pem('first CA'), await pem('next CA')];
      const tls: BackendTls = { serverName: 'web.internal', verifyNames: ['alt.internal'], ca };
      const state = (p: Pool) => ({
        pools: [p, pool(PLAIN_POOL, 61001)],
        virtualServices: [vs([route('/web', p.name), route('/api', PLAIN_POOL)])],
      });
      let r = await apply(state(pool(TLS_POOL, 61000, tls)));
      assert.deepEqual(r, { failed: [], left: [] }, 'applied, observed back with nothing to write');
      let o = objects();
      assert.deepEqual(
        { ...o[poolTlsName(TLS_POOL)], remark: undefined },
        {
          class: 'TLS_Client',
          remark: undefined,
          sendSNI: 'web.internal',
          serverName: 'alt.internal',
          validateCertificate: true,
          trustCA: { use: poolCaName(TLS_POOL) },
        },
      );
      assert.equal(o[poolCaName(TLS_POOL)]!.bundle, ca);
      assert.equal(o[poolTlsName(PLAIN_POOL)], undefined, 'a clear-text pool has no TLS profile');
      assert.deepEqual(
        [o[`${TLS_POOL}_check`]!.monitorType, o[`${TLS_POOL}_check`]!.clientTLS],
        ['https', { use: poolTlsName(TLS_POOL) }],
        'the member check speaks TLS as the traffic does',
      );
      assert.equal(o[`${PLAIN_POOL}_check`]!.monitorType, 'http');
      const service = o[VS]!;
      const path = (app: string, n: string) => `/npl_lb_c1/${layout === 'tenant' ? 'npl_lb' : app}/${n}`;
      assert.equal(
        service.clientTLS,
        layout === 'tenant' ? poolTlsName(TLS_POOL) : path(`P_${TLS_POOL}`, poolTlsName(TLS_POOL)),
      );
      assert.ok((service.iRules as string[]).includes(serverTlsRuleName(VS)));
      assert.equal(
        o[serverTlsRuleName(VS)]!.iRule,
        [
          'when SERVER_CONNECTED {',
          '  switch -- [LB::server pool] {',
          `    "${path(`P_${TLS_POOL}`, TLS_POOL)}" { SSL::profile ${path(`P_${TLS_POOL}`, poolTlsName(TLS_POOL))} }`,
          '    default { SSL::disable serverside }',
          '  }',
          '}',
        ].join('\n'),
        'the TLS pool gets its own profile, any other pool clear text',
      );

      // The CA rotated: the bundle rewritten, nothing else to do after.
      r = await apply(state(pool(TLS_POOL, 61000, { ...tls, ca: next })));
      assert.deepEqual(r, { failed: [], left: [] });
      assert.equal(objects()[poolCaName(TLS_POOL)]!.bundle, next);

      // BIG-IP's public CAs: `generic`, no bundle of ours.
      r = await apply(state(pool(TLS_POOL, 61000, { ...tls, ca: SYSTEM_CA })));
      assert.deepEqual(r, { failed: [], left: [] });
      o = objects();
      assert.equal(o[poolTlsName(TLS_POOL)]!.trustCA, 'generic');
      assert.equal(o[poolCaName(TLS_POOL)], undefined);

      // TLS taken away: clear text, the profile, the rule and the virtual server's profile gone.
      r = await apply(state(pool(TLS_POOL, 61000)));
      assert.deepEqual(r, { failed: [], left: [] });
      o = objects();
      assert.equal(o[poolTlsName(TLS_POOL)], undefined);
      assert.equal(o[serverTlsRuleName(VS)], undefined);
      assert.equal(o[VS]!.clientTLS, undefined);
      assert.equal(o[`${TLS_POOL}_check`]!.monitorType, 'http');
    });

    it('presents the Gateway’s client certificate; the certificate outlives the pool’s use of it', async (t) => {
      const { apply, objects } = await setup(t, layout);
      const ca = await pem('members CA');
      const cert = await modelCertificate('c1--default-gw-client', ['gateway.example']);
      const tls: BackendTls = {
        serverName: 'web.internal',
        verifyNames: ['web.internal'],
        ca,
        clientCertificate: cert.name,
      };
      let r = await apply({
        pools: [pool(TLS_POOL, 61000, tls)],
        virtualServices: [vs([route('/', TLS_POOL)])],
        certificates: [cert],
      });
      assert.deepEqual(r, { failed: [], left: [] });
      const client = objects()[poolTlsName(TLS_POOL)]!.clientCertificate;
      assert.equal(String(client).split('/').pop(), cert.name);
      // The certificate dropped with the pool's use of it, in one pass: the pool lets it go first.
      const { clientCertificate: _presented, ...plain } = tls;
      r = await apply({
        pools: [pool(TLS_POOL, 61000, plain)],
        virtualServices: [vs([route('/', TLS_POOL)])],
      });
      assert.deepEqual(r.failed, []);
      r = await apply({
        pools: [pool(TLS_POOL, 61000, plain)],
        virtualServices: [vs([route('/', TLS_POOL)])],
      });
      assert.deepEqual(r, { failed: [], left: [] }, 'converged');
      assert.equal(objects()[poolTlsName(TLS_POOL)]!.clientCertificate, undefined);
      assert.equal(objects()[cert.name], undefined, 'the certificate is gone');
    });

    it('refuses a weighted rule over backends of different TLS before writing it; a hand-removed iRule is repaired', async (t) => {
      const { sim, apply, objects } = await setup(t, layout);
      const ca = await pem('split CA');
      const tls: BackendTls = { serverName: 'web.internal', verifyNames: ['web.internal'], ca };
      const mixed = vs([
        {
          host: 'a.example',
          path: '/',
          pathType: 'Prefix',
          pool: '',
          backends: [
            { pool: TLS_POOL, weight: 1 },
            { pool: PLAIN_POOL, weight: 1 },
          ],
          source: 'default/split',
        },
      ]);
      let r = await apply({
        pools: [pool(TLS_POOL, 61000, tls), pool(PLAIN_POOL, 61001)],
        virtualServices: [mixed],
      });
      assert.equal(r.failed.length, 1, r.failed.join('; '));
      assert.match(r.failed[0]!, new RegExp(`^create virtualService ${VS}: .*differ in TLS to members`));
      assert.equal(objects()[VS], undefined, 'never written: neither clear text nor TLS to the wrong pool');

      // Both backends over the same TLS: one pool of their members, its own profile chosen.
      const same = {
        pools: [pool(TLS_POOL, 61000, tls), pool(PLAIN_POOL, 61001, tls)],
        virtualServices: [mixed],
      };
      r = await apply(same);
      assert.deepEqual(r, { failed: [], left: [] });
      const rule = String(objects()[serverTlsRuleName(VS)]!.iRule);
      assert.match(
        rule,
        new RegExp(`"/npl_lb_c1/${layout === 'tenant' ? 'npl_lb' : `V_${VS}`}/${VS}_w0"`),
        rule,
      );

      // By hand on the BIG-IP: the virtual server's iRule and profile taken off (clear text to TLS
      // members). The next pass sees it and writes it again.
      for (const app of Object.values(sim.tenants.get('npl_lb_c1')!)) {
        const svc = (app as Json | null)?.[VS] as Json | undefined;
        if (svc?.class !== 'Service_HTTP') continue;
        delete svc.clientTLS;
        svc.iRules = (svc.iRules as string[]).filter((x) => x !== serverTlsRuleName(VS));
      }
      r = await apply(same);
      assert.deepEqual(r, { failed: [], left: [] }, 'repaired, nothing left');
      assert.ok((objects()[VS]!.iRules as string[]).includes(serverTlsRuleName(VS)));
      assert.notEqual(objects()[VS]!.clientTLS, undefined);
    });
  });
}

describe('the BIG-IP simulator holds TLS pointers as AS3 does', () => {
  it('a server-ssl profile, CA bundle or certificate pointed at and not declared is refused; built-in bundles are not pointers', () => {
    const adc = {
      t: {
        class: 'Tenant',
        a: {
          class: 'Application',
          vs: { class: 'Service_HTTP', virtualAddresses: ['192.0.2.1'], clientTLS: 'gone_stls' },
          p_stls: { class: 'TLS_Client', trustCA: { use: 'gone_sca' }, clientCertificate: '/t/C_x/x' },
          q_stls: { class: 'TLS_Client', trustCA: 'generic' },
        },
      },
    };
    assert.deepEqual(semanticProblems(adc, new Set()), [
      '/t/a/vs/clientTLS: contains path to non-existing object "gone_stls"',
      '/t/a/p_stls/trustCA: contains path to non-existing object "gone_sca"',
      '/t/a/p_stls/clientCertificate: contains path to non-existing object "/t/C_x/x"',
    ]);
  });
});
