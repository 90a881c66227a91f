/**
 * The test build loads @kubernetes/client-node as one bundled file (scripts/bundle-client-node.mjs);
 * the packages the checkout depends on itself stay outside it, so a process holds one undici as an
 * installed npl-lb does. With undici bundled in, the client loaded first made its copy the
 * process's dispatcher, and a multipart upload built with the other copy's FormData (the Data
 * Plane adapter's certificate upload) failed with "i is not a function". A fresh process, so that
 * the client is the first to load.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../../support/cli-process.ts';

const UPLOAD = `
await import('@kubernetes/client-node');
const { FormData, request } = await import('undici');
const form = new FormData();
form.append('file_upload', new Blob(['-----BEGIN CERTIFICATE-----\\n']), 'a.pem');
const res = await request(process.argv[1], { method: 'POST', body: form });
process.stdout.write(await res.body.text());
`;

it('a multipart upload through undici works in a process that loaded the Kubernetes client first (one undici)', async (t) => {
  const server = createServer((req, res) => {
    let n = 0;
    req.on('data', (d: Buffer) => (n += d.length));
    req.on('end', () => res.end(`${req.headers['content-type']?.split(';')[0]} ${n}`));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', UPLOAD, `http://127.0.0.1:${port}/upload`],
    { cwd: ROOT, timeout: 30_000 },
  );
  const [type, size] = stdout.split(' ');
  assert.equal(type, 'multipart/form-data');
  assert.ok(Number(size) > 28, `a body of ${size} bytes`);
});
