/**
 * Issue 48, item 3 (HAProxy): the certificate a pool's servers present to TLS members (a Gateway's
 * backend client certificate), as each transport holds it. Runtime: `crt <certDir>/<name>.pem` on
 * the server lines, read back to the certificate's name; one of another directory, or removed by
 * hand, reads as not ours (the next pass writes it again). Data Plane: the servers'
 * `ssl_certificate`, the stored certificate's path, compared so a hand edit is repaired. The stored
 * policy word carries it for a pool without servers; a name that could leave the directory is
 * refused; a device that does not present one refuses such a pool by name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CaFiles } from '../../../adapters/haproxy/ca-files.ts';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import {
  assignSlots,
  type LayoutOptions,
  serverChanged,
} from '../../../adapters/haproxy/dataplane/layout.ts';
import { changeProblem } from '../../../adapters/haproxy/validate.ts';
import { readTlsWord, tlsWord } from '../../../src/adapter/ca-bundles.ts';
import { capabilityProblem } from '../../../src/adapter/preflight.ts';
import type { BackendTls, Pool } from '../../../src/model/types.ts';

const CERTS = '/var/lib/npl-lb/certs';
const tls: BackendTls = {
  serverName: 'abc.example.com',
  verifyNames: ['abc.example.com'],
  ca: 'System',
  clientCertificate: 'c1--infra.client',
};
const pool = (backendTls: BackendTls): Pool => ({
  name: 'c1--infra-tls-backend-443.tls-0123abcd',
  protocol: 'TCP',
  health: 'http',
  service: 'infra/tls-backend',
  servicePort: '443',
  members: [{ address: '10.0.0.1', port: 61000, node: 'n1', pod: 'infra/tls-backend-0', enabled: true }],
  backendTls,
});
const render = (p: Pool) =>
  renderConfig([p], [], [], { owner: 'c1', adminSocket: '/run/haproxy.sock', certDir: CERTS });
const readBack = (text: string) => parseConfig(text, 'c1', new CaFiles(CERTS).read).owned.pools[0];

describe('HAProxy runtime: the certificate presented to members', () => {
  it('rendered as crt <certDir>/<name>.pem after the TLS words, and read back to its name', () => {
    const text = render(pool(tls));
    assert.match(
      text,
      / verifyhost abc\.example\.com crt \/var\/lib\/npl-lb\/certs\/c1--infra\.client\.pem check-sni/,
    );
    assert.deepEqual(readBack(text)?.backendTls, tls);
    const none = render(pool({ ...tls, clientCertificate: undefined } as BackendTls));
    assert.ok(!/ crt /.test(none));
  });

  it('another directory’s file, or the word removed by hand, reads as not ours: rewritten', () => {
    const elsewhere = render(pool(tls)).replace(
      `${CERTS}/c1--infra.client.pem`,
      '/etc/ssl/c1--infra.client.pem',
    );
    assert.notEqual(readBack(elsewhere)?.backendTls?.clientCertificate, tls.clientCertificate);
    const removed = render(pool(tls)).replace(/ crt \S+/, '');
    assert.equal(readBack(removed)?.backendTls?.clientCertificate, undefined);
  });

  it('a certificate name that could leave the directory is refused before any line is written', () => {
    for (const bad of ['../../etc/passwd', 'a b', 'x\nserver evil 10.0.0.9:80'])
      assert.match(
        changeProblem(
          { op: 'create', kind: 'pool', name: 'p', desired: pool({ ...tls, clientCertificate: bad }) },
          false,
        )?.message ?? '',
        /is not a certificate name/,
        bad,
      );
  });
});

describe('the stored policy word and the preflight', () => {
  it('the word carries the certificate, and a hostile fourth field reads as no TLS', () => {
    const w = tlsWord(tls);
    assert.equal(readTlsWord(w)?.clientCertificate, tls.clientCertificate);
    assert.equal(
      readTlsWord(tlsWord({ ...tls, clientCertificate: undefined } as BackendTls))?.clientCertificate,
      undefined,
    );
    assert.equal(readTlsWord(`${w.split('~').slice(0, 3).join('~')}~../x`), undefined);
    assert.equal(readTlsWord(`${w}~more`), undefined);
  });

  it('an adapter that does not present client certificates refuses such a pool by name', () => {
    const c = { op: 'create' as const, kind: 'pool' as const, name: 'p', desired: pool(tls) };
    const avi = aviCapabilities(false);
    const able = {
      ...avi,
      http: {
        ...avi.http!,
        backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: false },
      },
    };
    assert.match(
      capabilityProblem(c, able, 'avi')?.message ?? '',
      /client certificate to members is not presented by the avi adapter/,
    );
    assert.equal(
      capabilityProblem(
        c,
        {
          ...able,
          http: { ...able.http, backendTls: { ...able.http.backendTls, clientCertificates: true } },
        },
        'avi',
      ),
      undefined,
    );
  });
});

describe('HAProxy Data Plane: the servers’ ssl_certificate', () => {
  const o: LayoutOptions = {
    owner: 'c1',
    apiVersion: 'v3',
    slots: 4,
    transparentBinds: false,
    healthChecks: true,
    caPath: () => '/etc/haproxy/general/ca.pem',
    certPath: (n: string) => `/etc/haproxy/ssl/${n}.pem`,
  };
  it('set from the stored certificate’s path, and a server without it is a change to make', () => {
    const { servers } = assignSlots([], pool(tls).members, o, { backendTls: tls });
    const used = servers.find((s) => s.address === '10.0.0.1')!;
    assert.equal(used.ssl_certificate, '/etc/haproxy/ssl/c1--infra.client.pem');
    assert.ok(serverChanged(used, { ...used, ssl_certificate: undefined }), 'removed by hand: repaired');
  });
});
