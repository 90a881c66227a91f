/**
 * Issue 34 on HAProxy: IPv6 VIPs and members in every form they take (any IPv6 address, in its
 * canonical text, beside IPv4 ones) are written where haproxy.cfg needs brackets, accepted by
 * `haproxy -c`, and read back exactly by the runtime transport's parser, so a restart finds what it
 * wrote and writes nothing. The parser before this read `[fd00::1]:61000` as `fd00:` port 1.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { frontendFor, readVirtualService } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import type { L4VirtualService, Pool } from '../../../src/model/types.ts';
import { canonicalIp } from '../../../src/source/ip-family.ts';
import { haproxyBinMissing } from '../../support/haproxy.ts';

const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-ipv6-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Addresses as the model holds them: IPv4, or IPv6 in its canonical text. */
const address = fc.oneof(fc.ipV4(), fc.ipV6().map(canonicalIp));
const port = fc.integer({ min: 1, max: 65535 });

const sample = fc.record({
  vip: address,
  vipPort: port,
  members: fc.uniqueArray(fc.tuple(address, port), {
    minLength: 1,
    maxLength: 4,
    selector: ([a, p]) => `${a}|${p}`,
  }),
});

const pool = (members: [string, number][]): Pool => ({
  name: 'c1--default-web-http_v6',
  protocol: 'TCP',
  health: 'tcp',
  members: members.map(([a, p]) => ({
    address: a,
    port: p,
    node: 'n1',
    pod: 'default/web-1',
    enabled: true,
  })),
  service: 'default/web',
  servicePort: 'http',
});

describe('HAProxy: IPv6 addresses round-trip', () => {
  it('the runtime transport parses back every address and port it wrote', () => {
    fc.assert(
      fc.property(sample, (s) => {
        const p = pool(s.members);
        const vs: L4VirtualService = {
          kind: 'l4',
          name: 'c1--default-web-TCP-80_v6',
          vip: s.vip,
          port: s.vipPort,
          protocol: 'TCP',
          pool: p.name,
          source: 'default/web',
        };
        const back = parseConfig(
          renderConfig([p], [vs], [], { owner: 'c1', adminSocket: '/x.sock' }),
          'c1',
        ).owned;
        assert.deepEqual(back.pools, [p]);
        assert.deepEqual(back.virtualServices, [vs]);
      }),
      { numRuns: 300, seed: 34 },
    );
  });

  it('the Data Plane transport writes an IPv6 VIP as its own field and reads it back', () => {
    const o = {
      owner: 'c1',
      apiVersion: 'v3' as const,
      slots: 2,
      healthChecks: true,
      transparentBinds: false,
    };
    fc.assert(
      fc.property(address, port, (vip, p) => {
        const vs: L4VirtualService = {
          kind: 'l4',
          name: 'c1--default-web-TCP-80_v6',
          vip,
          port: p,
          protocol: 'TCP',
          pool: 'c1--default-web-http_v6',
          source: 'default/web',
        };
        const f = frontendFor(vs, o);
        assert.equal(f.binds[0]!.address, vip, 'the address alone, no brackets: the API adds them');
        assert.deepEqual(readVirtualService({ frontend: f.frontend, binds: f.binds }), vs);
      }),
      { numRuns: 200, seed: 35 },
    );
  });

  it('haproxy -c accepts IPv6 binds and servers as written', { skip: haproxyBinMissing() }, () => {
    const p = pool([
      ['fd00:124:1::1', 61001],
      ['::1', 61002],
      ['192.0.2.1', 61003],
    ]);
    const vss: L4VirtualService[] = [
      {
        kind: 'l4',
        name: 'c1--a_v6',
        vip: 'fd00:124:9::1',
        port: 80,
        protocol: 'TCP',
        pool: p.name,
        source: 'x/y',
      },
      { kind: 'l4', name: 'c1--b', vip: '192.0.2.9', port: 80, protocol: 'TCP', pool: p.name, source: 'x/y' },
    ];
    const file = join(dir, 'v6.cfg');
    writeFileSync(file, renderConfig([p], vss, [], { owner: 'c1', adminSocket: join(dir, 'a.sock') }));
    execFileSync('haproxy', ['-c', '-f', file], { stdio: 'pipe' });
  });
});
