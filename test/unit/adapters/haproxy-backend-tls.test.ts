/**
 * Issue 48, item 1 (HAProxy): a pool's TLS to its members as haproxy.cfg holds it. Rendered and
 * read back exactly (the CA by the file the server line names, or `@system-ca`); a server line
 * changed by hand to `verify none` reads as no TLS (so the next pass writes it again); and the
 * transport defends itself: a TLS name that is not one DNS name is refused before it reaches a
 * server line, whatever the source let through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DATAPLANE_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { caFile, renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { changeProblem } from '../../../adapters/haproxy/validate.ts';
import type { BackendTls, Pool } from '../../../src/model/types.ts';

const CERTS = '/var/lib/npl-lb/certs';
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const pool = (backendTls: BackendTls): Pool => ({
  name: 'c1--default-web-443.tls-0123abcd',
  protocol: 'TCP',
  health: 'http',
  service: 'default/web',
  servicePort: '443',
  members: [{ address: '10.0.0.1', port: 61000, node: 'n1', pod: 'default/web-0', enabled: true }],
  backendTls,
});
const render = (p: Pool) =>
  renderConfig([p], [], [], { owner: 'c1', adminSocket: '/run/haproxy.sock', certDir: CERTS });
const readBack = (text: string) =>
  parseConfig(text, 'c1', (ref) =>
    ref === 'System' ? 'System' : ref === `file:${caFile(CA, CERTS)}` ? CA : undefined,
  ).owned.pools[0];

describe('HAProxy: TLS to members on server lines', () => {
  const tls: BackendTls = {
    serverName: 'web.internal.example.com',
    verifyNames: ['web.internal.example.com'],
    ca: CA,
  };

  it('rendered as ssl verify required with the CA file, SNI and verifyhost, and read back exactly', () => {
    const text = render(pool(tls));
    assert.match(
      text,
      /server \S+ 10\.0\.0\.1:61000 check ssl verify required ca-file \/var\/lib\/npl-lb\/certs\/ca-[0-9a-f]{16}\.pem sni str\(web\.internal\.example\.com\) verifyhost web\.internal\.example\.com check-sni web\.internal\.example\.com/,
    );
    assert.deepEqual(readBack(text)?.backendTls, tls);
    const system = render(pool({ ...tls, ca: 'System' }));
    assert.match(system, /ca-file @system-ca /);
    assert.deepEqual(readBack(system)?.backendTls, { ...tls, ca: 'System' });
  });

  it('a server line changed by hand to verify none reads as no TLS, never as verified', () => {
    const edited = render(pool(tls)).replace('verify required', 'verify none');
    assert.equal(readBack(edited)?.backendTls, undefined);
    const appended = render(pool(tls)).replace(/(check-sni \S+)/, '$1 verify none');
    assert.equal(readBack(appended)?.backendTls, undefined);
  });

  it('a TLS name that is not one DNS name is refused before any line is written (both transports)', () => {
    for (const caps of [undefined, DATAPLANE_CAPABILITIES])
      for (const bad of [
        { ...tls, serverName: 'a.example.com verify none' },
        { ...tls, serverName: 'a.example.com)\n    server x 1.1.1.1:1' },
        { ...tls, verifyNames: ['A"B'] },
        { ...tls, verifyNames: ['a.example.com', 'b.example.com'] },
      ]) {
        const p = changeProblem(
          { kind: 'pool', op: 'create', name: 'p', desired: pool(bad) },
          false,
          true,
          caps,
        );
        assert.equal(p?.code, 'Invalid', JSON.stringify(bad.serverName));
        assert.equal(p?.terminal, true);
      }
    assert.equal(
      changeProblem({ kind: 'pool', op: 'create', name: 'p', desired: pool(tls) }, false),
      undefined,
    );
  });
});
