import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  matchFields,
  matchLabels,
  parseFieldSelector,
  parseLabelSelector,
} from '../../../src/sandbox/selectors.ts';
import { ApiError } from '../../../src/sandbox/status.ts';

const labels = { app: 'web', tier: 'front', 'example.com/team': 'a' };

describe('label selectors', () => {
  const cases: [string, boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['tier', true],
    ['missing', false],
    ['!missing', true],
    ['!tier', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['example.com/team=a', true],
    ['app in (web, db),!missing', true],
  ];
  for (const [sel, want] of cases) {
    it(`"${sel}" -> ${want}`, () => assert.equal(matchLabels(parseLabelSelector(sel), labels), want));
  }

  for (const bad of ['app in (web', 'a b c', 'bad key=1', 'app=in valid value!', '-app=x', ',']) {
    it(`rejects "${bad}" with 400 BadRequest`, () => {
      assert.throws(
        () => parseLabelSelector(bad),
        (e: unknown) => e instanceof ApiError && e.code === 400 && e.status.reason === 'BadRequest',
      );
    });
  }
});

describe('field selectors', () => {
  const supported = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'];
  const pod = { 'metadata.name': 'p1', 'spec.nodeName': 'n1', 'status.phase': 'Running' } as Record<
    string,
    string
  >;
  const get = (f: string) => pod[f] ?? '';
  it('matches = and !=', () => {
    assert.equal(matchFields(parseFieldSelector('spec.nodeName=n1', supported), get), true);
    assert.equal(
      matchFields(parseFieldSelector('spec.nodeName==n1,status.phase!=Failed', supported), get),
      true,
    );
    assert.equal(matchFields(parseFieldSelector('spec.nodeName=n2', supported), get), false);
    assert.equal(matchFields(parseFieldSelector('metadata.namespace=', supported), get), true);
  });
  it('rejects unsupported fields with the real message', () => {
    assert.throws(
      () => parseFieldSelector('spec.foo=bar', supported),
      (e: unknown) =>
        e instanceof ApiError && e.code === 400 && e.message === 'field label not supported: spec.foo',
    );
  });
  it('rejects garbage', () => {
    assert.throws(
      () => parseFieldSelector('nonsense', supported),
      (e: unknown) => e instanceof ApiError && e.code === 400,
    );
  });
});
