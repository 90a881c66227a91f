import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadKubeConfig } from '../../../src/kube/client.ts';
import { NplError } from '../../../src/runtime/errors.ts';
import { renderKubeconfig } from '../../../src/sandbox/kubeconfig.ts';

describe('loadKubeConfig', () => {
  it('takes --kubeconfig, then $KUBECONFIG, then ~/.kube/config; none is a clear error', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-kc-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const write = (path: string, server: string) => writeFileSync(path, renderKubeconfig({ server }));
    write(join(dir, 'flag'), 'http://127.0.0.1:1');
    write(join(dir, 'env'), 'http://127.0.0.1:2');
    mkdirSync(join(dir, 'home', '.kube'), { recursive: true });
    write(join(dir, 'home', '.kube', 'config'), 'http://127.0.0.1:3');
    const home = join(dir, 'home');
    const env = { KUBECONFIG: join(dir, 'env') };
    const server = (r: ReturnType<typeof loadKubeConfig>) => r.kc.getCurrentCluster()?.server;
    assert.equal(server(loadKubeConfig({ flag: join(dir, 'flag'), env, home })), 'http://127.0.0.1:1');
    const e = loadKubeConfig({ env, home });
    assert.equal(e.origin, 'env');
    assert.equal(server(e), 'http://127.0.0.1:2');
    assert.equal(loadKubeConfig({ env: {}, home }).origin, 'home');
    assert.throws(
      () => loadKubeConfig({ env: {}, home: join(dir, 'nowhere') }),
      (err: unknown) => err instanceof NplError && err.code === 'NPL_KUBECONFIG_MISSING',
    );
    assert.throws(
      () => loadKubeConfig({ flag: join(dir, 'missing'), env: {}, home }),
      (err: unknown) => err instanceof NplError && /does not exist/.test(err.message),
    );
  });

  it('writes kubeconfigs client-node accepts for plain HTTP (skip TLS verify) and for TLS with a CA and token', () => {
    const plain = renderKubeconfig({ server: 'http://127.0.0.1:9' });
    assert.match(plain, /insecure-skip-tls-verify: true/);
    const tls = renderKubeconfig({ server: 'https://127.0.0.1:9', caPem: 'PEM', token: 'tok' });
    assert.match(tls, /certificate-authority-data: UEVN/);
    assert.match(tls, /token: tok/);
  });
});
