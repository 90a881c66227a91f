/**
 * A private CA instead of insecureSkipVerify: with `caFile` the adapter trusts a device whose
 * certificate that CA signed; without it the same device is refused; a caFile that cannot be read
 * or holds no certificate is a configuration error naming the field. Avi, F5 and the Data Plane
 * API share the one implementation (adapters/settings.ts); each config module is checked to use it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { AviAdapter } from '../../../adapters/avi/adapter.ts';
import { aviOptions } from '../../../adapters/avi/config.ts';
import { AviSimulator } from '../../../sim/avi/simulator.ts';
import { f5Options } from '../../../adapters/f5/config.ts';
import { haproxySettingsSchema } from '../../../adapters/haproxy/settings.ts';
import { tlsTrust } from '../../../adapters/settings.ts';
import { NplError } from '../../../src/runtime/errors.ts';
import { selfSignedCertificate } from '../../../src/runtime/tls.ts';

const env = {
  NPL_LB_AVI_USERNAME: 'admin',
  NPL_LB_AVI_PASSWORD: 'admin',
  NPL_LB_F5_USERNAME: 'u',
  NPL_LB_F5_PASSWORD: 'p',
};

it('caFile: the Avi adapter trusts the device its CA signed, and only with it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'npl-ca-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cert = await selfSignedCertificate('127.0.0.1');
  const sim = new AviSimulator({ tls: cert });
  const url = await sim.start();
  t.after(() => sim.close());
  assert.match(url, /^https:/);
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, cert.cert);
  const adapter = (extra: Record<string, unknown>) =>
    new AviAdapter(aviOptions('c1', { type: 'avi', url, ...extra }, env));
  const trusted = adapter({ caFile });
  t.after(() => trusted.close());
  await trusted.verify();
  const untrusted = adapter({});
  t.after(() => untrusted.close());
  await assert.rejects(untrusted.verify(), /certificate|self.signed/i);

  const bad = join(dir, 'bad.pem');
  writeFileSync(bad, 'not a certificate');
  for (const [file, why] of [
    [bad, /holds no PEM certificate/],
    [join(dir, 'missing.pem'), /cannot read/],
  ] as const) {
    assert.throws(
      () => aviOptions('c1', { type: 'avi', url, caFile: file }, env),
      (e: unknown) =>
        e instanceof NplError &&
        e.code === 'NPL_CONFIG_INVALID' &&
        why.test(e.message) &&
        /adapter\.caFile/.test(e.message),
    );
  }
  // F5 and the Data Plane API take the same field and the same reading.
  assert.equal(f5Options('c1', { type: 'f5', url: 'https://bigip.example', caFile }, env).ca, cert.cert);
  const dp = haproxySettingsSchema.parse({
    type: 'haproxy',
    transport: 'dataplane',
    url: 'https://dp.example:5555',
    caFile,
  });
  assert.equal(tlsTrust(dp as { caFile?: string }).ca, cert.cert);
  assert.deepEqual(tlsTrust({ insecureSkipVerify: true }), { insecureSkipVerify: true });
});
