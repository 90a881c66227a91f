/**
 * TLS passthrough on F5: a Service_TCP with an endpoint policy on the ClientHello's server name,
 * first match in the model's precedence (exact names, then wildcards by the longest suffix, then
 * the catch-all), valid against the AS3 schema, and read back as the routes it came from.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateAs3 } from '../../../../adapters/f5/as3-validate.ts';
import {
  APP,
  parseDeclaration,
  renderPool,
  renderVirtualService,
} from '../../../../adapters/f5/declaration.ts';
import type { L4VirtualService, Pool } from '../../../../src/model/types.ts';
import * as kit from '../../../support/model.ts';

const pool = (name: string): Pool =>
  kit.pool(name, [kit.member('192.0.2.1', 61000, { pod: 'infra/p' })], {
    service: `infra/${name}`,
    servicePort: '443',
  });

describe('F5 TLS passthrough', () => {
  it('exact names first, then the longest wildcard, then the catch-all; schema-valid; read back exactly', () => {
    const vs: L4VirtualService = {
      kind: 'l4',
      name: 'c1--gw-infra.gw-TLS-443',
      vip: '192.0.2.50',
      port: 443,
      protocol: 'TCP',
      pool: '',
      source: 'Gateway infra/gw',
      sni: [
        { host: '', pool: 'c1--any', source: 'TLSRoute infra/any' },
        { host: '*.example.com', pool: 'c1--wide', source: 'TLSRoute infra/w' },
        { host: '*.a.example.com', pool: 'c1--narrow', source: 'TLSRoute infra/n' },
        { host: 'b.example.com', pool: 'c1--exact', source: 'TLSRoute infra/e' },
      ],
    };
    const objects = renderVirtualService(vs, 'c1');
    const policy = objects[`${vs.name}_policy`] as {
      rules: {
        conditions: { serverName: { operand: string; values: string[] } }[];
        actions: { select: { pool: { use: string } } }[];
      }[];
    };
    assert.deepEqual(
      policy.rules.map((r) => [
        r.conditions[0]
          ? `${r.conditions[0].serverName.operand} ${r.conditions[0].serverName.values[0]}`
          : 'any',
        r.actions[0]!.select.pool.use,
      ]),
      [
        ['equals b.example.com', 'c1--exact'],
        ['ends-with .a.example.com', 'c1--narrow'],
        ['ends-with .example.com', 'c1--wide'],
        ['any', 'c1--any'],
      ],
    );
    assert.equal((objects[vs.name] as { pool?: string }).pool, undefined, 'no default pool of its own');
    const app: Record<string, unknown> = { class: 'Application', template: 'generic', ...objects };
    for (const p of ['c1--any', 'c1--wide', 'c1--narrow', 'c1--exact']) app[p] = renderPool(pool(p), 'c1');
    const adc = {
      class: 'ADC',
      schemaVersion: '3.56.0',
      id: 't',
      npl_lb_c1: { class: 'Tenant', [APP]: app },
    };
    assert.deepEqual(validateAs3(adc), []);
    const back = parseDeclaration(adc, 'npl_lb_c1', 'c1').owned.virtualServices;
    assert.deepEqual(back, [vs]);
  });
});
