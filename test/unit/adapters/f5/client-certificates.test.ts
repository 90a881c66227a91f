/**
 * Issue 48, item 2 (BIG-IP): client certificates at an HTTPS virtual server as AS3 holds them: the
 * TLS_Server's authenticationMode (`require`, `request` for AllowInsecureFallback) and
 * authenticationTrustCA pointing to a CA_Bundle of the application holding the CA. Valid against
 * the AS3 3.56 schema, read back from those properties (not our metadata), and a TLS_Server
 * changed by hand (`ignore`, a pointer to nothing, the bundle removed) reads as no validation, so
 * the next pass writes it again. An adapter that does not declare it refuses the virtual service
 * by name. The verified subject reaches the members through an iRule (Avi refuses it by name).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aviCapabilities } from '../../../../adapters/avi/capabilities.ts';
import { validateAs3 } from '../../../../adapters/f5/as3-validate.ts';
import { renderCertificate } from '../../../../adapters/f5/certificates.ts';
import {
  APP,
  parseDeclaration,
  renderPool,
  renderVirtualService,
} from '../../../../adapters/f5/declaration.ts';
import { capabilityProblem } from '../../../../src/adapter/preflight.ts';
import type { Certificate, ClientValidation, L7VirtualService } from '../../../../src/model/types.ts';
import { modelCertificate, testAuthority } from '../../../support/certs.ts';
import * as kit from '../../../support/model.ts';

const POOL = 'c1--infra-web-8080.l7';
let cert: Certificate;
let ca: string;
before(async () => {
  [cert, ca] = await Promise.all([
    modelCertificate('c1--infra-cert', ['app.example.com']),
    testAuthority('clients').then((a) => a.cert),
  ]);
});

const vs = (clientValidation?: ClientValidation): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--gw-infra.mtls-HTTPS-443',
  vip: '192.0.2.60',
  port: 443,
  ingressClass: 'npl-lb',
  routes: [],
  defaultPool: POOL,
  protocol: 'HTTPS',
  certificates: [cert.name],
  ...(clientValidation ? { clientValidation } : {}),
});

function declaration(v: L7VirtualService, edit: (app: Record<string, unknown>) => void = () => undefined) {
  const app: Record<string, unknown> = {
    class: 'Application',
    template: 'generic',
    ...renderVirtualService(v, 'c1'),
    [POOL]: renderPool(kit.pool(POOL, [kit.member('192.0.2.1', 61000, { pod: 'infra/web-0' })]), 'c1'),
    [cert.name]: renderCertificate(cert),
  };
  edit(app);
  return { class: 'ADC', schemaVersion: '3.56.0', id: 't', npl_lb_c1: { class: 'Tenant', [APP]: app } };
}
const readBack = (adc: ReturnType<typeof declaration>) =>
  parseDeclaration(adc, 'npl_lb_c1', 'c1').owned.virtualServices[0] as L7VirtualService;

describe('BIG-IP: client certificates on the TLS_Server', () => {
  it('require and request against a CA_Bundle: schema-valid, read back from the device’s properties', () => {
    for (const insecureFallback of [false, true]) {
      const adc = declaration(vs({ ca, insecureFallback }));
      assert.deepEqual(validateAs3(adc), []);
      const tls = (adc.npl_lb_c1[APP] as Record<string, Record<string, unknown>>)[`${vs().name}_tls`]!;
      assert.equal(tls.authenticationMode, insecureFallback ? 'request' : 'require');
      assert.equal(readBack(adc).clientValidation?.ca, ca);
      assert.equal(readBack(adc).clientValidation?.insecureFallback, insecureFallback);
    }
    const plain = declaration(vs());
    assert.deepEqual(validateAs3(plain), []);
    assert.equal(readBack(plain).clientValidation, undefined);
  });

  it('a TLS_Server changed by hand reads as no validation', () => {
    const name = vs().name;
    const edits: [string, (app: Record<string, unknown>) => void][] = [
      [
        'authenticationMode ignore',
        (app) => ((app[`${name}_tls`] as Record<string, unknown>).authenticationMode = 'ignore'),
      ],
      ['the bundle removed', (app) => delete app[`${name}_clientca`]],
      [
        'a pointer to another object',
        (app) => ((app[`${name}_tls`] as Record<string, unknown>).authenticationTrustCA = POOL),
      ],
    ];
    for (const [what, edit] of edits)
      assert.equal(
        readBack(declaration(vs({ ca, insecureFallback: false }), edit)).clientValidation,
        undefined,
        what,
      );
  });

  it('the verified subject to the members: the header as sent removed, then set from a verified certificate; read back from the iRule, a hand edit reads as none', () => {
    const header = "X-Client-Subject$'x";
    const adc = declaration(vs({ ca, insecureFallback: true, subjectHeader: header }));
    assert.deepEqual(validateAs3(adc), []);
    const app = adc.npl_lb_c1[APP] as Record<string, Record<string, unknown>>;
    const name = vs().name;
    assert.ok((app[name]!.iRules as string[]).includes(`${name}_subject`));
    assert.equal(
      app[`${name}_subject`]!.iRule,
      [
        'when HTTP_REQUEST {',
        `  HTTP::header remove {${header}}`,
        '  if { [SSL::cert count] > 0 && [SSL::verify_result] == 0 } {',
        `    HTTP::header insert {${header}} [X509::subject [SSL::cert 0]]`,
        '  }',
        '}',
      ].join('\n'),
      'a token in braces is one literal word: $ and quotes are not substituted',
    );
    assert.equal(readBack(adc).clientValidation?.subjectHeader, header);
    const edits: [string, (a: Record<string, unknown>) => void][] = [
      ['the iRule taken off the service', (a) => ((a[name] as Record<string, unknown>).iRules = [])],
      [
        'the removal of the client’s header deleted',
        (a) => {
          const r = a[`${name}_subject`] as Record<string, unknown>;
          r.iRule = String(r.iRule).replace(/\n {2}HTTP::header remove [^\n]+/, '');
        },
      ],
      [
        'the verification check deleted',
        (a) => {
          const r = a[`${name}_subject`] as Record<string, unknown>;
          r.iRule = String(r.iRule).replace(' && [SSL::verify_result] == 0', '');
        },
      ],
    ];
    for (const [what, edit] of edits)
      assert.equal(
        readBack(declaration(vs({ ca, insecureFallback: true, subjectHeader: header }), edit))
          .clientValidation?.subjectHeader,
        undefined,
        what,
      );
    assert.throws(
      () => declaration(vs({ ca, insecureFallback: true, subjectHeader: 'X-A} {evil' })),
      /not an HTTP token/,
    );
  });

  it('an adapter that does not declare it refuses the virtual service by name, terminal; Avi does not send the subject', () => {
    const avi = aviCapabilities(false);
    const problem = capabilityProblem(
      { op: 'create', kind: 'virtualService', name: vs().name, desired: vs({ ca, insecureFallback: false }) },
      { ...avi, http: { ...avi.http!, clientValidation: undefined } },
      'stub',
    );
    assert.equal(problem?.terminal, true);
    assert.match(problem?.message ?? '', /client certificate validation is not served by the stub adapter/);
    for (const [caps, name] of [[avi, 'avi']] as const) {
      const subject = capabilityProblem(
        {
          op: 'create',
          kind: 'virtualService',
          name: vs().name,
          desired: vs({ ca, insecureFallback: false, subjectHeader: 'X-Client-Subject' }),
        },
        caps,
        name,
      );
      assert.equal(subject?.terminal, true);
      assert.match(subject?.message ?? '', /subject is not sent to members/);
    }
  });
});
