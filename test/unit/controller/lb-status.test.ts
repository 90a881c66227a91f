import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { portError, serviceIngress, showsAlready } from '../../../src/controller/lb-status.ts';
import { serviceSchema } from '../../../src/kube/objects.ts';

const svc = serviceSchema.parse({
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    type: 'LoadBalancer',
    ports: [
      { name: 'http', port: 80, protocol: 'TCP' },
      { name: 'dns', port: 53, protocol: 'UDP' },
      { name: 'sig', port: 9, protocol: 'SCTP' },
    ],
  },
});
const vs = (proto: string, port: number) => `c1--default-web-${proto}-${port}`;

describe('Service load-balancer status', () => {
  it('publishes the VIP with ipMode and a port error for each port not programmed', () => {
    const st = { vip: '192.0.2.7', virtualServices: [vs('TCP', 80), vs('UDP', 53)], problem: undefined };
    const failed = new Map([
      [vs('UDP', 53), { code: 'Invalid' as const, message: 'no UDP', terminal: true }],
    ]);
    const want = serviceIngress(svc, st, 'c1', 'Proxy', (n) => failed.get(n));
    assert.deepEqual(want, [
      {
        ip: '192.0.2.7',
        ipMode: 'Proxy',
        ports: [
          { port: 80, protocol: 'TCP' },
          { port: 53, protocol: 'UDP', error: 'npl-lb.io/Invalid' },
          { port: 9, protocol: 'SCTP', error: 'npl-lb.io/UnsupportedProtocol' },
        ],
      },
    ]);
    // No port works: no VIP is published.
    assert.deepEqual(
      serviceIngress(svc, { ...st, virtualServices: [] }, 'c1', 'VIP', () => undefined),
      [],
    );
    assert.deepEqual(
      serviceIngress(
        svc,
        { vip: undefined, virtualServices: [], problem: 'no VIP' },
        'c1',
        'VIP',
        () => undefined,
      ),
      [],
    );
    assert.equal(portError('Not Owned!'), 'npl-lb.io/NotOwned');
  });

  it('compares every field until written once, then leaves alone what the server dropped', () => {
    const want = [{ ip: '192.0.2.7', ipMode: 'Proxy' as const, ports: [{ port: 80, protocol: 'TCP' }] }];
    assert.equal(showsAlready([], want, false), false);
    assert.equal(
      showsAlready([{ ip: '192.0.2.7' }], want, false),
      false,
      'written by an older npl-lb: brought up to date',
    );
    assert.equal(
      showsAlready([{ ip: '192.0.2.7' }], want, true),
      true,
      'an older server dropped ipMode and ports',
    );
    assert.equal(
      showsAlready([{ ip: '192.0.2.7', ipMode: 'VIP', ports: [{ port: 80, protocol: 'TCP' }] }], want, true),
      false,
    );
    assert.equal(
      showsAlready(
        [{ ip: '192.0.2.7', ipMode: 'Proxy', ports: [{ port: 80, protocol: 'TCP', error: 'npl-lb.io/X' }] }],
        want,
        true,
      ),
      false,
    );
    assert.equal(
      showsAlready(
        [{ ip: '192.0.2.7', ipMode: 'Proxy', ports: [{ port: 80, protocol: 'TCP' }] }],
        want,
        false,
      ),
      true,
    );
    assert.equal(showsAlready([{ ip: '192.0.2.8', ipMode: 'Proxy' }], want, true), false);
  });
});
