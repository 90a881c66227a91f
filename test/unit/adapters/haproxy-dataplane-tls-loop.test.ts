/**
 * Mixed mode (TLS listeners of both modes on one port) as Data Plane API objects, without a
 * HAProxy: the port's frontend routes by the ClientHello (passthrough names to their pools, the
 * rest to the loop's backend) with no `ssl` on its bind; the loop's backend sends to an abstract
 * socket with a PROXY header and the loop's frontend terminates there with the crt-list, routing by
 * the session's name; the device read back is the one virtual service it was written from. A loop
 * whose bind lost its `ssl`, or whose server no longer sends the header, or a missing half, reads
 * as no termination (written again); a hostile host name stays one quoted argument; two Data Plane
 * APIs on one host never share a loop socket; loop sections are attached to their port, and left
 * as sections of their own (for the next pass to delete) where the port is gone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type DeviceFrontend,
  frontendFor,
  readVirtualService,
} from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import type { DeviceBackend, LayoutOptions } from '../../../adapters/haproxy/dataplane/layout.ts';
import { attachLoops, loopOf } from '../../../adapters/haproxy/dataplane/tls-loop.ts';
import * as kit from '../../support/model.ts';
import type { L4VirtualService } from '../../../src/model/types.ts';

const LAYOUT: LayoutOptions = {
  owner: 'c1',
  apiVersion: 'v3',
  slots: 4,
  healthChecks: false,
  transparentBinds: true,
  instance: 'https://haproxy-a.example:5555',
};
const CRT_LIST = '/etc/haproxy/ssl/c1--gw-infra.mixed-TLS-8883.crtlist';
const mixed = kit.mixedTlsPort;

/** What the device holds once the layout is written, as observe() reads it (crt-list certificates included). */
function device(v: L4VirtualService, layout = LAYOUT): DeviceFrontend {
  const f = frontendFor(v, layout, CRT_LIST);
  const loop = f.loop!;
  return {
    frontend: f.frontend,
    binds: f.binds,
    certificates: v.certificates ?? [],
    loop: { backend: loop.backend, servers: loop.servers, frontend: loop.frontend, binds: loop.binds },
  };
}

