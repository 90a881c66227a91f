/**
 * The part of the adapter contract about what a pool and a virtual service carry beyond members
 * and routes: the BackendPolicy fields (algorithm, persistence, connection limit, ramp), client
 * address filters and member checks. Each adapter carries what it declares in its Capabilities,
 * reads it back as applied, writes nothing after a restart, and changes it in place; what it does
 * not declare is skipped with the reason (the core never sends it: capabilities.ts).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import type {
  ClientValidation,
  L4VirtualService,
  L7VirtualService,
  LbState,
  Pool,
  PoolPolicy,
  VirtualService,
} from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import {
  allApplied,
  certificate,
  type ContractHarness,
  httpsVs,
  l4,
  pool,
  state,
  sync,
} from './adapter-contract.ts';
import { modelCertificate, testAuthority, caPem } from '../support/certs.ts';

/**
 * Applies `s`, checks that it reads back as applied and that a new adapter on the device (a
 * restart) has nothing to write; returns that adapter.
 */
async function throughRestart(
  h: ContractHarness,
  first: LoadBalancerAdapter,
  s: LbState,
): Promise<LoadBalancerAdapter> {
  allApplied(await sync(first, s));
  assert.deepEqual(plan(s, await first.observe()).changes, [], 'observed as applied');
  await first.close();
  const second = await h.adapter('c1');
  assert.deepEqual(plan(s, await second.observe()).changes, [], 'nothing to write after a restart');
  return second;
}

