/**
 * Issue 48, item 2 (HAProxy): client certificates asked at an HTTPS bind, as each transport holds
 * them. The runtime transport's bind line (`ca-file <file> verify required`, or `verify optional`
 * with the leaf's and chain's errors ignored for the insecure fallback) and the Data Plane's bind
 * fields (`ssl_cafile`, `verify`, `ca_ignore_err`, `crt_ignore_err`), each rendered and read back
 * exactly (the CA by the file it names); a bind changed by hand (`verify none`, a word appended,
 * the CA file removed) reads as no validation, so the next pass writes it again. The simulator
 * renders the fields as haproxy.cfg words. A device that does not declare the capability refuses
 * the virtual service by name before anything is written.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { caFile, renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { frontendFor, readVirtualService } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import { capabilityProblem } from '../../../src/adapter/preflight.ts';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import type { ClientValidation, L7VirtualService } from '../../../src/model/types.ts';

const CERTS = '/var/lib/npl-lb/certs';
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

const vs = (clientValidation?: ClientValidation): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--gw-infra.mtls-https-443',
  vip: '127.0.0.1',
  port: 443,
  ingressClass: 'npl-lb',
  routes: [],
  defaultPool: undefined,
  protocol: 'HTTPS',
  certificates: ['c1--infra-cert'],
  ...(clientValidation ? { clientValidation } : {}),
});

const render = (v: L7VirtualService) =>
  renderConfig([], [v], [], { owner: 'c1', adminSocket: '/run/haproxy.sock', certDir: CERTS });
const readBack = (text: string) =>
  parseConfig(text, 'c1', (ref) => (ref === `file:${caFile(CA, CERTS)}` ? CA : undefined)).owned
    .virtualServices[0] as L7VirtualService;

describe('HAProxy runtime transport: client certificates on the bind line', () => {
  it('required and with the insecure fallback: rendered, and read back exactly', () => {
    const required = render(vs({ ca: CA, insecureFallback: false }));
    assert.match(
      required,
      /bind 127\.0\.0\.1:443 ssl crt-list \S+ ca-file \/var\/lib\/npl-lb\/certs\/ca-[0-9a-f]{16}\.pem verify required\n/,
    );
    assert.deepEqual(readBack(required).clientValidation, { ca: CA, insecureFallback: false });
    const fallback = render(vs({ ca: CA, insecureFallback: true }));
    assert.match(fallback, / ca-file \S+ verify optional ca-ignore-err all crt-ignore-err all\n/);
    assert.deepEqual(readBack(fallback).clientValidation, { ca: CA, insecureFallback: true });
    // None asked: no word of it, and none read.
    const plain = render(vs());
    // (Our global's `httpclient.ssl.verify none` is HAProxy's own unused client: config.ts.)
    const front = plain.indexOf('\nfrontend ');
    assert.ok(front > 0);
    assert.doesNotMatch(plain.slice(front), /ca-file|verify/);
    assert.equal(readBack(plain).clientValidation, undefined);
  });

  it("the verified client's subject: the client's header removed, then set from the verified certificate; read back", () => {
    const v = vs({ ca: CA, insecureFallback: true, subjectHeader: 'X-Client-Subject' });
    const text = render(v);
    const del = text.indexOf('http-request del-header');
    const set = text.search(
      /http-request set-header \S*X-Client-Subject\S* %\[ssl_c_s_dn\] if \{ ssl_c_used \} \{ ssl_c_verify 0 \}/,
    );
    assert.ok(del >= 0 && set > del, text);
    assert.deepEqual(readBack(text).clientValidation, v.clientValidation);
  });

  it('a bind changed by hand reads as no validation, never as validated', () => {
    const text = render(vs({ ca: CA, insecureFallback: false }));
    for (const [what, edited] of [
      ['verify none', text.replace('verify required', 'verify none')],
      ['a word appended', text.replace('verify required', 'verify required verify none')],
      ['errors ignored', text.replace('verify required', 'verify required crt-ignore-err all')],
      ['the CA file of another content', text.replace(/ca-[0-9a-f]{16}\.pem/, 'ca-0000000000000000.pem')],
    ] as const)
      assert.equal(readBack(edited).clientValidation, undefined, what);
  });
});

describe('HAProxy Data Plane transport: client certificates as bind fields', () => {
  const layout = {
    owner: 'c1',
    apiVersion: 'v3' as const,
    slots: 4,
    healthChecks: false,
    transparentBinds: false,
    caPath: (ca: string) => (ca === CA ? '/etc/haproxy/general/ca-abc.pem' : undefined),
  };
  const device = (v: L7VirtualService) => {
    const f = frontendFor(v, layout, '/etc/haproxy/ssl/x.crtlist');
    return { ...f, certificates: v.certificates! };
  };

  it('required and with the insecure fallback: the spec fields, read back as the file they name', () => {
    const required = device(vs({ ca: CA, insecureFallback: false }));
    assert.deepEqual(
      {
        ssl_cafile: required.binds[0]!.ssl_cafile,
        verify: required.binds[0]!.verify,
        ca_ignore_err: required.binds[0]!.ca_ignore_err,
      },
      { ssl_cafile: '/etc/haproxy/general/ca-abc.pem', verify: 'required', ca_ignore_err: undefined },
    );
    assert.deepEqual(readVirtualService(required), {
      ...vs(),
      clientValidation: { ca: 'file:/etc/haproxy/general/ca-abc.pem', insecureFallback: false },
    });
    const fallback = device(vs({ ca: CA, insecureFallback: true }));
    assert.equal(fallback.binds[0]!.verify, 'optional');
    assert.equal(fallback.binds[0]!.ca_ignore_err, 'all');
    assert.equal(fallback.binds[0]!.crt_ignore_err, 'all');
    assert.equal((readVirtualService(fallback) as L7VirtualService).clientValidation?.insecureFallback, true);
    assert.equal((readVirtualService(device(vs())) as L7VirtualService).clientValidation, undefined);
  });

  it('a bind changed by hand reads as no validation', () => {
    const d = device(vs({ ca: CA, insecureFallback: false }));
    const edit = (b: Record<string, unknown>) => ({ ...d, binds: [{ ...d.binds[0]!, ...b }] });
    for (const [what, b] of [
      ['verify none', { verify: 'none' }],
      ['verify optional without the errors ignored', { verify: 'optional' }],
      ['errors ignored while required', { crt_ignore_err: 'all' }],
      ['no CA file', { ssl_cafile: undefined }],
    ] as const)
      assert.equal((readVirtualService(edit(b)) as L7VirtualService).clientValidation, undefined, what);
  });
});

describe('a device that does not validate client certificates', () => {
  it('refuses the virtual service by name, terminal, before anything is written', () => {
    const avi = aviCapabilities(false);
    const problem = capabilityProblem(
      { op: 'create', kind: 'virtualService', name: 'x', desired: vs({ ca: CA, insecureFallback: false }) },
      { ...avi, http: { ...avi.http!, clientValidation: undefined } },
      'stub',
    );
    assert.equal(problem?.code, 'Unsupported');
    assert.equal(problem?.terminal, true);
    assert.match(problem?.message ?? '', /client certificate validation is not served by the stub adapter/);
  });
});
