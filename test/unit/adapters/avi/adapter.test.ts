import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AviAdapter } from '../../../../adapters/avi/adapter.ts';
import { knownModel, MODEL_OF } from '../../../../adapters/avi/object-models.ts';
import { SCHEMAS } from '../../../../adapters/avi/object-schemas.ts';
import { laterFields } from '../../../../sim/avi/defaults.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import type { L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { readFileSync } from 'node:fs';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
import * as kit from '../../../support/model.ts';

const pool = (name: string, members: [string, number, string, boolean?][]): Pool =>
  kit.pool(
    name,
    members.map(([address, port, node, enabled = true]) =>
      kit.member(address, port, { node, pod: `default/${node}-pod`, enabled }),
    ),
    { health: 'http', service: 'default/web', servicePort: 'http' },
  );
const l7 = (
  routes: [string, string, 'Prefix' | 'Exact', string][],
  defaultPool?: string,
): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl',
  defaultPool,
  routes: routes.map(([host, path, pathType, p]) => ({
    host,
    path,
    pathType,
    pool: p,
    source: 'default/ing',
  })),
});

async function setup(
  t: { after: (fn: () => Promise<void>) => void },
  extra: Partial<ConstructorParameters<typeof AviAdapter>[0]> = {},
) {
  // The controller runs the version the adapter is configured for (unless the test says otherwise).
  const sim = new AviSimulator(extra.version ? { version: extra.version } : {});
  const url = await sim.start();
  const adapter = aviAdapter(url, extra);
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  return { sim, adapter };
}

const ok = (r: { ok: boolean; error?: { message: string } }[]) =>
  assert.deepEqual(
    r.map((x) => (x.ok ? 'ok' : x.error?.message)),
    r.map(() => 'ok'),
  );

