import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PortReserver, Reservation } from '../../../src/agent/port-reservation.ts';
import { PortTable } from '../../../src/agent/port-table.ts';
import type { Target } from '../../../src/agent/selection.ts';

/** Reserves any port not in `busy`; records what is held. */
function fakeReserver(busy: Set<number> = new Set()): PortReserver & { held: Set<string> } {
  const held = new Set<string>();
  return {
    held,
    reserve: async (address, port, protocol) => {
      const k = `${protocol}/${address}/${port}`;
      if (busy.has(port) || held.has(k)) return undefined;
      held.add(k);
      const r: Reservation = {
        address,
        port,
        protocol,
        onConnection: undefined,
        onDatagram: undefined,
        sendDatagram: () => {},
        release: async () => {
          held.delete(k);
        },
      };
      return r;
    },
  };
}

const t = (podPort: number, protocol: 'tcp' | 'udp' = 'tcp', family: 'IPv4' | 'IPv6' = 'IPv4'): Target => ({
  podPort,
  protocol,
  family,
  podIP: family === 'IPv4' ? '10.0.0.1' : 'fd00::1',
});

describe('port table', () => {
  it('allocates next-fit: a freed port is not handed out again until the cursor wraps', async () => {
    const table = new PortTable({ start: 100, end: 103 }, fakeReserver(), () => '127.0.0.1');
    const a = (await table.allocate('ns/a', t(80)))!;
    const b = (await table.allocate('ns/b', t(80)))!;
    assert.deepEqual([a.nodePort, b.nodePort], [100, 101]);
    await table.release(a);
    const c = (await table.allocate('ns/c', t(80)))!;
    const d = (await table.allocate('ns/d', t(80)))!;
    const e = (await table.allocate('ns/e', t(80)))!;
    assert.deepEqual([c.nodePort, d.nodePort, e.nodePort], [102, 103, 100], 'wraps to the freed port last');
    assert.equal(await table.allocate('ns/f', t(80)), undefined, 'exhausted');
  });

  it('skips ports it cannot bind; TCP, UDP and each family have their own ports', async () => {
    const table = new PortTable({ start: 100, end: 102 }, fakeReserver(new Set([100])), (f) =>
      f === 'IPv4' ? '127.0.0.1' : '::1',
    );
    assert.equal((await table.allocate('ns/a', t(80)))!.nodePort, 101);
    assert.equal((await table.allocate('ns/a', t(80, 'udp')))!.nodePort, 101);
    assert.equal((await table.allocate('ns/a', t(80, 'tcp', 'IPv6')))!.nodePort, 101);
    assert.deepEqual(
      table.counts().map((c) => `${c.protocol}/${c.family}=${c.allocated}/${c.free}`),
      ['tcp/IPv4=1/2', 'tcp/IPv6=1/2', 'udp/IPv4=1/2', 'udp/IPv6=0/3'].sort((x, y) => (x < y ? -1 : 1)),
    );
  });

  it('claims a specific port only when in range, free and bindable', async () => {
    const table = new PortTable({ start: 100, end: 110 }, fakeReserver(new Set([105])), () => '127.0.0.1');
    assert.ok(await table.claim('ns/a', t(80), 104));
    assert.equal(await table.claim('ns/b', t(80), 104), undefined, 'taken');
    assert.equal(await table.claim('ns/b', t(80), 105), undefined, 'not bindable');
    assert.equal(await table.claim('ns/b', t(80), 99), undefined, 'out of range');
    assert.equal(table.forPod('ns/a')[0]!.nodePort, 104);
  });
});
