/**
 * Mixed mode (TLS listeners of both modes on one port) in haproxy.cfg, without a HAProxy: the
 * port's frontend routes by the ClientHello (passthrough names to their pools, the rest to the
 * loop), the loop terminates with the crt-list and routes by the session's name, and the file reads
 * back as the one virtual service it was written from (the loop's sections are no objects of their
 * own). A loop without its `ssl` reads as no termination (written again); host names are quoted;
 * two HAProxy instances never share a loop socket; and the adapters that do not serve Mixed refuse
 * it by name before anything is written (the Data Plane transport serves it: its loop is
 * haproxy-dataplane-tls-loop.test.ts). test/e2e/haproxy-tls-mixed.test.ts runs it on a real HAProxy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { DATAPLANE_CAPABILITIES, HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { loopSocket } from '../../../adapters/haproxy/tls-mixed.ts';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { capabilityProblem } from '../../../src/adapter/preflight.ts';
import * as kit from '../../support/model.ts';
import type { L4VirtualService, Pool } from '../../../src/model/types.ts';

const OPTS = { owner: 'c1', adminSocket: '/run/haproxy.sock', certDir: '/var/lib/npl-lb/certs' };
const pool = (name: string, port: number): Pool => ({
  name,
  protocol: 'TCP',
  health: 'tcp',
  service: `infra/${name}`,
  servicePort: String(port),
  members: [{ address: '192.0.2.10', port, node: 'n1', pod: 'infra/tcp-0', enabled: true }],
});
const plain = pool('c1--infra-tcp-backend-3000', 3000);
const secure = pool('c1--infra-tcp-backend-8443', 8443);
const mixed = kit.mixedTlsPort;
const section = (text: string, head: string) => {
  const at = text.indexOf(`${head}\n`);
  assert.ok(at >= 0, `${head} is written`);
  return text.slice(at, text.indexOf('\n\n', at));
};

describe('Mixed mode in haproxy.cfg', () => {
  it('routes by the ClientHello, terminates the rest round the loop, and reads back as one virtual service', () => {
    const v = mixed();
    const text = renderConfig([plain, secure], [v], [], OPTS);
    const outer = section(text, `frontend ${v.name}`);
    assert.match(outer, /bind 198\.51\.100\.7:8883\n/, 'no ssl on the port: the ClientHello is read first');
    assert.match(outer, /tcp-request content accept if \{ req_ssl_hello_type 1 \}/);
    assert.match(
      outer,
      /use_backend c1--infra-tcp-backend-8443 if \{ req_ssl_sni -m str -i "abc\.example\.com" \}/,
    );
    assert.match(
      outer,
      /use_backend c1--gw-infra\.mixed-TLS-8883_tls if \{ req_ssl_sni -m str -i "tls\.example\.com" \}/,
    );
    const socket = loopSocket(v.name, OPTS.adminSocket);
    assert.match(section(text, `backend ${v.name}_tls`), new RegExp(`server tls ${socket} send-proxy-v2`));
    const inner = section(text, `frontend ${v.name}_tls`);
    assert.match(
      inner,
      new RegExp(`bind ${socket} accept-proxy ssl crt-list /var/lib/npl-lb/certs/${v.name}\\.crtlist`),
    );
    assert.match(
      inner,
      /use_backend c1--infra-tcp-backend-3000 if \{ ssl_fc_sni -m str -i "tls\.example\.com" \}/,
    );
    assert.doesNotMatch(inner, /abc\.example\.com/, 'a passthrough name is never terminated');

    const observed = parseConfig(text, 'c1');
    assert.deepEqual(observed.owned.virtualServices, [v]);
    assert.deepEqual(observed.owned.pools.map((p) => p.name).sort(), [plain.name, secure.name]);
    assert.deepEqual(observed.foreign, []);
    assert.equal(observed.drifted, undefined);
  });

  it('a loop whose bind lost its ssl reads as no termination, so the next pass writes it again', () => {
    const text = renderConfig([plain, secure], [mixed()], [], OPTS).replace(
      / accept-proxy ssl crt-list \S+/,
      ' accept-proxy',
    );
    const [vs] = parseConfig(text, 'c1').owned.virtualServices;
    assert.equal((vs as L4VirtualService).certificates, undefined);
  });

  it('a hostile host name stays one quoted argument', () => {
    const text = renderConfig([plain, secure], [mixed('a b"}\n  use_backend x')], [], OPTS);
    assert.doesNotMatch(text, /\n\s*use_backend x/);
    assert.deepEqual(parseConfig(text, 'c1').owned.virtualServices, [mixed('a b"}\n  use_backend x')]);
  });

  it('two HAProxy instances on one host never share a loop socket', () => {
    const v = mixed();
    assert.notEqual(loopSocket(v.name, '/run/a/haproxy.sock'), loopSocket(v.name, '/run/b/haproxy.sock'));
    assert.ok(loopSocket('x'.repeat(63), '/run/haproxy.sock').length < 107, 'within a socket address');
  });

  it('served by both HAProxy transports; refused by name, before anything is written, where it is not', () => {
    const change = { op: 'create' as const, kind: 'virtualService' as const, name: 'x', desired: mixed() };
    assert.equal(capabilityProblem(change, HAPROXY_CAPABILITIES, 'haproxy'), undefined);
    assert.equal(capabilityProblem(change, DATAPLANE_CAPABILITIES, 'haproxy'), undefined);
    for (const [name, caps] of [
      ['avi', aviCapabilities(false)],
      ['f5', F5_CAPABILITIES],
    ] as const) {
      const problem = capabilityProblem(change, caps, name);
      assert.equal(problem?.terminal, true, name);
      assert.match(problem?.message ?? '', /Capabilities\.tls(Mixed|Terminate)\b/, name);
    }
  });
});