describe('Avi adapter', () => {
  it("what it writes is a subset of the Avi field model (or a later model's, known by version)", () => {
    const read = (f: string) =>
      JSON.parse(readFileSync(new URL(`../../../../adapters/avi/spec/${f}`, import.meta.url), 'utf8')) as {
        objects: Record<string, { fields: Record<string, unknown> }>;
      };
    const models = {
      objects: {
        ...read('avi-object-models.json').objects,
        ...read('avi-datascript-models.json').objects,
        ...read('avi-pki-models.json').objects,
        ...read('avi-app-profile-models.json').objects,
        ...read('avi-persistence-models.json').objects,
      },
    };
    for (const [type, schema] of Object.entries(SCHEMAS)) {
      const model = MODEL_OF[type]!;
      assert.ok(knownModel(model), model);
      const fields = Object.keys(models.objects[model]!.fields);
      // Fields of later object models (the bundled one predates them) are known by version.
      const later = laterFields(type);
      for (const key of Object.keys(schema.shape))
        assert.ok(fields.includes(key) || later.includes(key), `${model}.${key} is in the field model`);
    }
  });

  it('servers name their node; L7 is poolgroups, an httppolicyset and a virtualservice, written children first', async (t) => {
    const { sim, adapter } = await setup(t);
    const p = pool('c1--web', [
      ['192.0.2.1', 61000, 'n1'],
      ['192.0.2.2', 61001, 'n2', false],
    ]);
    const vs = l7(
      [
        ['a.example', '/', 'Prefix', 'c1--web'],
        ['a.example', '/api', 'Exact', 'c1--web'],
      ],
      'c1--web',
    );
    ok(
      await adapter.apply([
        { op: 'create', kind: 'pool', name: p.name, desired: p },
        { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
      ]),
    );
    const stored = sim.objects('pool').get('c1--web')!;
    assert.deepEqual(
      (
        stored.servers as {
          ip: { addr: string };
          port: number;
          hostname: string;
          enabled: boolean;
          external_uuid: string;
        }[]
      ).map((s) => [s.ip.addr, s.port, s.hostname, s.enabled, s.external_uuid]),
      [
        ['192.0.2.1', 61000, 'n1', true, 'default/n1-pod'],
        ['192.0.2.2', 61001, 'n2', false, 'default/n2-pod'],
      ],
    );
    assert.equal(stored.created_by, 'npl-lb-c1');
    assert.deepEqual(
      (stored.markers as { key: string }[]).map((m) => m.key),
      ['clustername', 'namespace', 'service', 'serviceport', 'health'],
    );
    const rules = (
      sim.objects('httppolicyset').get('c1--ingress-npl')!.http_request_policy as {
        rules: { name: string; match: { path?: { match_criteria: string } } }[];
      }
    ).rules;
    assert.deepEqual(
      rules.map((r) => `${r.name} ${r.match.path?.match_criteria ?? 'any path'}`),
      ['0 EQUALS', '1 any path', '1.fence any path'],
      'exact before prefix; the prefix / takes any path; the host fenced last',
    );
    assert.deepEqual([...sim.objects('poolgroup').keys()], ['c1--ingress-npl--c1--web']);
    assert.ok(sim.objects('virtualservice').get('c1--ingress-npl')!.http_policies);
    // Everything round-trips: observe() gives back the model as applied.
    const seen = await adapter.observe();
    assert.deepEqual(seen.owned.virtualServices, [vs]);
    // Removing the L7 service removes all its parts, parents first (the simulator refuses otherwise).
    ok(
      await adapter.apply([
        { op: 'delete', kind: 'virtualService', name: vs.name, observed: vs },
        { op: 'delete', kind: 'pool', name: p.name, observed: p },
      ]),
    );
    for (const type of ['pool', 'poolgroup', 'vsvip', 'httppolicyset', 'virtualservice']) {
      assert.equal(sim.objects(type).size, 0, `${type} left behind`);
    }
  });

  it('writes only what changed (checksum on the object); a second identical apply makes no call that writes', async (t) => {
    const { sim, adapter } = await setup(t);
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    ok(await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]));
    const writes = sim.stats.writes;
    ok(await adapter.apply([{ op: 'update', kind: 'pool', name: p.name, desired: p, observed: p }]));
    assert.equal(sim.stats.writes, writes);
    assert.equal(adapter.stats.skippedUnchanged, 1);
    const p2 = pool('c1--web', [
      ['192.0.2.1', 61000, 'n1'],
      ['192.0.2.3', 61000, 'n3'],
    ]);
    ok(await adapter.apply([{ op: 'update', kind: 'pool', name: p.name, desired: p2, observed: p }]));
    assert.equal(sim.stats.writes, writes + 1);
  });

  it('logs in again on 401 and takes a refreshed session on 419; 412 re-reads and retries; 5xx is retryable', async (t) => {
    const { sim, adapter } = await setup(t);
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    ok(await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]));
    sim.expireSessions();
    await adapter.observe();
    assert.equal(adapter.session.stats.logins, 2);
    sim.faults.refresh = 1;
    await adapter.observe();
    assert.equal(adapter.session.stats.logins, 2, '419 needs no login');
    // Someone touches the pool: our cached _last_modified is stale, the PUT answers 412.
    const stored = sim.objects('pool').get('c1--web')!;
    stored._last_modified = '42';
    const p2 = pool('c1--web', [['192.0.2.9', 61000, 'n9']]);
    ok(await adapter.apply([{ op: 'update', kind: 'pool', name: p.name, desired: p2, observed: p }]));
    assert.equal((sim.objects('pool').get('c1--web')!.servers as { hostname: string }[])[0]!.hostname, 'n9');
    sim.faults.failWrites = 1;
    const r = await adapter.apply([{ op: 'update', kind: 'pool', name: p.name, desired: p, observed: p2 }]);
    assert.equal(r[0]!.ok, false);
    assert.equal(r[0]!.error!.terminal, false);
  });

  it('a 400 is terminal and names the field; a bad VIP never leaves', async (t) => {
    const { sim, adapter } = await setup(t, { cloud: 'Nowhere' });
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    const r = await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]);
    assert.equal(r[0]!.error!.terminal, true);
    assert.match(r[0]!.error!.message, /cloud_ref: Cannot find object/);
    const writes = sim.stats.writes;
    const bad = await adapter.apply([
      {
        op: 'create',
        kind: 'virtualService',
        name: 'c1--x',
        desired: {
          kind: 'l4',
          name: 'c1--x',
          vip: 'bogus',
          port: 80,
          protocol: 'TCP',
          pool: 'c1--web',
          source: 'default/x',
        },
      },
    ]);
    assert.equal(bad[0]!.error!.code, 'Invalid');
    assert.match(bad[0]!.error!.message, /vip\.0\.ip_address\.addr/);
    assert.equal(sim.stats.writes, writes, 'nothing was sent');
  });

  it('a route a policy set cannot express (a regular expression, a 308) is refused, terminal, before anything is written', async (t) => {
    const { sim, adapter } = await setup(t);
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    ok(await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]));
    const writes = sim.stats.writes;
    const base = l7([['a.example', '/', 'Prefix', 'c1--web']]);
    for (const route of [
      { ...base.routes[0]!, path: '/re/[0-9]+', pathType: 'RegularExpression' as const },
      { ...base.routes[0]!, pool: '', redirect: { statusCode: 308 as const } },
    ]) {
      const vs = { ...base, routes: [route] };
      const r = await adapter.apply([{ op: 'create', kind: 'virtualService', name: vs.name, desired: vs }]);
      assert.equal(r[0]!.error?.code, 'Invalid');
      assert.equal(r[0]!.error?.terminal, true);
      assert.match(r[0]!.error!.message, /string groups|301, 302 or 307/);
    }
    assert.equal(sim.stats.writes, writes, 'nothing was sent');
  });
});