export function policyContract(guarded: () => Promise<ContractHarness>): void {
  it("IPv6 beside IPv4 (issue 34): a dual-stack Service's IPv6 virtual service and pool of IPv6 members, applied, observed back after a restart with nothing to write, moved in place", async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().ipv6) {
      t.skip('declares no IPv6');
      return;
    }
    // Documentation addresses (RFC 3849): nothing is sent to them (no checks in the contract).
    const v4 = pool('c1--default-web-http', [['192.0.2.1', 61000, 'n1']]);
    const v6 = pool('c1--default-web-http_v6', [
      ['2001:db8::1', 61000, 'n1'],
      ['2001:db8::2', 61001, 'n2'],
    ]);
    const s = state(
      [v4, v6],
      [l4('c1--default-web-TCP-80', v4.name), l4('c1--default-web-TCP-80_v6', v6.name, '2001:db8::10')],
    );
    const second = await throughRestart(h, first, s);
    // A member moves (its node's address changed) and the VIP moves: changed in place, read back.
    const moved = state(
      [v4, { ...v6, members: [v6.members[0]!, { ...v6.members[1]!, address: '2001:db8::3' }] }],
      [l4('c1--default-web-TCP-80', v4.name), l4('c1--default-web-TCP-80_v6', v6.name, '2001:db8::11')],
    );
    allApplied(await sync(second, moved));
    assert.deepEqual(plan(moved, await second.observe()).changes, [], 'observed as moved');
  });

  it('carries every algorithm, persistence, connection limit, ramp, member timeout and retry count it declares: applied, observed back after a restart with nothing to write, changed in place', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    const caps = first.capabilities();
    const algorithms = (caps.algorithms ?? []).filter((a) => a !== 'RoundRobin');
    const persistence = caps.persistence ?? [];
    // A limit and a ramp of whole steps (Avi counts minutes) on an L4 pool of its own.
    const limits: Pool[] = [];
    if (caps.maxConnections || caps.slowStart || caps.timeouts || caps.retries === 'any')
      limits.push({
        ...pool('c1--default-web-7000', [['192.0.2.3', 61002, 'n3']]),
        ...(caps.maxConnections ? { maxConnections: 25 } : {}),
        ...(caps.slowStart ? { slowStartSeconds: 2 * caps.slowStart.stepSeconds } : {}),
        ...(caps.timeouts?.connect ? { connectTimeoutSeconds: 3 } : {}),
        ...(caps.timeouts?.server ? { serverTimeoutSeconds: 90 } : {}),
        // No retries at all (0), said as such, not as the device's default.
        ...(caps.retries === 'any' ? { retries: 0 } : {}),
      });
    if (algorithms.length === 0 && persistence.length === 0 && limits.length === 0) {
      t.skip('declares round robin only and no persistence');
      return;
    }
    const members: [string, number, string][] = [
      ['192.0.2.1', 61000, 'n1'],
      ['192.0.2.2', 61001, 'n2'],
    ];
    // One L4 pool per algorithm (SourceIP persistence on the first; a keyed hash, of a header or
    // a cookie, on an HTTP pool behind an L7 virtual service), one HTTP pool with a cookie.
    const keyed = (a: string) => a === 'HeaderHash' || a === 'CookieHash';
    const pools: Pool[] = algorithms.map((algorithm, i) => ({
      ...pool(`c1--default-web-${8000 + i}${keyed(algorithm) ? '.l7' : ''}`, members),
      algorithm,
      ...(keyed(algorithm)
        ? { health: 'http' as const, hashKey: algorithm === 'HeaderHash' ? 'x-user' : 'session_id' }
        : {}),
      ...(i === 0 && persistence.includes('SourceIP') ? { persistence: 'SourceIP' as const } : {}),
    }));
    const vss: VirtualService[] = pools.map((p, i) =>
      p.health === 'http'
        ? {
            kind: 'l7',
            name: `c1--ingress-hash${i}`,
            vip: '192.0.2.21',
            port: 8100 + i,
            ingressClass: `hash${i}`,
            defaultPool: undefined,
            routes: [{ host: 'h.example', path: '/', pathType: 'Prefix', pool: p.name, source: 'default/h' }],
          }
        : l4(`c1--default-web-TCP-${8000 + i}`, p.name),
    );
    for (const p of limits) {
      pools.push(p);
      vss.push(l4('c1--default-web-TCP-7000', p.name));
    }
    if (persistence.includes('Cookie')) {
      const web: Pool = {
        ...pool('c1--default-web-80.l7', members),
        health: 'http',
        persistence: 'Cookie',
        ...(caps.retries ? { retries: 2 } : {}),
        // A route's retries where declared (an HTTPRoute rule's retry).
        ...(caps.http?.retry ? { retryStatuses: [502, 503] } : {}),
      };
      pools.push(web);
      vss.push({
        kind: 'l7',
        name: 'c1--ingress-npl',
        vip: '192.0.2.20',
        port: 80,
        ingressClass: 'npl',
        defaultPool: undefined,
        routes: [{ host: 'a.example', path: '/', pathType: 'Prefix', pool: web.name, source: 'default/ing' }],
      });
    }
    const s = state(pools, vss);
    const second = await throughRestart(h, first, s);
    // Back to round robin and no persistence: one update per pool, observed as such.
    const plain = state(
      pools.map(
        ({
          algorithm: _a,
          hashKey: _k,
          persistence: _p,
          maxConnections: _m,
          slowStartSeconds: _s,
          connectTimeoutSeconds: _c,
          serverTimeoutSeconds: _t,
          retries: _r,
          retryStatuses: _rs,
          ...p
        }) => p,
      ),
      vss,
    );
    const back = await sync(second, plain);
    assert.deepEqual(back.failed, []);
    assert.deepEqual(
      back.changes.map((c) => `${c.op} ${c.kind} ${c.name}`).sort(),
      pools.map((p) => `update pool ${p.name}`).sort(),
    );
    assert.deepEqual(plan(plain, await second.observe()).changes, []);
  });

  it('carries HTTP/2 if it declares it (GRPCRoute, h2c members): applied, observed back after a restart with nothing to write, back to HTTP/1.1 in place; refused by name where it does not', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    const h2: Pool = {
      ...pool('c1--default-grpc-8080.h2', [['192.0.2.1', 61000, 'n1']]),
      health: 'http',
      backendProtocol: 'h2c',
    };
    const vs = (http2: boolean, protocol?: 'HTTPS'): VirtualService => ({
      kind: 'l7',
      name: `c1--gw-grpc${protocol ? '-https' : ''}`,
      vip: '192.0.2.30',
      port: protocol ? 443 : 80,
      ingressClass: 'npl-lb',
      defaultPool: undefined,
      routes: [
        {
          host: '',
          path: '/echo.Echo',
          pathType: 'Prefix',
          pool: h2.name,
          source: 'GRPCRoute default/g',
          order: 0,
        },
      ],
      ...(http2 ? { http2: true as const } : {}),
    });
    if (!first.capabilities().http?.http2) {
      // The core never sends it (the source takes no GRPCRoute there): if it came, it is refused.
      const results = await first.apply(plan(state([h2], [vs(true)]), await first.observe()).changes);
      const failed = results.filter((r) => !r.ok);
      assert.equal(
        failed.length,
        2,
        'the HTTP/2 pool and virtual service are refused, never served as HTTP/1.1',
      );
      assert.ok(
        failed.every((f) => f.error?.terminal && /HTTP\/2/.test(f.error.message)),
        JSON.stringify(failed),
      );
      return;
    }
    const s = state([h2], [vs(true)]);
    const second = await throughRestart(h, first, s);
    const { backendProtocol: _b, ...plainPool } = h2;
    const plain = state([plainPool], [vs(false)]);
    const back = await sync(second, plain);
    assert.deepEqual(back.failed, []);
    assert.deepEqual(back.changes.map((c) => `${c.op} ${c.kind}`).sort(), [
      'update pool',
      'update virtualService',
    ]);
    assert.deepEqual(plan(plain, await second.observe()).changes, []);
  });

  it('carries client certificate validation if it declares it (a Gateway’s spec.tls.frontend): applied, observed back after a restart with nothing to write, the fallback and a new CA in place, removed; refused by name where it does not', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().certificates) {
      t.skip('no certificates: no HTTPS virtual service to ask clients at');
      return;
    }
    const [cert, one, two] = await Promise.all([
      certificate('c1--default-mtls-tls'),
      testAuthority('clients one'),
      testAuthority('clients two'),
    ]);
    const web = pool('c1--default-web-80.l7', [['192.0.2.1', 61000, 'n1']]);
    const at = (client?: ClientValidation): LbState => {
      const vs = httpsVs('c1--gw-mtls-https', web.name, [cert.name]) as L7VirtualService;
      return {
        pools: [web],
        virtualServices: [{ ...vs, defaultPool: web.name, ...(client ? { clientValidation: client } : {}) }],
        certificates: [cert],
      };
    };
    const required = at({ ca: caPem(one.cert), insecureFallback: false });
    if (!first.capabilities().http?.clientValidation) {
      // The core never sends it (the listener is refused at the source): if it came, it is refused.
      const r = await sync(first, required);
      assert.deepEqual(r.failed, ['create virtualService c1--gw-mtls-https'], r.why.join('; '));
      assert.match(r.why.join(), /client certificate validation is not served/);
      return;
    }
    const second = await throughRestart(h, first, required);
    // The verified client's subject to the members, where it declares it (else refused by name).
    const subject = at({ ca: caPem(one.cert), insecureFallback: true, subjectHeader: 'X-Client-Subject' });
    if (!first.capabilities().http?.clientSubjectHeader) {
      const r = await sync(second, subject);
      assert.deepEqual(r.failed, ['update virtualService c1--gw-mtls-https'], r.why.join('; '));
      assert.match(r.why.join(), /subject is not sent to members/);
    }
    for (const next of [
      at({ ca: caPem(one.cert), insecureFallback: true }),
      ...(first.capabilities().http?.clientSubjectHeader ? [subject] : []),
      at({ ca: caPem(`${one.cert}${two.cert}`), insecureFallback: false }),
      at(),
    ]) {
      const r = await sync(second, next);
      allApplied(r);
      assert.deepEqual(
        r.changes.map((c) => `${c.op} ${c.kind}`),
        ['update virtualService'],
      );
      assert.deepEqual(plan(next, await second.observe()).changes, [], 'observed as applied');
    }
  });

  it('carries client certificates for some hosts alone if it declares it (an Ingress’s npl-lb.io/client-ca): applied, observed back after a restart with nothing to write, a new CA and another host in place, removed; refused by name where it does not', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().certificates) {
      t.skip('no certificates: no HTTPS virtual service to ask clients at');
      return;
    }
    const [secure, open, one, two] = await Promise.all([
      modelCertificate('c1--shop.secure-tls', ['secure.example.com']),
      modelCertificate('c1--shop.open-tls', ['open.example.com']),
      testAuthority('clients one'),
      testAuthority('clients two'),
    ]);
    const web = pool('c1--shop-web-80.l7', [['192.0.2.1', 61000, 'n1']]);
    const route = (host: string) => ({
      host,
      path: '/',
      pathType: 'Prefix' as const,
      pool: web.name,
      source: `Ingress shop/${host}`,
    });
    const at = (asked?: { host: string; ca: string }[]): LbState => {
      const vs = httpsVs('c1--ingress-npl_https', web.name, [secure.name, open.name]) as L7VirtualService;
      return {
        pools: [web],
        virtualServices: [
          {
            ...vs,
            routes: [route('open.example.com'), route('secure.example.com')],
            ...(asked
              ? {
                  hostClientValidation: asked.map((a) => ({
                    host: a.host,
                    certificate: a.host.startsWith('secure') ? secure.name : open.name,
                    ca: caPem(a.ca),
                  })),
                  listenerHosts: ['', 'open.example.com', 'secure.example.com'],
                }
              : {}),
          },
        ],
        certificates: [secure, open],
      };
    };
    const asked = at([{ host: 'secure.example.com', ca: one.cert }]);
    const caps = first.capabilities().http;
    if (!caps?.clientValidationByHost || !caps.misdirectedRequests) {
      // The core never sends it (the Ingress is refused at the source): if it came, it is refused.
      const r = await sync(first, asked);
      assert.deepEqual(r.failed, ['create virtualService c1--ingress-npl_https'], r.why.join('; '));
      assert.match(r.why.join(), /client certificates for some hosts alone are not served/);
      return;
    }
    const second = await throughRestart(h, first, asked);
    for (const next of [
      at([{ host: 'secure.example.com', ca: `${one.cert}${two.cert}` }]),
      at([
        { host: 'open.example.com', ca: `${one.cert}${two.cert}` },
        { host: 'secure.example.com', ca: `${one.cert}${two.cert}` },
      ]),
      at(),
    ]) {
      const r = await sync(second, next);
      allApplied(r);
      assert.deepEqual(
        r.changes.map((c) => `${c.op} ${c.kind}`),
        ['update virtualService'],
      );
      assert.deepEqual(plan(next, await second.observe()).changes, [], 'observed as applied');
    }
  });

  it('carries TLS termination on a TLS port if it declares it (a TLS listener in Terminate mode): applied, observed back after a restart with nothing to write, a certificate added in place, back to passthrough; refused by name where it does not', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().certificates || !first.capabilities().tlsPassthrough) {
      t.skip('no certificates or TLS ports');
      return;
    }
    const [one, two] = await Promise.all([
      certificate('c1--infra-tls-one'),
      certificate('c1--infra-tls-two'),
    ]);
    const echo = pool('c1--infra-tcp-backend-3000', [['192.0.2.1', 61000, 'n1']]);
    const at = (certs: string[] | undefined): LbState => ({
      pools: [echo],
      virtualServices: [
        {
          kind: 'l4',
          name: 'c1--gw-infra.terminate-TLS-8443',
          vip: '192.0.2.51',
          port: 8443,
          protocol: 'TCP',
          pool: '',
          source: 'Gateway infra/terminate',
          sni: [{ host: 'tls.example.com', pool: echo.name, source: 'TLSRoute infra/terminated' }],
          ...(certs ? { certificates: certs } : {}),
        },
      ],
      certificates: [one, two].filter((c) => certs?.includes(c.name)),
    });
    const terminated = at([one.name]);
    if (!first.capabilities().tlsTerminate) {
      // The core never sends it (the listener is refused at the source): if it came, it is refused.
      const r = await sync(first, terminated);
      assert.deepEqual(r.failed, ['create virtualService c1--gw-infra.terminate-TLS-8443'], r.why.join('; '));
      assert.match(r.why.join(), /TLS termination on a TLS listener is not served/);
      return;
    }
    const second = await throughRestart(h, first, terminated);
    for (const next of [at([one.name, two.name]), at(undefined)]) {
      const r = await sync(second, next);
      allApplied(r);
      assert.ok(
        r.changes.some((c) => c.kind === 'virtualService' && c.op === 'update'),
        r.changes.map((c) => `${c.op} ${c.kind} ${c.name}`).join(', '),
      );
      assert.deepEqual(plan(next, await second.observe()).changes, [], 'observed as applied');
    }
  });

  it('carries an HTTPS port’s listener hostnames if it detects misdirected requests: applied (with HTTP/2 where declared), observed back after a restart with nothing to write, changed in place', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().http?.misdirectedRequests) {
      t.skip('no misdirected-request detection declared: the source never sends listener hostnames');
      return;
    }
    const cert = await certificate('c1--default-misdirected-tls');
    const web = pool('c1--default-web-80.l7', [['192.0.2.1', 61000, 'n1']]);
    const at = (listenerHosts: string[]): LbState => {
      const vs = httpsVs('c1--gw-misdirected-https', web.name, [cert.name]) as L7VirtualService;
      const routes = vs.routes.map((r, i) => ({ ...r, order: i }));
      return {
        pools: [web],
        // HTTP/2 from clients, which the detection makes safe, where the adapter speaks it.
        virtualServices: [
          {
            ...vs,
            routes,
            ...(first.capabilities().http?.http2 ? { http2: true as const } : {}),
            listenerHosts,
          },
        ],
        certificates: [cert],
      };
    };
    const second = await throughRestart(h, first, at(['', '*.example.com', 'a.example.com']));
    const next = at(['a.example.com']);
    const r = await sync(second, next);
    allApplied(r);
    assert.deepEqual(
      r.changes.map((c) => `${c.op} ${c.kind}`),
      ['update virtualService'],
    );
    assert.deepEqual(plan(next, await second.observe()).changes, [], 'observed as applied');
  });

  for (const [field, value] of [
    ['serviceEngineGroup', 'Default-Group'],
    ['partition', 'team_a'],
    ['frontend', { maxConnections: 500, clientTimeoutSeconds: 30 }],
  ] as const) {
    it(`carries a placement if it applies LoadBalancerParameters' ${field}: applied, observed back after a restart with nothing to write; refused by name where it does not`, async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const first = await h.adapter('c1');
      const p = pool('c1--default-web-80', [['192.0.2.1', 61000, 'n1']]);
      const placed: VirtualService = {
        ...l4('c1--default-web-TCP-80', p.name),
        placement: { [field]: value },
      };
      const s = state([p], [placed]);
      if (!first.capabilities().parameters?.applies.includes(field)) {
        const results = await first.apply(plan(s, await first.observe()).changes);
        const refused = results.filter((r) => !r.ok);
        assert.deepEqual(
          refused.map((r) => r.change.name),
          ['c1--default-web-TCP-80'],
          'the placed virtual service is refused, never run somewhere else',
        );
        assert.ok(refused[0]!.error?.terminal && /LoadBalancerParameters/.test(refused[0]!.error.message));
        return;
      }
      await throughRestart(h, first, s);
    });
  }

  it('carries client address filters if it declares them: applied, observed back after a restart with nothing to write', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    if (!first.capabilities().sourceRanges) {
      t.skip('declares no client address filters (such virtual services are never sent to it)');
      return;
    }
    const p = pool('c1--default-web-80', [['192.0.2.1', 61000, 'n1']]);
    const filtered = (name: string, port: number, sourceRanges: string[]): L4VirtualService => ({
      kind: 'l4',
      name,
      vip: '192.0.2.10',
      port,
      protocol: 'TCP',
      pool: p.name,
      source: 'default/web',
      sourceRanges,
    });
    const s = state(
      [p],
      [
        filtered('c1--default-web-TCP-80', 80, ['10.0.0.0/8', '192.0.2.128/25']),
        // No range left (IPv6 ones only): every client refused.
        filtered('c1--default-web-TCP-81', 81, []),
      ],
    );
    const second = await throughRestart(h, first, s);
    // The filter lifted: one update each, observed as such.
    const open = state(
      [p],
      [filtered('c1--default-web-TCP-80', 80, []), filtered('c1--default-web-TCP-81', 81, [])].map(
        ({ sourceRanges: _r, ...v }): L4VirtualService => v,
      ),
    );
    const lifted = await sync(second, open);
    assert.deepEqual(lifted.failed, []);
    assert.equal(lifted.changes.length, 2);
    assert.deepEqual(plan(open, await second.observe()).changes, []);
  });

  it('carries every member check it declares (HTTP, its headers, method and statuses, HTTPS on L4): applied, observed back after a restart with nothing to write, changed in place', async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const first = await h.adapter('c1');
    const caps = first.capabilities();
    if (!caps.httpChecks) {
      t.skip('declares no HTTP checks');
      return;
    }
    const base = {
      type: 'http' as const,
      path: '/healthz',
      intervalSeconds: 3,
      timeoutSeconds: 2,
      rise: 2,
      fall: 3,
    };
    const members: [string, number, string][] = [['192.0.2.1', 61000, 'n1']];
    const web: Pool = {
      ...pool('c1--default-web-80.l7', members),
      health: 'http',
      check: {
        ...base,
        ...(caps.checkHeaders
          ? {
              headers: [
                { name: 'Host', value: 'app.example.com' },
                { name: 'X-Probe', value: 'a b' },
              ],
            }
          : {}),
        ...(caps.checkMethods ? { method: 'HEAD' as const } : {}),
        // Whole classes where that is all it takes, any ranges where it takes them.
        ...(caps.checkStatuses === 'any'
          ? {
              expect: [
                { from: 200, to: 204 },
                { from: 301, to: 302 },
              ],
            }
          : caps.checkStatuses === 'classes'
            ? { expect: [{ from: 200, to: 299 }] }
            : {}),
      },
    };
    const pools: Pool[] = [web];
    const vss: VirtualService[] = [
      {
        kind: 'l7',
        name: 'c1--ingress-npl',
        vip: '192.0.2.20',
        port: 80,
        ingressClass: 'npl',
        defaultPool: undefined,
        routes: [{ host: 'a.example', path: '/', pathType: 'Prefix', pool: web.name, source: 'default/ing' }],
      },
    ];
    if (caps.httpsChecks) {
      const tls: Pool = { ...pool('c1--default-tls-443', members), check: { ...base, tls: true } };
      pools.push(tls);
      vss.push(l4('c1--default-tls-TCP-443', tls.name));
    }
    const s = state(pools, vss);
    const second = await throughRestart(h, first, s);
    // The probe's path moves: one update, observed as such.
    const moved = state(
      pools.map((p) => (p === web ? { ...p, check: { ...p.check!, path: '/ready' } } : p)),
      vss,
    );
    const r = await sync(second, moved);
    assert.deepEqual(r.failed, []);
    assert.deepEqual(
      r.changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
      [`update pool ${web.name}`],
    );
    assert.deepEqual(plan(moved, await second.observe()).changes, []);
  });

  it("reads every policy field it declares from the device's own field (a table per vendor), and a field changed there by hand is written again by the next pass", async (t) => {
    const h = await guarded();
    t.after(() => h.close());
    const on = h.policyOnDevice;
    if (!on) {
      t.skip('its harness cannot reach the device behind the adapter');
      return;
    }
    const first = await h.adapter('c1');
    const caps = first.capabilities();
    const algorithms = caps.algorithms ?? [];
    const declared: (keyof PoolPolicy)[] = [
      ...(algorithms.some((a) => a !== 'RoundRobin') ? (['algorithm'] as const) : []),
      ...(algorithms.some((a) => a === 'HeaderHash' || a === 'CookieHash') ? (['hashKey'] as const) : []),
      ...(caps.persistence?.length ? (['persistence'] as const) : []),
      ...(caps.maxConnections ? (['maxConnections'] as const) : []),
      ...(caps.slowStart ? (['slowStartSeconds'] as const) : []),
      ...(caps.timeouts?.connect ? (['connectTimeoutSeconds'] as const) : []),
      ...(caps.timeouts?.server ? (['serverTimeoutSeconds'] as const) : []),
      ...(caps.retries ? (['retries'] as const) : []),
      ...(caps.http?.retry ? (['retryStatuses'] as const) : []),
      ...(caps.http?.sessionCookie ? (['sessionCookie'] as const) : []),
      ...(caps.http?.http2 ? (['backendProtocol'] as const) : []),
      ...(caps.http?.backendTls ? (['backendTls'] as const) : []),
    ];
    const covered = new Set(on.rows.flatMap((r) => Object.keys(r.policy)));
    assert.deepEqual(
      declared.filter((f) => !covered.has(f)),
      [],
      'the table has a row for every policy field the adapter declares',
    );
    // One pool per row, behind a virtual service of its own (an L7 one for HTTP pools).
    const members: [string, number, string][] = [
      ['192.0.2.1', 61000, 'n1'],
      ['192.0.2.2', 61001, 'n2'],
    ];
    const pools: Pool[] = on.rows.map((r, i) => ({
      ...pool(`c1--default-web-${9000 + i}${r.http ? '.l7' : ''}`, members),
      ...(r.http ? { health: 'http' as const } : {}),
      ...r.policy,
    }));
    const vss: VirtualService[] = pools.map((p, i) =>
      on.rows[i]!.http
        ? {
            kind: 'l7',
            name: `c1--ingress-row${i}`,
            vip: '192.0.2.22',
            port: 9100 + i,
            ingressClass: `row${i}`,
            defaultPool: undefined,
            routes: [{ host: 'r.example', path: '/', pathType: 'Prefix', pool: p.name, source: 'default/r' }],
            ...(p.backendProtocol === 'h2c' ? { http2: true as const } : {}),
          }
        : l4(`c1--default-web-TCP-${9000 + i}`, p.name),
    );
    const s = state(pools, vss);
    allApplied(await sync(first, s));
    const pick = (f: Record<string, unknown>, keys: string[]) =>
      Object.fromEntries(keys.map((k) => [k, f[k]]));
    for (const [i, r] of on.rows.entries()) {
      const keys = Object.keys(r.device);
      assert.deepEqual(
        pick(await on.fields(pools[i]!.name), keys),
        r.device,
        `${JSON.stringify(r.policy)} on the device`,
      );
    }
    // By hand, behind the adapter's back: every row's fields changed at once.
    for (const [i, r] of on.rows.entries()) await on.edit(pools[i]!.name, r.hand);
    for (const [i, r] of on.rows.entries()) {
      const keys = Object.keys(r.hand);
      assert.deepEqual(
        pick(await on.fields(pools[i]!.name), keys),
        r.hand,
        `${JSON.stringify(r.policy)} changed by hand`,
      );
    }
    const repair = await sync(first, s);
    assert.deepEqual(repair.failed, []);
    assert.deepEqual(
      [...new Set(repair.changes.filter((c) => c.kind === 'pool').map((c) => `${c.op} ${c.name}`))].sort(),
      pools.map((p) => `update ${p.name}`).sort(),
      'each pool changed by hand is written again',
    );
    for (const [i, r] of on.rows.entries()) {
      const keys = Object.keys(r.device);
      assert.deepEqual(
        pick(await on.fields(pools[i]!.name), keys),
        r.device,
        `${JSON.stringify(r.policy)} repaired`,
      );
    }
    assert.deepEqual(plan(s, await first.observe()).changes, [], 'nothing left to write');
  });
}
