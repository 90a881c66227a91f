/**
 * TLS listeners in Terminate mode on HAProxy, as each transport holds them: the runtime transport's
 * `bind ... ssl crt-list <file>` and SNI routes on `ssl_fc_sni` (no inspect-delay: the handshake
 * has ended), the Data Plane's bind `ssl` and `crt_list` with the same rules; each rendered, real
 * HAProxy accepting the file where it is installed, and read back from the bind (a bind whose
 * `ssl` was taken off by hand reads as passthrough, so the next pass writes it again). Passthrough
 * keeps its ClientHello inspection. Traffic: the conformance runs (TLSRouteTerminateSimpleSameNamespace
 * on every transport) and the contract's case.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { frontendFor, readVirtualService } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import type { L4VirtualService } from '../../../src/model/types.ts';

const CERTS = '/var/lib/npl-lb/certs';

const vs = (certificates?: string[]): L4VirtualService => ({
  kind: 'l4',
  name: 'c1--gw-infra.terminate-TLS-8443',
  vip: '127.0.0.1',
  port: 8443,
  protocol: 'TCP',
  pool: '',
  source: 'Gateway infra/terminate',
  sni: [
    { host: 'tls.example.com', pool: 'c1--infra-tcp-backend-3000', source: 'TLSRoute infra/t' },
    { host: '*.example.org', pool: 'c1--infra-tcp-backend-3000', source: 'TLSRoute infra/w' },
  ],
  ...(certificates ? { certificates } : {}),
});

const render = (v: L4VirtualService) =>
  renderConfig([], [v], [], { owner: 'c1', adminSocket: '/run/haproxy.sock', certDir: CERTS });
const readBack = (text: string) => parseConfig(text, 'c1').owned.virtualServices[0] as L4VirtualService;

describe('HAProxy runtime transport: TLS terminated on a TLS port', () => {
  it('the bind takes the crt-list, the routes the session’s server name; read back exactly', () => {
    const text = render(vs(['c1--infra-one', 'c1--infra-two']));
    assert.match(
      text,
      /\n {4}bind 127\.0\.0\.1:8443 ssl crt-list \/var\/lib\/npl-lb\/certs\/c1--gw-infra\.terminate-TLS-8443\.crtlist\n/,
    );
    assert.match(
      text,
      /use_backend c1--infra-tcp-backend-3000 if \{ ssl_fc_sni -m str -i "tls\.example\.com" \}/,
    );
    assert.match(
      text,
      /use_backend c1--infra-tcp-backend-3000 if \{ ssl_fc_sni -m end -i "\.example\.org" \}/,
    );
    assert.doesNotMatch(text, /inspect-delay|req_ssl_sni/, 'nothing waits for a ClientHello');
    assert.deepEqual(readBack(text), vs(['c1--infra-one', 'c1--infra-two']));
  });

  it('passthrough keeps its ClientHello inspection; a bind whose ssl was taken off by hand reads as passthrough', () => {
    const through = render(vs());
    assert.match(through, /tcp-request inspect-delay 5s/);
    assert.match(through, /req_ssl_sni -m str -i "tls\.example\.com"/);
    assert.doesNotMatch(through, / ssl crt-list /);
    assert.equal(readBack(through).certificates, undefined);
    const edited = render(vs(['c1--infra-one'])).replace(/ ssl crt-list \S+/, '');
    assert.equal(readBack(edited).certificates, undefined, 'no ssl on the bind: not terminated');
  });
});

describe('HAProxy Data Plane transport: TLS terminated on a TLS port', () => {
  const o = {
    owner: 'c1',
    apiVersion: 'v3' as const,
    slots: 4,
    healthChecks: false,
    transparentBinds: false,
  };
  it('the bind’s ssl and crt_list, the switching rules on ssl_fc_sni, no inspect rules; read back from the bind', () => {
    const f = frontendFor(
      vs(['c1--infra-one']),
      o,
      '/etc/haproxy/ssl/c1--gw-infra.terminate-TLS-8443.crtlist',
    );
    assert.equal(f.binds[0]!.ssl, true);
    assert.equal(f.binds[0]!.crt_list, '/etc/haproxy/ssl/c1--gw-infra.terminate-TLS-8443.crtlist');
    assert.deepEqual(f.tcpRequest, [], 'no inspect-delay or ClientHello accept');
    assert.ok(f.rules.every((r) => r.cond_test?.includes('ssl_fc_sni')));
    assert.deepEqual(readVirtualService(f), vs(['c1--infra-one']));
    // The bind's ssl taken off by hand: read as passthrough, written again by the next pass.
    const edited = { ...f, binds: [{ ...f.binds[0]!, ssl: undefined, crt_list: undefined }] };
    assert.equal((readVirtualService(edited) as L4VirtualService).certificates, undefined);
    const through = frontendFor(vs(), o);
    assert.equal(through.binds[0]!.ssl, undefined);
    assert.ok(through.tcpRequest.some((r) => r.type === 'inspect-delay'));
  });
});