describe('Avi adapter against a controller that fills defaults', () => {
  it("a controllerVersion newer than the controller's: calls and objects in the controller's own version, with a warning", async (t) => {
    const sim = new AviSimulator({ version: '22.1.3' });
    const url = await sim.start();
    t.after(() => sim.close());
    // The controller refuses an object model newer than its own.
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin' }),
    });
    const cookies = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const newer = await fetch(`${url}/api/pool`, { headers: { cookie: cookies, 'x-avi-version': '31.2.1' } });
    assert.equal(newer.status, 400);
    assert.match(
      await newer.text(),
      /X-Avi-Version 31\.2\.1 is newer than this controller's version 22\.1\.3/,
    );
    const adapter = aviAdapter(url, { version: '31.2.1', gracefulDisableSeconds: 90 });
    t.after(() => adapter.close());
    assert.deepEqual(await adapter.verify(), [
      "adapter.avi.controllerVersion 31.2.1 is newer than the controller's own 22.1.3: calls and objects use 22.1.3",
    ]);
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    ok(await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]));
    const stored = sim.objects('pool').get('c1--web')!;
    assert.equal(stored.graceful_disable_timeout, 2, "22.1.3's field, in minutes");
    assert.equal(stored.graceful_disable_timeout_sec, undefined);
    // Configured at or below the controller's version: used as it is, no warning.
    const same = aviAdapter(url, { version: '22.1.3' });
    t.after(() => same.close());
    assert.deepEqual(await same.verify(), []);
  });

  it('sets the graceful disable timeout in the field of its version; a restart writes nothing though the controller added defaults', async (t) => {
    for (const [version, field, value] of [
      ['22.1.3', 'graceful_disable_timeout', 2],
      ['31.2.1', 'graceful_disable_timeout_sec', 90],
    ] as const) {
      const { sim, adapter } = await setup(t, { version, gracefulDisableSeconds: 90 });
      const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
      const vs = l7([['a.example', '/', 'Prefix', p.name]]);
      ok(
        await adapter.apply([
          { op: 'create', kind: 'pool', name: p.name, desired: p },
          { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
        ]),
      );
      const stored = sim.objects('pool').get('c1--web')!;
      assert.equal(stored[field], value, `${version}: ${field}`);
      // The controller fills defaults (its algorithm is least connections): npl-lb writes its own.
      assert.equal(stored.lb_algorithm, 'LB_ALGORITHM_ROUND_ROBIN', 'written, not left to the default');
      assert.equal(stored.inline_health_monitor, true, 'the controller filled defaults');
      // A new adapter (a restart) reads everything back, defaults and absolute refs included.
      const again = new AviAdapter({
        owner: 'c1',
        url: sim.url,
        username: 'admin',
        password: 'admin',
        version,
        tenant: 'admin',
        gracefulDisableSeconds: 90,
      });
      t.after(() => again.close());
      const seen = await again.observe();
      const writes = sim.stats.writes;
      const r = await again.apply([
        { op: 'update', kind: 'pool', name: p.name, desired: p, observed: seen.owned.pools[0]! },
        {
          op: 'update',
          kind: 'virtualService',
          name: vs.name,
          desired: vs,
          observed: seen.owned.virtualServices[0]!,
        },
      ]);
      ok(r);
      assert.equal(sim.stats.writes, writes, `${version}: no write after a restart`);
      // A new timeout is a change of what we own: written.
      const longer = new AviAdapter({
        owner: 'c1',
        url: sim.url,
        username: 'admin',
        password: 'admin',
        version,
        tenant: 'admin',
        gracefulDisableSeconds: -1,
      });
      t.after(() => longer.close());
      ok(await longer.apply([{ op: 'update', kind: 'pool', name: p.name, desired: p, observed: p }]));
      assert.equal(sim.objects('pool').get('c1--web')![field], -1);
    }
  });

  it('a delete refused because another object still refers to it (400 or 403) is InUse, retryable', async (t) => {
    const { sim, adapter } = await setup(t);
    const p = pool('c1--web', [['192.0.2.1', 61000, 'n1']]);
    ok(await adapter.apply([{ op: 'create', kind: 'pool', name: p.name, desired: p }]));
    // Someone else's virtual service uses our pool.
    await adapter.session.call('POST', '/api/vsvip', {
      name: 'theirs',
      vip: [{ vip_id: '0', ip_address: { addr: '192.0.2.50', type: 'V4' } }],
    });
    const theirs = await adapter.session.call('POST', '/api/virtualservice', {
      name: 'theirs',
      vsvip_ref: '/api/vsvip?name=theirs',
      pool_ref: `/api/pool?name=${p.name}`,
      services: [{ port: 80 }],
      application_profile_ref: '/api/applicationprofile?name=System-L4-Application',
    });
    assert.equal(theirs.status, 201);
    for (const status of [400, 403] as const) {
      sim.faults.referencedDeleteStatus = status;
      const [r] = await adapter.apply([{ op: 'delete', kind: 'pool', name: p.name, observed: p }]);
      assert.equal(r!.ok, false);
      assert.equal(r!.error!.code, 'InUse', `${status}: ${r!.error!.message}`);
      assert.equal(r!.error!.terminal, false);
      assert.match(r!.error!.message, /referred by: \['VirtualService theirs'\]/);
    }
    assert.ok(sim.objects('pool').has(p.name), 'still there');
  });
});