describe('Mixed mode on the Data Plane API', () => {
  it('routes by the ClientHello, terminates the rest round the loop, and reads back as one virtual service', () => {
    const v = mixed();
    const f = frontendFor(v, LAYOUT, CRT_LIST);
    assert.equal(f.binds.length, 1);
    assert.equal(f.binds[0]!.ssl, undefined, 'no ssl on the port: the ClientHello is read first');
    assert.deepEqual(
      f.tcpRequest.map((r) => r.type),
      ['inspect-delay', 'content'],
    );
    assert.deepEqual(
      f.rules.map((r) => `${r.name} if ${r.cond_test}`),
      [
        'c1--infra-tcp-backend-8443 if { req_ssl_sni -m str -i "abc.example.com" }',
        'c1--gw-infra.mixed-TLS-8883_tls if { req_ssl_sni -m str -i "tls.example.com" }',
      ],
    );
    const loop = f.loop!;
    assert.equal(loop.backend.name, `${v.name}_tls`);
    assert.equal(loopOf(loop.backend.description), v.name);
    assert.equal(loopOf(loop.frontend.description), v.name);
    const [server] = loop.servers;
    const [bind] = loop.binds;
    assert.match(server!.address, /^abns@npl-[0-9a-f]{12}-c1--gw-infra\.mixed-TLS-8883$/);
    assert.equal(server!['send-proxy-v2'], 'enabled');
    assert.equal(server!.port, undefined);
    // A socket, not a VIP: never `transparent`, whatever the layout says of VIPs.
    assert.deepEqual(bind, {
      name: 'loop',
      address: server!.address,
      accept_proxy: true,
      ssl: true,
      crt_list: CRT_LIST,
    });
    assert.deepEqual(
      loop.rules.map((r) => `${r.name} if ${r.cond_test}`),
      ['c1--infra-tcp-backend-3000 if { ssl_fc_sni -m str -i "tls.example.com" }'],
      'a passthrough name is never terminated',
    );
    assert.deepEqual(readVirtualService(device(v)), v);
  });

  it('a loop that no longer terminates, or half of one, reads as no termination, so the next pass writes it again', () => {
    const v = mixed();
    const read = (edit: (d: DeviceFrontend) => void) => {
      const d = structuredClone(device(v));
      edit(d);
      return (readVirtualService(d) as L4VirtualService).certificates;
    };
    assert.deepEqual(
      read(() => undefined),
      v.certificates,
    );
    assert.equal(
      read((d) => delete d.loop!.binds[0]!.ssl),
      undefined,
      'ssl taken off the loop bind',
    );
    assert.equal(
      read((d) => delete d.loop!.binds[0]!.accept_proxy),
      undefined,
      'no PROXY header taken',
    );
    assert.equal(
      read((d) => delete d.loop!.servers[0]!['send-proxy-v2']),
      undefined,
      'no PROXY header sent',
    );
    assert.equal(
      read((d) => (d.loop!.servers[0]!.address = 'abns@other')),
      undefined,
      'sent elsewhere',
    );
    assert.equal(
      read((d) => delete d.loop!.frontend),
      undefined,
      "the loop's frontend deleted",
    );
    assert.equal(
      read((d) => delete d.loop),
      undefined,
      'no loop',
    );
    assert.equal(
      read((d) => Object.assign(d.binds[0]!, { ssl: true, crt_list: CRT_LIST })),
      undefined,
      'the port terminating itself: the passthrough names would be broken',
    );
  });

  it('a hostile host name stays one quoted argument', () => {
    const v = mixed('a b"}\n  use_backend x');
    const f = frontendFor(v, LAYOUT, CRT_LIST);
    for (const r of [...f.rules, ...f.loop!.rules]) assert.doesNotMatch(r.cond_test ?? '', /\n/);
    assert.deepEqual(readVirtualService(device(v)), v);
  });

  it('two Data Plane APIs on one host never share a loop socket', () => {
    const a = frontendFor(mixed(), LAYOUT, CRT_LIST).loop!.servers[0]!.address;
    const b = frontendFor(mixed(), { ...LAYOUT, instance: 'https://haproxy-b.example:5555' }, CRT_LIST).loop!
      .servers[0]!.address;
    assert.notEqual(a, b);
  });

  it('loop sections are attached to their port; without it they stay sections of their own', () => {
    const v = mixed();
    const d = device(v);
    const port: DeviceFrontend = { frontend: d.frontend, binds: d.binds, certificates: d.certificates! };
    const loopBackend: DeviceBackend = { backend: d.loop!.backend!, servers: d.loop!.servers };
    const loopFrontend = { frontend: d.loop!.frontend!, binds: d.loop!.binds };

    const backends = new Map<string, DeviceBackend>();
    const frontends = new Map([[v.name, port]]);
    attachLoops(backends, frontends, new Map([[v.name, loopBackend]]), new Map([[v.name, loopFrontend]]));
    assert.deepEqual([...backends.keys()], [], 'the loop is no pool');
    assert.deepEqual([...frontends.keys()], [v.name], 'the loop is no virtual service');
    assert.deepEqual(readVirtualService(frontends.get(v.name)!), v);

    const strayB = new Map<string, DeviceBackend>();
    const strayF = new Map<string, DeviceFrontend>();
    attachLoops(strayB, strayF, new Map([[v.name, loopBackend]]), new Map([[v.name, loopFrontend]]));
    assert.deepEqual([...strayB.keys()], [`${v.name}_tls`]);
    assert.deepEqual([...strayF.keys()], [`${v.name}_tls`]);
  });
});
