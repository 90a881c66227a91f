/**
 * The suite every load-balancer adapter passes. An adapter's test file calls `adapterContract` with
 * a harness that makes adapters over one shared device (so a "restart" is a new adapter on the same
 * device), can place a foreign object on the device, and can make one change fail.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { X509Certificate } from 'node:crypto';
import type {
  Certificate,
  HttpRoute,
  LbState,
  Pool,
  PoolPolicy,
  VirtualService,
} from '../../src/model/types.ts';
import { selfSignedCertificate } from '../../src/runtime/tls.ts';
import { type Change, plan } from '../../src/plan/diff.ts';
import { deleteOwnedConfig } from '../../src/controller/delete-config.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import { INGRESS_HTTP } from '../../src/adapter/http-capabilities.ts';
import * as kit from '../support/model.ts';
import { policyContract } from './policy-contract.ts';

export interface ContractHarness {
  /** A fresh device; `adapter(owner)` makes adapters on it. */
  adapter(owner: string, opts?: { failName?: string }): Promise<LoadBalancerAdapter>;
  /** Puts a pool owned by someone else (or nobody) on the device. */
  foreignPool(pool: Pool, owner: string): Promise<void>;
  /** The device's own policy fields, read and changed by hand (policy-contract.ts). */
  policyOnDevice?: PolicyOnDevice;
  close(): Promise<void>;
}

/**
 * One BackendPolicy value and how the device spells it: the table each harness keeps of its
 * device's fields, and a hand edit of those fields as an admin would make it (another value, or
 * one the model has no word for).
 */
export interface PolicyRow {
  policy: PoolPolicy;
  /** Its pool serves HTTP (behind an L7 virtual service): cookies, keyed hashes, Avi's retries. */
  http?: boolean;
  /** The device's fields for it (a subset of `fields()`; a string value: a part of the field). */
  device: Record<string, unknown>;
  /** The same fields changed by hand (undefined: the field removed). */
  hand: Record<string, unknown>;
}

export interface PolicyOnDevice {
  /** One row per policy value the device carries: together every field its capabilities declare. */
  rows: PolicyRow[];
  /** A pool's policy fields on the device, flat, in the device's own words. */
  fields(pool: string): Promise<Record<string, unknown>>;
  /** Changes them by hand, behind the adapter's back. */
  edit(pool: string, fields: Record<string, unknown>): Promise<void>;
}

export const pool = (name: string, members: [string, number, string][]): Pool =>
  kit.pool(
    name,
    members.map(([address, port, node]) => kit.member(address, port, { node, pod: `default/${node}-pod` })),
    { service: 'default/web' },
  );

export const l4 = (name: string, poolName: string, vip = '192.0.2.10'): VirtualService =>
  kit.l4(name, poolName, { vip, source: 'default/web' });

export const state = (pools: Pool[], vss: VirtualService[]): LbState => kit.state(pools, vss);

export async function sync(
  a: LoadBalancerAdapter,
  desired: LbState,
): Promise<{ changes: Change[]; failed: string[]; why: string[] }> {
  const p = plan(desired, await a.observe());
  const results = await a.apply(p.changes);
  const bad = results.filter((r) => !r.ok);
  return {
    changes: p.changes,
    failed: bad.map((r) => `${r.change.op} ${r.change.kind} ${r.change.name}`),
    why: bad.map((r) => `${r.change.op} ${r.change.kind} ${r.change.name}: ${r.error?.message ?? '?'}`),
  };
}

/** Every change of a sync went through; if not, the assertion says why each failed. */
export function allApplied(r: { failed: string[]; why: string[] }): void {
  assert.deepEqual(r.failed, [], r.why.join('; '));
}

/** A real certificate for a.example.com as the model carries it (key included, as the device needs it). */
export async function certificate(name: string, keyFrom?: { key: string }): Promise<Certificate> {
  const pem = await selfSignedCertificate('a.example.com');
  const leaf = new X509Certificate(pem.cert);
  return {
    name,
    source: 'default/a-tls',
    certPem: pem.cert,
    keyPem: keyFrom?.key ?? pem.key,
    subject: leaf.subject.replaceAll('\n', ', '),
    sniNames: ['a.example.com'],
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
  };
}

export const httpsVs = (name: string, poolName: string, certs: string[]): VirtualService => ({
  kind: 'l7',
  name,
  vip: '192.0.2.30',
  port: 443,
  ingressClass: 'npl',
  defaultPool: undefined,
  protocol: 'HTTPS',
  certificates: certs,
  routes: [{ host: 'a.example.com', path: '/', pathType: 'Prefix', pool: poolName, source: 'default/ing' }],
});

