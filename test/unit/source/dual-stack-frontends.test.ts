/**
 * IPv6 and dual-stack frontends and statuses (issue 34): an IngressClass's VIPs per family and its
 * virtual services in each, IPv6 names (the `_v6` suffix past the length limit), an Ingress's
 * status per family while its virtual services are live, an IngressClass that asks addresses.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDesired } from '../../../src/source/desired.ts';
import { ingressClassSchema } from '../../../src/kube/objects.ts';
import { SourceStatusWriter } from '../../../src/controller/source-status.ts';
import type { StateTracker } from '../../../src/controller/state.ts';
import { familyName, isIPv6Name, limitName } from '../../../src/model/names.ts';

import { backendSvc, cfg, dualPods, site, view, webClass } from '../../support/dual-stack.ts';

describe('shared frontends in both families', () => {
  it('an IngressClass gets a VIP per family and its virtual services twice; the Ingress status lists both', () => {
    const d = buildDesired(
      view({ services: [backendSvc], ingresses: [site], ingressClasses: [webClass], pods: dualPods }),
      cfg(),
    );
    const l7 = d.state.virtualServices.filter((v) => v.kind === 'l7');
    assert.deepEqual(
      l7.map((v) => v.name),
      ['c1--ingress-web', 'c1--ingress-web_v6'],
    );
    assert.match(l7[1]!.vip, /^fd00:10::/);
    assert.deepEqual(
      l7[0]!.kind === 'l7' && l7[0]!.routes,
      l7[1]!.kind === 'l7' && l7[1]!.routes,
      'the same routes and pools',
    );
    const st = d.ingresses.get('default/site')!;
    assert.deepEqual(st.virtualServices, ['c1--ingress-web', 'c1--ingress-web_v6']);
    assert.deepEqual(st.moreVips, [l7[1]!.vip]);
    // The backend's pool stays in its primary family (IPv4 by default), one pool for both VIPs.
    assert.deepEqual(
      d.state.pools.map((p) => p.name),
      ['c1--default-web-http.l7'],
    );
  });
});

describe('names and statuses in both families', () => {
  it('an IPv6 twin keeps its _v6 suffix past the length limit, and no two names meet', () => {
    const long = `c1--${'n'.repeat(30)}-${'s'.repeat(40)}-TCP-80`;
    const limited = limitName(long);
    assert.equal(limited.length, 63);
    const twin = familyName(limited, 'IPv6');
    assert.ok(twin.endsWith('_v6') && twin.length === 63 && isIPv6Name(twin) && !isIPv6Name(limited));
    assert.notEqual(familyName(limitName(`${long}x`), 'IPv6'), twin);
    assert.equal(familyName('c1--default-web-TCP-80', 'IPv4'), 'c1--default-web-TCP-80');
  });

  it('an IPv6-only configuration: the IngressClass serves on IPv6 under IPv6 names', () => {
    const d = buildDesired(
      view({ services: [backendSvc], ingresses: [site], ingressClasses: [webClass], pods: dualPods }),
      cfg('["fd00:10::/120"]'),
    );
    assert.deepEqual(
      d.state.virtualServices.map((v) => v.name),
      ['c1--ingress-web_v6'],
    );
    const st = d.ingresses.get('default/site')!;
    assert.match(st.vip ?? '', /^fd00:10::/);
    assert.deepEqual(st.virtualServices, ['c1--ingress-web_v6']);
    assert.equal(st.moreVips, undefined);
  });

  it("an Ingress's status lists each family whose virtual services are live: a failed IPv6 twin leaves the IPv4 address", async () => {
    const v = view({ services: [backendSvc], ingresses: [site], ingressClasses: [webClass], pods: dualPods });
    const d = buildDesired(v, cfg());
    const written: string[][] = [];
    let failedNames = new Set<string>();
    const state = {
      failed: (_k: string, n: string) => failedNames.has(n),
      failure: () => undefined,
      get failureVersion() {
        return failedNames.size;
      },
    } as unknown as StateTracker;
    const w = new SourceStatusWriter({
      writer: { write: async (_k, _ns, _n, ingress) => void written.push(ingress.map((i) => i.ip)) },
      state,
      clusterName: 'c1',
      ipMode: 'Proxy',
    });
    await w.write(v, d);
    const st = d.ingresses.get('default/site')!;
    assert.deepEqual(written.at(-1), [st.vip, ...(st.moreVips ?? [])]);
    failedNames = new Set(['c1--ingress-web_v6']);
    await w.write(v, d);
    assert.deepEqual(written.at(-1), [st.vip], 'the IPv4 address stays');
  });
});

describe('an IngressClass that asks for its addresses', () => {
  const annotated = (vip: string) =>
    ingressClassSchema.parse({
      metadata: { name: 'web', annotations: { 'npl-lb.io/vip': vip } },
      spec: { controller: 'npl-lb.io/ingress-controller' },
    });
  const build = (vip: string) =>
    buildDesired(
      view({ services: [backendSvc], ingresses: [site], ingressClasses: [annotated(vip)], pods: dualPods }),
      cfg(),
    );
  it('gets the families of the addresses it names, as a Gateway does', () => {
    assert.deepEqual(
      build('192.0.2.9').state.virtualServices.map((v) => `${v.name} ${v.vip}`),
      ['c1--ingress-web 192.0.2.9'],
    );
    assert.deepEqual(
      build('192.0.2.9, fd00:10::9').state.virtualServices.map((v) => `${v.name} ${v.vip}`),
      ['c1--ingress-web 192.0.2.9', 'c1--ingress-web_v6 fd00:10::9'],
    );
    const bad = build('fd00:99::9').ingresses.get('default/site')!;
    assert.equal(bad.vip, undefined);
    assert.match(bad.problem ?? '', /fd00:99::9 is outside vip.cidrs \(fd00:10::\/120\)/);
  });
});
