/**
 * Issue 50, item 5: VIP requests carry who asks as a tagged union (VipRequester), built by the
 * sources and read by kind, never parsed back from a key text. A LoadBalancer Service and an
 * IngressClass ask in each family they are served in; the outcome is looked up by the requester;
 * a Service served in no family is told why, an IngressClass asking nothing gets the plain
 * "no VIP"; a name with a slash in no way collides with another kind's key.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { requesterKey } from '../../../src/source/vips/requester.ts';
import { assignVips, familyVips, vipRequests } from '../../../src/source/vips/requests.ts';
import { clusterView, kubeIngress, kubeIngressClass, kubeService } from '../../support/kube-objects.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28, "fd00::/124"]}\n');

describe('VIP requesters', () => {
  it('each source asks as its kind; the outcome is found by the requester; no key text is parsed', () => {
    const svc = kubeService('web', { type: 'LoadBalancer', ports: [{ port: 80, protocol: 'TCP' }] });
    const ing = kubeIngress('shop', { className: 'npl', host: 'a.example', service: 'web', port: 80 });
    const view = clusterView({
      services: [svc],
      ingresses: [ing],
      ingressClasses: [kubeIngressClass('npl')],
    });
    const asked = vipRequests([svc], new Map([['npl', [ing]]]), view, cfg, {
      ofService: () => ({ families: ['IPv4'] }),
      all: ['IPv4', 'IPv6'],
    });
    assert.deepEqual(
      asked.map((r) => [r.requester.kind, r.family, r.key]),
      [
        ['service', 'IPv4', 'service/default/web'],
        ['ingressclass', 'IPv4', 'ingressclass/npl'],
        ['ingressclass', 'IPv6', 'ingressclass/npl'],
      ],
    );
    for (const r of asked) assert.equal(r.key, requesterKey(r.requester));
    const told: string[] = [];
    const vipOf = familyVips(asked, assignVips(asked, cfg, false), {
      noCidrs: false,
      unserved: (who) => {
        told.push(who.kind);
        return who.kind === 'service' ? 'IPv6 only, and vip.cidrs has none' : undefined;
      },
    });
    const web = vipOf({ kind: 'service', namespace: 'default', name: 'web' });
    assert.match(web.vip ?? '', /^192\.0\.2\./);
    const cls = vipOf({ kind: 'ingressclass', name: 'npl' });
    assert.match(cls.vip ?? '', /^192\.0\.2\./);
    assert.equal(cls.more?.[0]?.family, 'IPv6');
    assert.notEqual(web.vip, cls.vip);
    // Asking nothing: the requester, not a parsed key, decides what is said.
    assert.equal(
      vipOf({ kind: 'service', namespace: 'other', name: 'db' }).problem,
      'IPv6 only, and vip.cidrs has none',
    );
    assert.equal(vipOf({ kind: 'gateway', namespace: 'default', name: 'web' }).problem, 'no VIP');
    assert.deepEqual(told, ['service', 'gateway']);
  });

  it('keys of different kinds never collide, whatever the names', () => {
    const keys = [
      requesterKey({ kind: 'service', namespace: 'a', name: 'b' }),
      requesterKey({ kind: 'gateway', namespace: 'a', name: 'b' }),
      requesterKey({ kind: 'ingressclass', name: 'a/b' }),
    ];
    assert.equal(new Set(keys).size, 3);
  });
});
