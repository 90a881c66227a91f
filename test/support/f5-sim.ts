/**
 * The BIG-IP adapter on the AS3 simulator for tests that apply a state and then edit the device as
 * an admin would: the adapter (owner c1), every object of its tenant by name (whichever
 * application holds it), an edit of one object in place, and a certificate with a real key.
 * Everything started is stopped after the test.
 */
import { X509Certificate } from 'node:crypto';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import type { Certificate } from '../../src/model/types.ts';
import { testCertificate } from './certs.ts';

type Json = Record<string, unknown>;
const TENANT = 'npl_lb_c1';

export interface F5Rig {
  sim: BigIpSimulator;
  adapter: F5Adapter;
  /** Every object of the tenant by name, in whichever application (one per service or pool, 3.47+). */
  objects: () => Record<string, Json>;
  /** An admin's edit of object `name`, in its application. */
  edit: (name: string, change: (o: Json) => void) => void;
}

export async function startF5(
  t: { after: (fn: () => Promise<void>) => void },
  as3Version?: string,
): Promise<F5Rig> {
  const sim = new BigIpSimulator(as3Version ? { as3Version } : {});
  const url = await sim.start();
  const adapter = new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin', taskPollMs: 10 });
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  const apps = (tenant: Json) =>
    Object.values(tenant).filter(
      (a): a is Record<string, Json> => (a as Json | null)?.class === 'Application',
    );
  return {
    sim,
    adapter,
    objects: () => Object.assign({}, ...apps(sim.tenants.get(TENANT) ?? {})) as Record<string, Json>,
    edit: (name, change) => {
      const tenant = structuredClone(sim.tenants.get(TENANT)!);
      for (const app of apps(tenant)) if (app[name]) change(app[name]);
      sim.tenants.set(TENANT, tenant);
    },
  };
}

/** A certificate of the model for `host`, with a real key (AS3 holds it as a Certificate object). */
export async function f5Certificate(name: string, host: string, namespace = 'infra'): Promise<Certificate> {
  const c = await testCertificate({ dns: [host] });
  const leaf = new X509Certificate(c.cert);
  return {
    name,
    source: `${namespace}/${name}`,
    certPem: c.cert,
    keyPem: c.key,
    subject: leaf.subject,
    sniNames: [host],
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
  };
}
