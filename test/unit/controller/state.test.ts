/**
 * The state document shows certificates as views: subject, SANs, expiry and fingerprint, never the
 * key or the PEM, both in the top-level list and on the HTTPS virtual service that serves them.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { StateTracker } from '../../../src/controller/state.ts';
import type { Certificate, LbState } from '../../../src/model/types.ts';

const cert: Certificate = {
  name: 'c1--default-a-tls',
  source: 'default/a-tls',
  certPem: '-----BEGIN CERTIFICATE-----\nMIIBcert\n-----END CERTIFICATE-----\n',
  keyPem: '-----BEGIN PRIVATE KEY-----\nMIIBsecret\n-----END PRIVATE KEY-----\n',
  subject: 'CN=a.example.com',
  sniNames: ['a.example.com'],
  fingerprint: 'AB:CD',
  notAfter: '2030-01-01T00:00:00.000Z',
};

it('shows certificates without their key or PEM', () => {
  const desired: LbState = {
    pools: [],
    virtualServices: [
      {
        kind: 'l7',
        name: 'c1--ingress-npl-https',
        vip: '192.0.2.9',
        port: 443,
        ingressClass: 'npl',
        routes: [],
        defaultPool: undefined,
        protocol: 'HTTPS',
        certificates: [cert.name],
      },
    ],
    certificates: [cert],
  };
  const state = new StateTracker('c1', 'memory');
  state.record(desired, [], []);
  const doc = state.document();
  const text = JSON.stringify(doc);
  assert.ok(!text.includes('MIIBsecret') && !text.includes('PRIVATE KEY'), 'no key');
  assert.ok(!text.includes('MIIBcert'), 'no PEM');
  const view = {
    name: cert.name,
    subject: 'CN=a.example.com',
    sans: ['a.example.com'],
    notAfter: cert.notAfter,
    fingerprint: 'AB:CD',
  };
  assert.deepEqual(doc.virtualServices[0]!.certificates, [view]);
  assert.deepEqual(doc.certificates, [{ ...view, source: 'default/a-tls', lastApply: null }]);
});

it("a slice's health read replaces its pools' members, a member gone included, and keeps the others", () => {
  const state = new StateTracker('c1', 'fake');
  const h = (pool: string, port: number, health: 'up' | 'down') => ({
    pool,
    address: '192.0.2.1',
    port,
    admin: 'enabled' as const,
    health,
  });
  state.setHealth([h('a', 1, 'up'), h('a', 2, 'up'), h('b', 1, 'up')]);
  // The slice reads pool a alone: member 2 is no longer on the device, member 1 is down.
  state.setHealthOf(['a'], [h('a', 1, 'down')]);
  assert.equal(state.memberHealthOf('a', '192.0.2.1', 1), 'down');
  assert.equal(state.memberHealthOf('a', '192.0.2.1', 2), undefined);
  assert.equal(state.memberHealthOf('b', '192.0.2.1', 1), 'up');
  // A pool the slice names but the device no longer has: its members go.
  state.setHealthOf(['b'], []);
  assert.equal(state.memberHealthOf('b', '192.0.2.1', 1), undefined);
  // A whole read after slices starts from nothing, and a slice after it still finds its keys.
  state.setHealth([h('b', 3, 'up')]);
  assert.equal(state.memberHealthOf('a', '192.0.2.1', 1), undefined);
  state.setHealthOf(['b'], [h('b', 4, 'up')]);
  assert.equal(state.memberHealthOf('b', '192.0.2.1', 3), undefined);
  assert.equal(state.memberHealthOf('b', '192.0.2.1', 4), 'up');
});
