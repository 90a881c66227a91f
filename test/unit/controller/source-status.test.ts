/**
 * A Service or Ingress is given an address only once the device holds its virtual service: a
 * create still held by the pass's gates (or in flight) is not programmed yet, and its status waits
 * for the write that finds it there, even when nothing else changed in between. Seen once in a
 * clean-clone run: the BIG-IP simulator's document was empty while the Service had its addresses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import { notOnDevice } from '../../../src/controller/pass-report.ts';
import { SourceStatusWriter } from '../../../src/controller/source-status.ts';
import type { StateTracker } from '../../../src/controller/state.ts';
import type { LbIngress } from '../../../src/controller/lb-status.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import type { ObservedByName } from '../../../src/plan/diff.ts';
import type { VirtualService } from '../../../src/model/types.ts';
import { backendSvc, cfg, dualPods, site, svc, view, webClass } from '../../support/dual-stack.ts';

const state = (failed: Set<string> = new Set()) =>
  ({
    failed: (_k: string, n: string) => failed.has(n),
    failure: () => undefined,
    failureVersion: 0,
  }) as unknown as StateTracker;

function writerOf() {
  const written: { kind: string; name: string; ingress: LbIngress[] }[] = [];
  const w = new SourceStatusWriter({
    writer: { write: async (kind, _ns, name, ingress) => void written.push({ kind, name, ingress }) },
    state: state(),
    clusterName: 'c1',
    ipMode: 'Proxy',
  });
  return { w, written };
}

describe('status waits for the device to hold the virtual service', () => {
  it('a LoadBalancer Service: no address while its virtual service is not on the device; the address once it is', async () => {
    const v = view({ services: [svc('web', undefined, undefined)], pods: dualPods });
    const d = buildDesired(v, cfg());
    const vs = d.services.get('default/web')!.virtualServices;
    assert.equal(vs.length, 1);
    const { w, written } = writerOf();
    await w.write(v, d, new Set(vs));
    assert.deepEqual(written.at(-1)?.ingress ?? [], [], 'no address before the device has it');
    assert.equal(w.live(d.services.get('default/web')!), false);
    // The next pass finds it on the device; nothing else changed (the same view and desired state).
    await w.write(v, d, new Set());
    const last = written.at(-1)!;
    assert.equal(last.ingress.length, 1, 'the address, once it is there');
    assert.equal(last.ingress[0]!.ip, d.services.get('default/web')!.vip);
    assert.equal(last.ingress[0]!.ports?.[0]?.error, undefined);
    assert.equal(w.live(d.services.get('default/web')!), true);
  });

  it("an Ingress of a dual-stack class: each family's address once its virtual services are on the device", async () => {
    const v = view({ services: [backendSvc], ingresses: [site], ingressClasses: [webClass], pods: dualPods });
    const d = buildDesired(v, cfg());
    const st = d.ingresses.get('default/site')!;
    const { w, written } = writerOf();
    await w.write(v, d, new Set(['c1--ingress-web_v6']));
    assert.deepEqual(
      written.at(-1)!.ingress.map((i) => i.ip),
      [st.vip],
      'the IPv4 address alone while the IPv6 twin waits',
    );
    await w.write(v, d, new Set());
    assert.deepEqual(
      written.at(-1)!.ingress.map((i) => i.ip),
      [st.vip, ...(st.moreVips ?? [])],
    );
  });
});

describe('notOnDevice', () => {
  const observed = (names: string[]): ObservedByName => ({
    pools: new Map(),
    virtualServices: new Map(names.map((n) => [n, { name: n } as VirtualService])),
    certificates: new Map(),
    foreign: new Map(),
    drifted: new Set(),
  });
  const created = (name: string, ok: boolean): ApplyResult =>
    ({ ok, change: { kind: 'virtualService', op: 'create', name } }) as unknown as ApplyResult;

  it('the pending virtual services the device does not hold and this pass did not create', () => {
    const pending = new Set([
      'virtualService/held-create',
      'virtualService/pending-update',
      'virtualService/created-now',
      'virtualService/failed-create',
      'pool/p1',
    ]);
    const got = notOnDevice(pending, observed(['pending-update']), [
      created('created-now', true),
      created('failed-create', false),
    ]);
    assert.deepEqual([...got].sort(), ['failed-create', 'held-create']);
  });

  it('nothing pending: nothing waits (no walk of the desired state)', () => {
    assert.equal(notOnDevice(new Set(), observed([]), []).size, 0);
  });
});
