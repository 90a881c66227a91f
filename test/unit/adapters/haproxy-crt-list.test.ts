/**
 * The runtime transport's crt-list with hosts asking client certificates (crt-list.ts): HAProxy
 * takes the first line of an exact name, so a certificate's own line names its names but the
 * asking hosts, and each asking host has a line of its own with `[ca-file ... verify required]`
 * after them; a certificate with no name left keeps its line with a negative filter alone, so the
lines without options are the certificates in order.
 * Read back from those lines only: another option, a file not ours or a CA that cannot be read
 * reads as none.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crtListParts, crtListText, hostValidationOf } from '../../../adapters/haproxy/crt-list.ts';
import type { L7VirtualService } from '../../../src/model/types.ts';

const NAMES: Record<string, string[]> = {
  secure: ['secure.example.com'],
  wild: ['*.example.com'],
  both: ['a.example.com', 'secure.example.com'],
};
const files = {
  pemFile: (n: string) => `/d/${n}.pem`,
  caFile: (ca: string) => `/d/ca-${ca}.pem`,
  sniNames: (n: string) => NAMES[n],
};
const vs = (certificates: string[], asked?: L7VirtualService['hostClientValidation']): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl_https',
  vip: '192.0.2.1',
  port: 443,
  ingressClass: 'npl',
  routes: [],
  defaultPool: undefined,
  protocol: 'HTTPS',
  certificates,
  ...(asked ? { hostClientValidation: asked } : {}),
});

describe('crt-list lines for hosts asking client certificates', () => {
  it('none asked: a line per certificate, as before', () => {
    assert.equal(crtListText(vs(['secure', 'wild']), files), '/d/secure.pem\n/d/wild.pem\n');
  });

  it("the asking host leaves its certificate's own line; the default keeps the first line", () => {
    const text = crtListText(
      vs(['secure', 'wild', 'both'], [{ host: 'secure.example.com', certificate: 'secure', ca: 'one' }]),
      files,
    );
    assert.equal(
      text,
      [
        '/d/secure.pem !secure.example.com',
        '/d/wild.pem *.example.com',
        '/d/both.pem a.example.com',
        '/d/secure.pem [ca-file /d/ca-one.pem verify required] secure.example.com',
        '',
      ].join('\n'),
    );
  });

  it('a wildcard host asked: its own line; exact names beside it keep theirs', () => {
    const text = crtListText(
      vs(['both', 'wild'], [{ host: '*.example.com', certificate: 'wild', ca: 'one' }]),
      files,
    );
    assert.equal(
      text,
      [
        '/d/both.pem a.example.com secure.example.com',
        '/d/wild.pem !*.example.com',
        '/d/wild.pem [ca-file /d/ca-one.pem verify required] *.example.com',
        '',
      ].join('\n'),
    );
  });

  it('the lines without options are the certificates, in order; the asking lines apart', () => {
    const text = crtListText(
      vs(['wild', 'secure', 'both'], [{ host: 'secure.example.com', certificate: 'secure', ca: 'one' }]),
      files,
    )!;
    assert.deepEqual(crtListParts(text), {
      files: ['/d/wild.pem', '/d/secure.pem', '/d/both.pem'],
      asking: [{ file: '/d/secure.pem', caFile: '/d/ca-one.pem', host: 'secure.example.com' }],
    });
  });

  it('a certificate whose names are unknown or not DNS names never gets a line without filters while a host asks', () => {
    const odd = {
      ...files,
      sniNames: (n: string) =>
        n === 'secure'
          ? undefined
          : n === 'wild'
            ? ['x.example.com [verify none]', 'b.example.com']
            : NAMES[n],
    };
    const text = crtListText(
      vs(['secure', 'wild'], [{ host: 'secure.example.com', certificate: 'secure', ca: 'one' }]),
      odd,
    );
    assert.equal(
      text,
      [
        '/d/secure.pem !secure.example.com',
        '/d/wild.pem b.example.com',
        '/d/secure.pem [ca-file /d/ca-one.pem verify required] secure.example.com',
        '',
      ].join('\n'),
    );
  });

  it('read back from its own lines only', () => {
    const read = {
      certificate: (f: string) => (f.startsWith('/d/') ? f.slice(3, -4) : undefined),
      ca: (f: string) => (f === '/d/ca-one.pem' ? 'ONE' : undefined),
    };
    const text = crtListText(
      vs(['secure'], [{ host: 'secure.example.com', certificate: 'secure', ca: 'one' }]),
      files,
    )!;
    assert.deepEqual(hostValidationOf(text, read), [
      { host: 'secure.example.com', certificate: 'secure', ca: 'ONE' },
    ]);
    for (const edited of [
      text.replace('verify required', 'verify none'),
      text.replace('verify required', 'verify optional'),
      text.replace('[ca-file', '[crt-ignore-err all ca-file'),
      text.replace('/d/ca-one.pem', '/elsewhere/ca.pem'),
      text.replace('/d/secure.pem [', '/etc/other.pem ['),
      text.replace('] secure.example.com', '] secure.example.com other.example.com'),
    ])
      assert.equal(hostValidationOf(edited, read), undefined, edited);
  });
});
