/**
 * LoadBalancer Services sharing one VIP under a sharing key (issue 33 item 4, MetalLB's
 * `allow-shared-ip`): sharers whose ports do not clash hold one address, picked, requested or
 * published (a restart keeps it); a sharer whose port clashes, or another key, is refused the
 * address (a conflict naming the ports) or gets one of its own; a key that is not one refuses the
 * Service. A property: whatever the requests, every address is held by one object or by sharers of
 * one key with disjoint ports.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import { allocateVips, deviceVips, type VipRequest } from '../../../src/source/vips/vips.ts';
import { clusterView, kubeService } from '../../support/kube-objects.ts';

const CIDRS = ['192.0.2.0/28'];
const sharer = (
  key: string,
  share: string,
  ports: string[],
  extra: Partial<VipRequest> = {},
): VipRequest => ({
  key,
  share: { key: share, ports },
  ...extra,
});
const vipOf = (m: Map<string, unknown>, k: string) => (m.get(k) as { vip?: string } | undefined)?.vip;

describe('shared VIPs', () => {
  it('sharers with disjoint ports hold one picked address; a clashing port or another key gets its own', () => {
    const out = allocateVips(
      [
        sharer('service/a/dns-tcp', 'dns', ['TCP/53']),
        sharer('service/a/dns-udp', 'dns', ['UDP/53']),
        sharer('service/b/dns-again', 'dns', ['UDP/53']),
        sharer('service/c/other', 'web', ['UDP/53']),
        { key: 'service/d/plain' },
      ],
      CIDRS,
    );
    const shared = vipOf(out, 'service/a/dns-tcp');
    assert.ok(shared);
    assert.equal(vipOf(out, 'service/a/dns-udp'), shared, 'TCP/53 and UDP/53 share');
    assert.notEqual(vipOf(out, 'service/b/dns-again'), shared, 'UDP/53 twice does not');
    assert.notEqual(vipOf(out, 'service/c/other'), shared, 'another key does not');
    assert.notEqual(vipOf(out, 'service/d/plain'), shared, 'nor an object without a key');
  });

  it('a requested address is shared by sharers of its key; a clash or another key is a conflict naming why', () => {
    const out = allocateVips(
      [
        sharer('service/a/x', 'k', ['TCP/80'], { requested: '192.0.2.5' }),
        sharer('service/a/y', 'k', ['TCP/443'], { requested: '192.0.2.5' }),
        sharer('service/a/z', 'k', ['TCP/80', 'TCP/8080'], { requested: '192.0.2.5' }),
        sharer('service/b/w', 'other', ['TCP/9000'], { requested: '192.0.2.5' }),
        { key: 'service/c/v', requested: '192.0.2.5' },
        // Without a request, a sharer joins the address its key holds.
        sharer('service/d/u', 'k', ['TCP/22']),
      ],
      CIDRS,
    );
    assert.equal(vipOf(out, 'service/a/x'), '192.0.2.5');
    assert.equal(vipOf(out, 'service/a/y'), '192.0.2.5');
    assert.equal(vipOf(out, 'service/d/u'), '192.0.2.5');
    assert.deepEqual(out.get('service/a/z'), {
      conflict: '192.0.2.5 is shared under key k, and TCP/80 is already used there by service/a/x',
    });
    assert.deepEqual(out.get('service/b/w'), { conflict: '192.0.2.5 is already used by service/a/x' });
    assert.deepEqual(out.get('service/c/v'), { conflict: '192.0.2.5 is already used by service/a/x' });
  });

  it('a restart keeps the shared address published by each sharer', () => {
    const out = allocateVips(
      [
        sharer('service/a/x', 'k', ['TCP/80'], { published: '192.0.2.9' }),
        sharer('service/a/y', 'k', ['TCP/443'], { published: '192.0.2.9' }),
        { key: 'service/b/z', published: '192.0.2.9' },
      ],
      CIDRS,
    );
    assert.equal(vipOf(out, 'service/a/x'), '192.0.2.9');
    assert.equal(vipOf(out, 'service/a/y'), '192.0.2.9');
    assert.notEqual(vipOf(out, 'service/b/z'), '192.0.2.9', 'a newcomer without the key moves');
  });

  it('where the device allocates: sharers of a key are one group (one address), a clashing port a group of its own', () => {
    const out = deviceVips([
      sharer('service/a/x', 'k', ['TCP/80']),
      sharer('service/a/y', 'k', ['TCP/443']),
      sharer('service/a/z', 'k', ['TCP/80']),
    ]);
    assert.equal(vipOf(out, 'service/a/x'), vipOf(out, 'service/a/y'));
    assert.match(vipOf(out, 'service/a/x') ?? '', /share\/k/);
    assert.notEqual(vipOf(out, 'service/a/z'), vipOf(out, 'service/a/x'));
  });

  it("property: every address is one object's, or sharers' of one key with disjoint ports", () => {
    const request = fc.record({
      key: fc.integer({ min: 0, max: 30 }).map((n) => `service/ns/s${n}`),
      share: fc.option(
        fc.record({
          key: fc.constantFrom('a', 'b'),
          ports: fc.uniqueArray(fc.constantFrom('TCP/80', 'TCP/443', 'UDP/53', 'TCP/53'), {
            minLength: 1,
            maxLength: 3,
          }),
        }),
        { nil: undefined },
      ),
      requested: fc.option(fc.constantFrom('192.0.2.3', '192.0.2.4', '192.0.2.200'), { nil: undefined }),
      published: fc.option(fc.constantFrom('192.0.2.3', '192.0.2.5'), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(request, { selector: (r) => r.key, maxLength: 20 }), (raw) => {
        const reqs: VipRequest[] = raw.map((r) => ({
          key: r.key,
          ...(r.share ? { share: r.share } : {}),
          ...(r.requested ? { requested: r.requested } : {}),
          ...(r.published ? { published: r.published } : {}),
        }));
        const out = allocateVips(reqs, CIDRS);
        const byIp = new Map<string, VipRequest[]>();
        for (const r of reqs) {
          const ip = vipOf(out, r.key);
          if (ip) byIp.set(ip, [...(byIp.get(ip) ?? []), r]);
        }
        for (const [ip, holders] of byIp) {
          if (holders.length === 1) continue;
          const keys = new Set(holders.map((h) => h.share?.key));
          assert.equal(keys.size, 1, `${ip}: one key`);
          assert.ok(!keys.has(undefined), `${ip}: only sharers share`);
          const ports = holders.flatMap((h) => [...h.share!.ports]);
          assert.equal(new Set(ports).size, ports.length, `${ip}: disjoint ports`);
        }
      }),
      { numRuns: 300, seed: 33 },
    );
  });

  it('through a build: two Services on one address with their own virtual services; a bad key refuses its Service, said', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const svc = (name: string, key: string, port: number, protocol = 'TCP') =>
      kubeService(
        name,
        { type: 'LoadBalancer', ports: [{ name: 'p', port, protocol, targetPort: port }] },
        { annotations: { 'npl-lb.io/allow-shared-vip': key } },
      );
    const r = buildDesired(
      clusterView({
        services: [svc('dns-tcp', 'dns', 53), svc('dns-udp', 'dns', 53, 'UDP'), svc('bad', 'no spaces', 80)],
      }),
      cfg,
      SERVE_ALL,
    );
    const vips = new Map(r.state.virtualServices.map((v) => [v.name, v.vip]));
    assert.equal(vips.get('c1--default-dns-tcp-TCP-53'), vips.get('c1--default-dns-udp-UDP-53'));
    assert.ok(vips.get('c1--default-dns-tcp-TCP-53'));
    assert.ok(![...vips.keys()].some((n) => n.includes('-bad-')), 'the bad key serves nothing');
    const bad = r.services.get('default/bad')!;
    assert.equal(bad.reason, 'InvalidVIP');
    assert.match(bad.problem ?? '', /npl-lb\.io\/allow-shared-vip: "no spaces" is not a sharing key/);
  });
});
