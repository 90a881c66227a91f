/**
 * Issue 46, item 2: the test that keeps a refused client-filter change from failing open. A live
 * virtual service is "wider" when it lets in a client its desired form would refuse.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientFilterWidens } from '../../../src/model/client-filter.ts';
import * as kit from '../../support/model.ts';

describe('clientFilterWidens', () => {
  it('L4: a missing filter or a range the desired lacks is wider; the same or a narrower one is not', () => {
    const vs = (sourceRanges?: string[]) => kit.l4('v', 'p', sourceRanges ? { sourceRanges } : {});
    const table: [string[] | undefined, string[] | undefined, boolean][] = [
      [undefined, undefined, false],
      [undefined, ['10.0.0.0/8'], true],
      [['10.0.0.0/8'], undefined, false],
      [['10.0.0.0/8'], ['10.0.0.0/8'], false],
      [['10.0.0.0/8'], ['10.0.0.0/8', '192.0.2.0/24'], false],
      [['10.0.0.0/8', '192.0.2.0/24'], ['10.0.0.0/8'], true],
      [['10.0.0.0/8'], [], true],
      [[], [], false],
      [[], ['10.0.0.0/8'], false],
    ];
    for (const [live, desired, want] of table)
      assert.equal(
        clientFilterWidens(vs(live), vs(desired)),
        want,
        `${JSON.stringify(live)} -> ${JSON.stringify(desired)}`,
      );
  });

  it('L7: per route of the same source, host and path; other tenants’ routes do not count', () => {
    const r = (source: string, sourceRanges?: string[]) =>
      kit.route({
        source,
        host: `${source}.example`,
        path: '/',
        pool: 'p',
        ...(sourceRanges ? { sourceRanges } : {}),
      });
    const vs = (...routes: ReturnType<typeof r>[]) => kit.l7('i', routes);
    assert.equal(clientFilterWidens(vs(r('a'), r('b')), vs(r('a', ['10.0.0.0/8']), r('b'))), true);
    assert.equal(
      clientFilterWidens(vs(r('a', ['10.0.0.0/8']), r('b')), vs(r('a', ['10.0.0.0/8']), r('b'))),
      false,
    );
    assert.equal(
      clientFilterWidens(vs(r('a', ['10.0.0.0/8'])), vs(r('a'))),
      false,
      'lifting a filter is not narrowing',
    );
    assert.equal(
      clientFilterWidens(vs(r('b')), vs(r('a', ['10.0.0.0/8']), r('b'))),
      false,
      'a new route is not live yet',
    );
    assert.equal(clientFilterWidens(kit.l4('v', 'p'), vs(r('a', []))), false, 'another kind');
  });
});
