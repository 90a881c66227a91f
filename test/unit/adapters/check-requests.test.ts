/**
 * A member check's method and the statuses meaning up (issue 33 item 1: a policy overrides the
 * probe's request), as each vendor writes them: HAProxy's `option httpchk HEAD` and `http-check
 * expect status`; the Avi HealthMonitor's request line and response code classes, read back as
 * written; the AS3 Monitor's send line and a receive pattern that matches exactly the codes of the
 * ranges (a property over every status code and random ranges).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseHealthMonitor, renderHealthMonitor } from '../../../adapters/avi/objects.ts';
import { renderCheckMonitor, statusPattern } from '../../../adapters/f5/pool-objects.ts';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { statusRanges } from '../../../src/model/status-ranges.ts';
import type { HttpCheck } from '../../../src/model/types.ts';
import * as kit from '../../support/model.ts';

const check = (o: Partial<HttpCheck> = {}): HttpCheck => ({
  type: 'http',
  path: '/healthz',
  intervalSeconds: 5,
  timeoutSeconds: 1,
  rise: 1,
  fall: 3,
  ...o,
});
const web = (c: HttpCheck) => ({
  ...kit.pool('c1--default-web-80.l7', [kit.member('192.0.2.1', 61000)]),
  health: 'http' as const,
  check: c,
});

describe('member check requests and expected statuses', () => {
  it('HAProxy: HEAD in the httpchk line, the statuses as an expect rule; without them, GET and HAProxy 2xx-3xx', () => {
    const cfg = (c: HttpCheck) =>
      renderConfig([web(c)], [], [], { owner: 'c1', adminSocket: '/tmp/x.sock' })
        .split('\n')
        .filter((l) => /httpchk|http-check/.test(l))
        .map((l) => l.trim());
    assert.deepEqual(
      cfg(
        check({
          method: 'HEAD',
          expect: [
            { from: 200, to: 204 },
            { from: 302, to: 302 },
          ],
        }),
      ),
      ['option httpchk HEAD "/healthz"', 'http-check expect status 200-204,302'],
    );
    assert.deepEqual(cfg(check()), ['option httpchk GET "/healthz"']);
  });

  it('Avi: the request line names the method, classes of codes are read back as the ranges they were', () => {
    for (const c of [
      check({ method: 'HEAD', expect: [{ from: 200, to: 299 }] }),
      check({
        expect: [
          { from: 200, to: 299 },
          { from: 400, to: 499 },
        ],
      }),
      check({ expect: [{ from: 200, to: 499 }] }),
      check(),
    ]) {
      const o = renderHealthMonitor(web(c), c, 'c1');
      const m = o.http_monitor as { http_request: string; http_response_code: string[] };
      assert.match(m.http_request, new RegExp(`^${c.method ?? 'GET'} /healthz HTTP/1\\.0$`));
      assert.deepEqual(parseHealthMonitor(o), c, JSON.stringify(m));
    }
    const m = renderHealthMonitor(web(check()), check(), 'c1').http_monitor as {
      http_response_code: string[];
    };
    assert.deepEqual(m.http_response_code, ['HTTP_2XX', 'HTTP_3XX'], 'the kubelet rule by default');
  });

  it('BIG-IP: the send line names the method; the receive pattern matches exactly the codes of the ranges (property)', () => {
    const mon = renderCheckMonitor(check({ method: 'HEAD', expect: [{ from: 204, to: 204 }] }), 'c1');
    assert.match(String(mon.send), /^HEAD \/healthz HTTP\/1\.0\r\n\r\n$/);
    assert.equal(mon.receive, 'HTTP/1\\.[01] (204)');
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(fc.integer({ min: 100, max: 599 }), fc.integer({ min: 0, max: 150 })).map(([from, n]) => ({
            from,
            to: Math.min(599, from + n),
          })),
          { minLength: 1, maxLength: 4 },
        ),
        (list) => {
          const ranges = statusRanges(list) ?? [{ from: 200, to: 399 }];
          const re = new RegExp(`^(?:${statusPattern(ranges)})$`);
          for (let code = 100; code <= 599; code++) {
            const inside = ranges.some((r) => code >= r.from && code <= r.to);
            if (re.test(String(code)) !== inside) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('ranges as the model keeps them: sorted, merged when they touch, the default none', () => {
    assert.deepEqual(
      statusRanges([{ from: 301 }, { from: 200, to: 250 }, { from: 251, to: 260 }, { from: 240 }]),
      [
        { from: 200, to: 260 },
        { from: 301, to: 301 },
      ],
    );
    assert.equal(
      statusRanges([
        { from: 300, to: 399 },
        { from: 200, to: 299 },
      ]),
      undefined,
    );
    assert.equal(statusRanges([]), undefined);
  });
});
