/**
 * HTTPS on F5: certificates as AS3 `Certificate` objects with the model's fields in the
 * application's constants, a `Service_HTTPS` whose `TLS_Server` lists them in order (the first the
 * default, the others chosen by SNI), no redirect from port 80. Rotation posts the certificate's
 * application alone; a certificate still used cannot go; a key that does not match is refused
 * before sending; what is read back is what was applied, with the key's digest for the key.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import { keyDigest } from '../../../../src/model/normalize.ts';
import type { Certificate, L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { f5Certificate } from '../../../support/f5-sim.ts';

type Json = Record<string, unknown>;

/** A certificate of the model from the default namespace, with a real key. */
const cert = (name: string, host: string): Promise<Certificate> => f5Certificate(name, host, 'default');
const pool: Pool = {
  name: 'c1--web',
  protocol: 'TCP',
  health: 'http',
  service: 'default/web',
  servicePort: 'http',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/p', enabled: true }],
};
const https = (certs: string[]): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl-https',
  vip: '192.0.2.20',
  port: 443,
  ingressClass: 'npl',
  defaultPool: undefined,
  protocol: 'HTTPS',
  certificates: certs,
  routes: [{ host: 'a.example.com', path: '/', pathType: 'Prefix', pool: pool.name, source: 'default/ing' }],
});

describe('F5 certificates and HTTPS', () => {
  for (const as3Version of ['3.56.0', '3.46.0']) {
    it(`AS3 ${as3Version}: Service_HTTPS with a TLS_Server of the certificates in order; rotation, removal, a bad key`, async (t) => {
      const sim = new BigIpSimulator({ as3Version });
      const url = await sim.start();
      const adapter = new F5Adapter({
        owner: 'c1',
        url,
        username: 'admin',
        password: 'admin',
        taskPollMs: 10,
      });
      t.after(async () => {
        await adapter.close();
        await sim.close();
      });
      const a = await cert('c1--default.a-tls', 'a.example.com');
      const b = await cert('c1--default.b-tls', 'b.example.com');
      const vs = https([a.name, b.name]);
      const ok = (r: { ok: boolean; error?: { message: string } }[]) =>
        assert.deepEqual(
          r.map((x) => (x.ok ? 'ok' : x.error?.message)),
          r.map(() => 'ok'),
        );
      ok(
        await adapter.apply([
          { op: 'create', kind: 'pool', name: pool.name, desired: pool },
          { op: 'create', kind: 'certificate', name: a.name, desired: a },
          { op: 'create', kind: 'certificate', name: b.name, desired: b },
          { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
        ]),
      );
      /** Every object of the tenant by name, in whichever application. */
      const objects = () =>
        Object.assign(
          {},
          ...Object.values(sim.tenants.get('npl_lb_c1')!)
            .filter((x) => (x as Json | null)?.class === 'Application')
            .map((x) => x as Json),
        ) as Record<string, Json>;
      const o = objects();
      assert.equal(o[vs.name]!.class, 'Service_HTTPS');
      assert.equal(o[vs.name]!.redirect80, false);
      const tls = o[String(o[vs.name]!.serverTLS)]!;
      assert.equal(tls.class, 'TLS_Server');
      assert.deepEqual(
        (tls.certificates as { certificate: string }[]).map((c) => c.certificate.split('/').pop()),
        [a.name, b.name],
        'the default first',
      );
      assert.equal(o[a.name]!.class, 'Certificate');
      assert.equal(o[a.name]!.certificate, a.certPem);

      // Read back: exactly the model, the key as its digest.
      const seen = await adapter.observe();
      assert.deepEqual(seen.owned.virtualServices, [vs]);
      assert.deepEqual(
        seen.owned.certificates?.map((c) => [c.name, c.fingerprint, c.keyPem]),
        [a, b].map((c) => [c.name, c.fingerprint, keyDigest(c.keyPem)]),
      );

      // Rotation: the certificate alone (per application: its application alone).
      const a2 = { ...(await cert(a.name, 'a.example.com')) };
      const apps0 = sim.stats.appsPosted;
      const before = structuredClone(sim.tenants.get('npl_lb_c1')!);
      ok(
        await adapter.apply([{ op: 'update', kind: 'certificate', name: a.name, desired: a2, observed: a }]),
      );
      assert.equal(objects()[a.name]!.certificate, a2.certPem);
      assert.equal(objects()[b.name]!.privateKey, b.keyPem, 'the other certificate keeps its key');
      const after = sim.tenants.get('npl_lb_c1')!;
      const changedApps = Object.keys(after).filter(
        (k) => JSON.stringify(after[k]) !== JSON.stringify(before[k]),
      );
      if (as3Version === '3.56.0')
        assert.equal(sim.stats.appsPosted - apps0, 1, `one application posted: ${changedApps}`);

      // A certificate still used by the listener cannot go; a key that does not match is refused alone.
      const [gone] = await adapter.apply([{ op: 'delete', kind: 'certificate', name: b.name, observed: b }]);
      assert.equal(gone!.ok, false);
      assert.equal(gone!.error!.code, 'InUse');
      const c = await cert('c1--default.c-tls', 'c.example.com');
      const bad = { ...c, keyPem: a2.keyPem };
      const pool2 = { ...pool, name: 'c1--web2' };
      const r = await adapter.apply([
        { op: 'create', kind: 'certificate', name: bad.name, desired: bad },
        { op: 'create', kind: 'pool', name: pool2.name, desired: pool2 },
      ]);
      assert.deepEqual(
        r.map((x) => `${x.change.name} ${x.ok} ${x.error?.code ?? ''} ${x.error?.terminal ?? ''}`),
        ['c1--default.c-tls false Invalid true', 'c1--web2 true  '],
      );
      assert.match(r[0]!.error!.message, /private key does not match/);
      assert.equal(objects()[bad.name], undefined, 'never sent');

      // The listener drops b, then b goes.
      ok(
        await adapter.apply([
          { op: 'update', kind: 'virtualService', name: vs.name, desired: https([a.name]), observed: vs },
        ]),
      );
      ok(await adapter.apply([{ op: 'delete', kind: 'certificate', name: b.name, observed: b }]));
      assert.equal(objects()[b.name], undefined);
      assert.deepEqual(
        (await adapter.observe()).owned.certificates?.map((x) => x.name),
        [a.name],
      );
    });
  }
});