export function adapterContract(
  name: string,
  makeHarness: () => Promise<ContractHarness>,
  /** A one-line reason to skip (a real device or package missing here). */
  skip: string | false = false,
): void {
  // Every adapter as the controller uses it: behind the one ownership guard.
  const guarded = async (): Promise<ContractHarness> => {
    const h = await makeHarness();
    return { ...h, adapter: async (owner, opts) => guardOwnership(await h.adapter(owner, opts)) };
  };
  describe(`adapter contract: ${name}`, { skip }, () => {
    it('creates, updates and deletes pools and virtual services; observe() shows exactly what was applied', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const a = await h.adapter('c1');
      const s1 = state(
        [pool('c1--default-web-80', [['192.0.2.1', 61000, 'n1']])],
        [l4('c1--default-web-TCP-80', 'c1--default-web-80')],
      );
      allApplied(await sync(a, s1));
      assert.deepEqual(plan(s1, await a.observe()).changes, [], 'idempotent: nothing left to do');
      const s2 = state(
        [
          pool('c1--default-web-80', [
            ['192.0.2.1', 61000, 'n1'],
            ['192.0.2.2', 61001, 'n2'],
          ]),
        ],
        [l4('c1--default-web-TCP-80', 'c1--default-web-80')],
      );
      const up = await sync(a, s2);
      assert.deepEqual(up.failed, []);
      assert.deepEqual(
        up.changes.map((c) => `${c.op} ${c.kind}`),
        ['update pool'],
      );
      const members = (await a.observe()).owned.pools[0]!.members;
      assert.deepEqual(
        members.map((m) => `${m.address}:${m.port}@${m.node}`),
        ['192.0.2.1:61000@n1', '192.0.2.2:61001@n2'],
      );
      const gone = await sync(a, state([], []));
      assert.deepEqual(gone.failed, []);
      assert.deepEqual(
        gone.changes.map((c) => `${c.op} ${c.kind}`),
        ['delete virtualService', 'delete pool'],
        'parents first on delete',
      );
      const left = (await a.observe()).owned;
      assert.deepEqual([left.pools, left.virtualServices, left.certificates ?? []], [[], [], []]);
    });

    it('never touches foreign objects: a name clash is a conflict, another owner’s objects survive our deletes', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      await h.foreignPool(pool('shared-name', [['192.0.2.9', 80, 'x']]), 'someone-else');
      await h.foreignPool(pool('c2--default-web-80', [['192.0.2.8', 80, 'y']]), 'c2');
      const a = await h.adapter('c1');
      const p = plan(state([pool('shared-name', [['192.0.2.1', 61000, 'n1']])], []), await a.observe());
      assert.deepEqual(p.conflicts, [{ kind: 'pool', name: 'shared-name', owner: 'someone-else' }]);
      assert.deepEqual(p.changes, []);
      await sync(a, state([], []));
      const other = await h.adapter('c2');
      assert.equal((await other.observe()).owned.pools.length, 1, 'the other cluster’s pool is still there');
      const forced = await a.apply([
        { op: 'delete', kind: 'pool', name: 'c2--default-web-80', observed: pool('c2--default-web-80', []) },
      ]);
      assert.equal(forced[0]!.ok, false, 'even a hand-made delete of a foreign object is refused');
      assert.equal(forced[0]!.error!.terminal, true);
    });

    it('two clusters on one device, same namespace and Service names: neither touches the other, even starting from empty', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      // What each cluster's controller builds for default/web: the names differ only by owner.
      const of = (c: string, vip: string) =>
        state(
          [pool(`${c}--default-web-80`, [['192.0.2.1', 61000, 'n1']])],
          [{ ...l4(`${c}--default-web-TCP-80`, `${c}--default-web-80`), vip }],
        );
      const c1 = await h.adapter('c1');
      const c2 = await h.adapter('c2');
      allApplied(await sync(c1, of('c1', '192.0.2.41')));
      allApplied(await sync(c2, of('c2', '192.0.2.42')));
      assert.deepEqual(plan(of('c1', '192.0.2.41'), await c1.observe()).changes, [], 'c1 sees only its own');
      assert.deepEqual(plan(of('c2', '192.0.2.42'), await c2.observe()).changes, [], 'c2 sees only its own');
      // c1 restarts from an empty desired state (its cluster lost everything): it deletes only its own.
      await c1.close();
      const fresh = await h.adapter('c1');
      const wiped = await sync(fresh, state([], []));
      assert.deepEqual(wiped.failed, []);
      assert.ok(
        wiped.changes.every((c) => c.name.startsWith('c1--')),
        JSON.stringify(wiped.changes.map((c) => c.name)),
      );
      assert.deepEqual(plan(of('c2', '192.0.2.42'), await c2.observe()).changes, [], 'c2 untouched');
      const seen = await fresh.observe();
      assert.deepEqual([seen.owned.pools.length, seen.owned.virtualServices.length], [0, 0]);
      assert.ok(
        seen.foreign.some((f) => f.owner === 'c2'),
        'c2’s objects are foreign to c1',
      );
    });

    it('reports a partial failure per object and applies the rest', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const a = await h.adapter('c1', { failName: 'c1--bad-80' });
      const s = state(
        [pool('c1--good-80', [['192.0.2.1', 61000, 'n1']]), pool('c1--bad-80', [['192.0.2.2', 61000, 'n2']])],
        [l4('c1--good-TCP-80', 'c1--good-80'), l4('c1--bad-TCP-80', 'c1--bad-80')],
      );
      const r = await sync(a, s);
      assert.deepEqual(r.failed.sort(), ['create pool c1--bad-80', 'create virtualService c1--bad-TCP-80']);
      const obs = await a.observe();
      assert.deepEqual(
        obs.owned.pools.map((p) => p.name),
        ['c1--good-80'],
      );
      assert.deepEqual(
        obs.owned.virtualServices.map((v) => v.name),
        ['c1--good-TCP-80'],
      );
    });

    it('rebuilds its state from observe() after a restart, with nothing to write', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const first = await h.adapter('c1');
      const s = state(
        [
          pool('c1--default-web-80', [
            ['192.0.2.2', 61001, 'n2'],
            ['192.0.2.1', 61000, 'n1'],
          ]),
        ],
        [
          l4('c1--default-web-TCP-80', 'c1--default-web-80'),
          {
            kind: 'l7',
            name: 'c1--ingress-npl',
            vip: '192.0.2.20',
            port: 80,
            ingressClass: 'npl',
            defaultPool: undefined,
            routes: [
              {
                host: 'a.example',
                path: '/',
                pathType: 'Prefix',
                pool: 'c1--default-web-80',
                source: 'default/ing',
              },
            ],
          },
        ],
      );
      await sync(first, s);
      await first.close();
      const second = await h.adapter('c1');
      assert.deepEqual(plan(s, await second.observe()).changes, []);
    });

    policyContract(guarded);

    it('rejects invalid objects as terminal errors', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const a = await h.adapter('c1');
      const r = await a.apply([
        { op: 'create', kind: 'pool', name: 'c1--x', desired: pool('c1--x', [['192.0.2.1', 70000, 'n1']]) },
      ]);
      assert.equal(r[0]!.ok, false);
      assert.equal(r[0]!.error!.terminal, true);
      const missing = await a.apply([
        {
          op: 'update',
          kind: 'pool',
          name: 'c1--nope',
          desired: pool('c1--nope', []),
          observed: pool('c1--nope', []),
        },
      ]);
      assert.equal(missing[0]!.ok, false, 'update of a missing object');
      assert.equal(missing[0]!.error!.terminal, false);
    });

    it('deleteConfig removes every object we own, another cluster’s and nobody’s stay', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      await h.foreignPool(pool('c2--default-web-80', [['192.0.2.8', 80, 'y']]), 'c2');
      await h.foreignPool(pool('hand-made', [['192.0.2.9', 80, 'x']]), 'someone-else');
      const a = await h.adapter('c1');
      const r = await sync(
        a,
        state(
          [pool('c1--default-web-80', [['192.0.2.1', 61000, 'n1']]), pool('c1--default-api-80', [])],
          [
            l4('c1--default-web-TCP-80', 'c1--default-web-80'),
            l4('c1--default-api-TCP-80', 'c1--default-api-80', '192.0.2.11'),
          ],
        ),
      );
      assert.deepEqual(r.failed, []);
      // A fresh adapter, as the uninstall hook's process is.
      const fresh = await h.adapter('c1');
      const done = await deleteOwnedConfig(fresh, silentLogger(), { pauseMs: 10 });
      assert.equal(done.deleted, 4);
      const left = (await fresh.observe()).owned;
      assert.deepEqual(
        [left.pools, left.virtualServices, left.certificates ?? []],
        [[], [], []],
        '0 owned objects left',
      );
      const c2 = await h.adapter('c2');
      assert.equal((await c2.observe()).owned.pools.length, 1, 'the other cluster’s pool stays');
      assert.ok(
        (await fresh.observe()).foreign.some((f) => f.name === 'hand-made'),
        'an object nobody of ours owns stays',
      );
      assert.deepEqual(
        await deleteOwnedConfig(fresh, silentLogger()),
        { deleted: 0, rounds: 1 },
        'idempotent',
      );
    });
    it('certificates: held, served by an HTTPS listener, rotated in place, a bad key refused alone; or answered Unsupported', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const a = await h.adapter('c1');
      const p = pool('c1--default-web-80.l7', [['192.0.2.1', 61000, 'n1']]);
      const c1 = await certificate('c1--default-a-tls');
      const s: LbState = {
        pools: [p],
        virtualServices: [httpsVs('c1--ingress-npl-https', p.name, [c1.name])],
        certificates: [c1],
      };
      if (!a.capabilities().certificates) {
        // The core never sends one; should it arrive, it fails alone and the pool still applies.
        const r = await a.apply(
          plan({ pools: [p], virtualServices: [], certificates: [c1] }, await a.observe()).changes,
        );
        assert.deepEqual(
          r.map((x) => `${x.change.kind}:${x.ok}:${x.error?.code ?? ''}:${x.error?.terminal ?? ''}`),
          ['pool:true::', 'certificate:false:Unsupported:true'],
        );
        return;
      }
      allApplied(await sync(a, s));
      const seen = await a.observe();
      assert.deepEqual(
        seen.owned.certificates?.map((c) => c.fingerprint),
        [c1.fingerprint],
      );
      assert.deepEqual(plan(s, seen).changes, []);
      // Rotation: the same object with a new certificate; the virtual service is not written.
      const rotated = await certificate(c1.name);
      assert.notEqual(rotated.fingerprint, c1.fingerprint);
      const s2: LbState = { ...s, certificates: [rotated] };
      const r = await sync(a, s2);
      assert.deepEqual(
        r.changes.map((c) => `${c.op} ${c.kind}`),
        ['update certificate'],
      );
      assert.deepEqual(r.failed, []);
      assert.deepEqual(
        (await a.observe()).owned.certificates?.map((c) => c.fingerprint),
        [rotated.fingerprint],
      );
      // A key that does not match its certificate is refused, terminal, and nothing else is held up.
      const other = await selfSignedCertificate('b.example.com');
      const bad = await certificate('c1--default-b-tls', other);
      const s3: LbState = {
        ...s2,
        pools: [...s2.pools, pool('c1--default-b-80', [['192.0.2.2', 61001, 'n2']])],
        certificates: [rotated, bad],
      };
      const results = await a.apply(plan(s3, await a.observe()).changes);
      const failed = results.filter((x) => !x.ok);
      assert.deepEqual(
        failed.map((x) => `${x.change.kind} ${x.change.name} ${x.error?.terminal}`),
        ['certificate c1--default-b-tls true'],
      );
      assert.ok(
        results.some((x) => x.ok && x.change.kind === 'pool' && x.change.name === 'c1--default-b-80'),
      );
    });

    it('carries every route feature it declares, and TLS passthrough if it declares it: applied, observed back, nothing left to do', async (t) => {
      const h = await guarded();
      t.after(() => h.close());
      const a = await h.adapter('c1');
      const caps = a.capabilities();
      const http = caps.http ?? INGRESS_HTTP;
      const v1 = pool('c1--infra-v1-8080.l7', [['192.0.2.1', 61000, 'n1']]);
      const v2 = pool('c1--infra-v2-8080.l7', [['192.0.2.2', 61000, 'n2']]);
      const base = { host: 'a.example', source: 'HTTPRoute infra/r' } as const;
      const routes: HttpRoute[] = http.pathTypes.map((pathType, i) => ({
        ...base,
        path: pathType === 'RegularExpression' ? '/re/[0-9]+' : `/p${i}`,
        pathType,
        pool: v1.name,
        order: i,
      }));
      let order = routes.length;
      const add = (on: boolean, r: Partial<HttpRoute>) => {
        if (on)
          routes.push({
            ...base,
            path: `/f${order}`,
            pathType: 'Prefix',
            pool: v1.name,
            order: order++,
            ...r,
          });
      };
      add(http.headerMatches, { headers: [{ name: 'x-canary', value: '1', type: 'Exact' }] });
      add(http.queryMatches, { queryParams: [{ name: 'q', value: 'v', type: 'Exact' }] });
      add(http.methodMatches, { method: 'POST' });
      add(http.headerModifiers, {
        requestHeaders: { set: [{ name: 'x-a', value: '1' }], add: [], remove: ['x-b'] },
        responseHeaders: { set: [], add: [{ name: 'x-c', value: '2' }], remove: [] },
      });
      add(http.redirects, { pool: '', redirect: { scheme: 'https', statusCode: 301 } });
      add(http.rewrites, { rewrite: { path: { type: 'ReplacePrefixMatch', value: '/v2' } } });
      add(http.sourceRanges === true, { sourceRanges: ['10.0.0.0/8', 'fd00::/8'] });
      add(http.weights, {
        pool: '',
        backends: [
          { pool: v1.name, weight: 3 },
          { pool: v2.name, weight: 1 },
          { pool: null, weight: 1 },
        ],
      });
      add(http.cors === true, {
        cors: {
          allowOrigins: ['https://a.example', 'https://*.b.example:8443'],
          allowMethods: ['*'],
          allowHeaders: ['x-a'],
          exposeHeaders: ['x-b'],
          allowCredentials: true,
          maxAgeSeconds: 600,
        },
      });
      add(http.backendHeaderModifiers === true, {
        pool: '',
        backends: [
          {
            pool: v1.name,
            weight: 1,
            requestHeaders: { set: [{ name: 'backend', value: 'v1' }], add: [], remove: [] },
          },
          { pool: v2.name, weight: 1 },
        ],
      });
      // What the core sends an adapter with Ingress-style routes only: no `order` (capabilities.ts).
      const sent = caps.http ? routes : routes.map(({ order: _order, ...r }) => r);
      const vss: VirtualService[] = [
        {
          kind: 'l7',
          name: 'c1--gw-infra.gw-HTTP-80',
          vip: '192.0.2.50',
          port: 80,
          ingressClass: 'npl-lb',
          routes: sent,
          defaultPool: undefined,
        },
      ];
      // Ingress rules (no order): one open, one filtered (none left: every client 403), one that
      // redirects to HTTPS (npl-lb.io/ssl-redirect).
      if (http.sourceRanges)
        vss.push({
          kind: 'l7',
          name: 'c1--ingress-npl',
          vip: '192.0.2.51',
          port: 80,
          ingressClass: 'npl',
          defaultPool: undefined,
          routes: [
            { host: 'open.example', path: '/', pathType: 'Prefix', pool: v1.name, source: 'default/open' },
            {
              host: 'guarded.example',
              path: '/api',
              pathType: 'Prefix',
              pool: v2.name,
              source: 'default/guarded',
              sourceRanges: ['192.0.2.0/24'],
            },
            {
              host: 'closed.example',
              path: '/',
              pathType: 'Exact',
              pool: v2.name,
              source: 'default/closed',
              sourceRanges: [],
            },
            ...(http.redirects
              ? [
                  {
                    host: 'secure.example',
                    path: '/',
                    pathType: 'Prefix' as const,
                    pool: '',
                    source: 'default/secure',
                    redirect: { scheme: 'https' as const, statusCode: 301 as const },
                  },
                ]
              : []),
          ],
        });
      if (caps.tlsPassthrough) {
        vss.push({
          kind: 'l4',
          name: 'c1--gw-infra.gw-TLS-443',
          vip: '192.0.2.50',
          port: 443,
          protocol: 'TCP',
          pool: '',
          source: 'Gateway infra/gw',
          sni: [
            { host: '*.example.com', pool: v1.name, source: 'TLSRoute infra/a' },
            { host: 'b.example.com', pool: v2.name, source: 'TLSRoute infra/b' },
          ],
        });
        // A TLS listener whose routes have no valid backend: it listens, and closes every
        // connection (the Gateway API's fail-closed rule), rather than refusing it.
        vss.push({
          kind: 'l4',
          name: 'c1--gw-infra.gw-TLS-8443',
          vip: '192.0.2.50',
          port: 8443,
          protocol: 'TCP',
          pool: '',
          source: 'Gateway infra/gw',
          sni: [],
        });
      }
      const s = state([v1, v2], vss);
      allApplied(await sync(a, s));
      assert.deepEqual(plan(s, await a.observe()).changes, [], 'observed exactly as applied');
      await a.close();
      const again = await h.adapter('c1');
      assert.deepEqual(plan(s, await again.observe()).changes, [], 'and after a restart');
    });
  });
}
