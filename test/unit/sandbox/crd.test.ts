/**
 * The pieces of the sandbox's CRD support on their own: structural pruning, defaults and schema
 * validation, CEL rules (transition rules, isIP, a function the library lacks), printer columns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { skippedRules, validateRules } from '../../../src/sandbox/crd/cel-rules.ts';
import { typesOf, validateCrd } from '../../../src/sandbox/crd/definition.ts';
import { columnCell, findResults } from '../../../src/sandbox/crd/printer.ts';
import { applyDefaults, prune, type Schema, validate } from '../../../src/sandbox/crd/structural.ts';
import type { JsonObject } from '../../../src/sandbox/openapi.ts';

const SCHEMA: Schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 5, pattern: '^[a-z]+$' },
        port: { type: 'integer', minimum: 1, maximum: 65535, default: 80 },
        mode: { type: 'string', enum: ['A', 'B'] },
        tags: { type: 'array', maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        listeners: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              ip: { type: 'string', anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }] },
            },
          },
        },
      },
      'x-kubernetes-validations': [
        { rule: 'self.port != 81', message: 'port 81 is reserved' },
        { rule: '!has(self.tags) || self.tags.all(t, !isIP(t))', message: 'tags are not addresses' },
        { rule: 'self.name == oldSelf.name', message: 'name is immutable', fieldPath: '.name' },
        { rule: 'self.name.frobnicate() == 1' },
      ],
    },
  },
};

const spec = (o: JsonObject): JsonObject => ({
  apiVersion: 'x.io/v1',
  kind: 'K',
  metadata: { name: 'a' },
  spec: o,
});
const messages = (o: JsonObject): string[] => validate(o, SCHEMA, '').map((c) => `${c.field}: ${c.message}`);

describe('structural schema', () => {
  it('prunes unknown fields and nulls, keeps preserved ones, reports what it dropped', () => {
    const o = spec({
      name: 'a',
      bogus: 1,
      port: null,
      free: { anything: { goes: true } },
      listeners: [{ name: 'x', extra: 2 }],
    });
    const unknown = prune(o, SCHEMA);
    assert.deepEqual(unknown.sort(), ['spec.bogus', 'spec.listeners[0].extra']);
    assert.deepEqual(o.spec, { name: 'a', free: { anything: { goes: true } }, listeners: [{ name: 'x' }] });
  });

  it('fills defaults where the field is absent', () => {
    const o = spec({ name: 'a' });
    applyDefaults(o, SCHEMA);
    assert.equal((o.spec as JsonObject).port, 80);
  });

  it("validates with apimachinery's messages", () => {
    assert.deepEqual(messages(spec({ name: 'a', port: 80 })), []);
    assert.deepEqual(messages(spec({ port: 0 })), [
      'spec.name: Required value',
      'spec.port: Invalid value: 0: spec.port in body should be greater than or equal to 1',
    ]);
    assert.deepEqual(messages(spec({ name: 'ABCDEFG', mode: 'C', tags: ['x', 'x', 'y'] })), [
      'spec.name: Too long: may not be more than 5 bytes',
      'spec.name: Invalid value: "ABCDEFG": spec.name in body should match \'^[a-z]+$\'',
      'spec.mode: Unsupported value: "C": supported values: "A", "B"',
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.tags[1]: Duplicate value: "x"',
    ]);
    assert.deepEqual(messages(spec({ name: 'a', port: 'eighty' })), [
      'spec.port: Invalid value: "string": spec.port in body must be of type integer: "string"',
    ]);
    assert.deepEqual(
      messages(
        spec({
          name: 'a',
          listeners: [
            { name: 'l', ip: '10.0.0.1' },
            { name: 'l', ip: 'nope' },
          ],
        }),
      ),
      [
        'spec.listeners[1]: Duplicate value: map[string]interface {}{"name":"l"}',
        'spec.listeners[1].ip: Invalid value: "nope": spec.listeners[1].ip in body must be of type ipv4: "nope"',
      ],
    );
  });
});

describe('CEL rules', () => {
  it('a failed rule is a cause on its node with its message; a rule that holds says nothing', () => {
    assert.deepEqual(validateRules(spec({ name: 'a', port: 80 }), undefined, SCHEMA), []);
    assert.deepEqual(validateRules(spec({ name: 'a', port: 81, tags: ['1.2.3.4'] }), undefined, SCHEMA), [
      { reason: 'FieldValueInvalid', message: 'Invalid value: "object": port 81 is reserved', field: 'spec' },
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "object": tags are not addresses',
        field: 'spec',
      },
    ]);
  });

  it('a transition rule runs only on update, against the old value', () => {
    const old = spec({ name: 'a', port: 80 });
    assert.deepEqual(validateRules(spec({ name: 'b', port: 80 }), undefined, SCHEMA), []);
    assert.deepEqual(validateRules(spec({ name: 'b', port: 80 }), old, SCHEMA), [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: "object": name is immutable',
        field: 'spec.name',
      },
    ]);
  });

  it('a rule calling a function the library lacks is listed and skipped', () => {
    assert.deepEqual(
      skippedRules(SCHEMA).map((r) => r.rule),
      ['self.name.frobnicate() == 1'],
    );
  });
});

describe('CRD definitions and printer columns', () => {
  const crd: JsonObject = {
    metadata: { name: 'widgets.x.io' },
    spec: {
      group: 'x.io',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: SCHEMA },
          subresources: { status: {} },
        },
        { name: 'v1beta1', served: true, storage: false, schema: { openAPIV3Schema: SCHEMA } },
        { name: 'v1alpha1', served: false, storage: false, schema: { openAPIV3Schema: SCHEMA } },
      ],
    },
  };

  it('serves one kind per served version, sharing one storage', () => {
    const types = typesOf(crd);
    assert.deepEqual(
      types.map((t) => `${t.version}:${t.storage}:${t.hasStatus}`),
      ['v1:widgets.x.io:true', 'v1beta1:widgets.x.io:false'],
    );
    assert.equal(types[0]!.definition, 'io.x.v1.Widget');
    assert.deepEqual(
      validateCrd(crd, () => false),
      [],
    );
  });

  it('refuses a CRD whose name, storage or plural is wrong', () => {
    const bad = structuredClone(crd);
    (bad.metadata as JsonObject).name = 'gadgets.x.io';
    ((bad.spec as JsonObject).versions as JsonObject[])[1]!.storage = true;
    const causes = validateCrd(bad, () => true).map((c) => c.field);
    assert.deepEqual(causes, ['metadata.name', 'spec.versions', 'spec.names.plural']);
  });

  it('columns take the first JSONPath result; strings as they are, the rest as JSON', () => {
    const o = {
      spec: { hostnames: ['a', 'b'] },
      status: {
        addresses: [{ value: '1.1.1.1' }, { value: '2.2.2.2' }],
        conditions: [
          { type: 'Accepted', status: 'True' },
          { type: 'Programmed', status: 'False' },
        ],
      },
    };
    assert.deepEqual(findResults(o, '.status.addresses[*].value'), ['1.1.1.1', '2.2.2.2']);
    assert.equal(columnCell(o, '.status.addresses[*].value', 'string'), '1.1.1.1');
    assert.equal(columnCell(o, '.status.conditions[?(@.type=="Programmed")].status', 'string'), 'False');
    assert.equal(columnCell(o, '.spec.hostnames', 'string'), '["a","b"]');
    assert.equal(columnCell(o, '.spec.missing', 'string'), null);
  });
});
