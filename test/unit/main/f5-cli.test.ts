/**
 * `npl-lb sim bigip` and `npl-lb controller` with the F5 adapter, as processes: the simulator
 * prints its URL; the controller reads its F5 settings from the config and its credentials from
 * the environment, refuses bad settings in one line, exits when AS3 is too old, and declares the
 * Services it finds.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fetch } from 'undici';
import { CLI, ROOT, run, SHARED, startCli } from '../../support/cli-process.ts';
import { Cluster } from '../../support/cluster.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';

/** The workspace's copy of the published schema, beside the checkout when there is one. */
const PUBLISHED = join(SHARED, 'specs/f5/as3-schema-3.56.0.json');

const CREDS = { ...process.env, NPL_LB_F5_USERNAME: 'admin', NPL_LB_F5_PASSWORD: 's3cret' };

const start = (t: TestContext, args: string[], env = process.env) => startCli(t, args, { env });

async function bigip(t: TestContext, extra: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const sim = start(t, ['sim', 'bigip', '--port', '0', '--password', 's3cret', ...extra]);
  await eventually(() => /listening on http:\/\/\S+/.test(sim.out()), 15_000, 'simulator start');
  return { url: /listening on (http:\/\/\S+)/.exec(sim.out())![1]!, child: sim.child };
}

const failing = (args: string[], env = process.env) =>
  run(process.execPath, [...CLI, ...args], { cwd: ROOT, env }).then(
    () => ({ code: 0, stderr: '' }),
    (e: { code: number; stderr: string }) => e,
  );

describe('F5 from the command line', () => {
  it('bad F5 settings or missing credentials: one line naming the field, exit 2; AS3 too old: exit 1', async (t) => {
    const { kubeconfigPath, dir } = await useSandbox(t);
    const cfg = (adapter: string) => {
      const p = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(p, `clusterName: c1\nadapter: ${adapter}\n`);
      return p;
    };
    const noUrl = await failing(
      ['controller', '--config', cfg('{type: f5}'), '--kubeconfig', kubeconfigPath],
      CREDS,
    );
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr.trim(), /^npl-lb: adapter\.url: .*\[NPL_CONFIG_INVALID\]$/);
    const noCreds = await failing(
      [
        'controller',
        '--config',
        cfg('{type: f5, url: "https://127.0.0.1:1"}'),
        '--kubeconfig',
        kubeconfigPath,
      ],
      { ...process.env, NPL_LB_F5_USERNAME: '', NPL_LB_F5_PASSWORD: '' },
    );
    assert.equal(noCreds.code, 2);
    assert.match(noCreds.stderr, /NPL_LB_F5_USERNAME and NPL_LB_F5_PASSWORD/);
    const old = await bigip(t, ['--as3-version', '3.20.0']);
    const tooOld = await failing(
      [
        'controller',
        '--config',
        cfg(`{type: f5, url: "${old.url}"}`),
        '--kubeconfig',
        kubeconfigPath,
        '--leader-elect',
        'false',
        '--http-address',
        '127.0.0.1:0',
      ],
      CREDS,
    );
    assert.equal(tooOld.code, 1);
    assert.match(tooOld.stderr, /AS3 3\.20\.0 .* too old.*\[NPL_ADAPTER_CHECK_FAILED\]/);
    assert.doesNotMatch(tooOld.stderr, /s3cret/, 'no credentials in errors');
  });

  it('the controller declares a LoadBalancer Service on the simulated BIG-IP', async (t) => {
    const { kubeconfigPath, kc, dir } = await useSandbox(t);
    const sim = await bigip(t);
    const config = join(dir, 'f5.yaml');
    writeFileSync(
      config,
      `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\nadapter: {type: f5, url: "${sim.url}", tenant: k8s_c1}\n`,
    );
    await new Cluster(kc).service('web', {
      type: 'LoadBalancer',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    });
    const ctl = start(
      t,
      [
        'controller',
        '--config',
        config,
        '--kubeconfig',
        kubeconfigPath,
        '--http-address',
        '127.0.0.1:0',
        '--leader-elect',
        'false',
      ],
      CREDS,
    );
    const login = await fetch(`${sim.url}/mgmt/shared/authn/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: 's3cret', loginProviderName: 'tmos' }),
    });
    const token = ((await login.json()) as { token: { token: string } }).token.token;
    await eventually(
      async () => {
        // A read the loaded simulator drops (a reset connection) is a miss, not the end.
        const r = await fetch(`${sim.url}/mgmt/shared/appsvcs/declare/k8s_c1`, {
          headers: { 'x-f5-auth-token': token },
        }).catch(() => undefined);
        if (r?.status !== 200) return false;
        const doc = (await r.json()) as Record<string, Record<string, Record<string, { class?: string }>>>;
        // In whichever application the layout puts it (per application on AS3 3.47 and later).
        return Object.values(doc.k8s_c1 ?? {}).some(
          (app) => app?.['c1--default-web-TCP-80']?.class === 'Service_TCP',
        );
      },
      30_000,
      'the virtual service declared in the configured tenant',
    );
    assert.doesNotMatch(ctl.out(), /s3cret/, 'no credentials in logs');
    ctl.child.kill('SIGTERM');
    await new Promise((r) => ctl.child.once('exit', r));
    assert.equal(ctl.child.exitCode, 0);
  });

  it(
    'the bundled AS3 schema is the published 3.56.0 one',
    // Compares the bundle with the workspace's copy when there is one; the tests never need it.
    { skip: !existsSync(PUBLISHED) && 'no ../shared/specs here' },
    () => {
      const bundled = readFileSync(join(ROOT, 'adapters/f5/schema/as3-schema-3.56.0.json'), 'utf8');
      const published = readFileSync(PUBLISHED, 'utf8');
      assert.equal(bundled, published);
    },
  );
});
