/**
 * `npl-lb sim avi` and `npl-lb controller` with the Avi adapter, as processes: the simulator prints
 * its URL; the controller takes its Avi settings from the config and its credentials from the
 * environment, refuses a bad setting in one line, exits when the cloud does not exist, and creates
 * the objects of a LoadBalancer Service.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { AviSession } from '../../../adapters/avi/session.ts';
import { CLI, ROOT, run, startCli } from '../../support/cli-process.ts';
import { Cluster } from '../../support/cluster.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';

const CREDS = { ...process.env, NPL_LB_AVI_USERNAME: 'admin', NPL_LB_AVI_PASSWORD: 'pw0rd' };

const start = (t: TestContext, args: string[], env = process.env) => startCli(t, args, { env });

describe('Avi from the command line', () => {
  it('sim avi and the controller: bad settings refused, a missing cloud exits 1, a Service is created', async (t) => {
    const { kubeconfigPath, kc, dir } = await useSandbox(t);
    const sim = start(t, ['sim', 'avi', '--port', '0', '--password', 'pw0rd']);
    await eventually(() => /listening on http:\/\/\S+/.test(sim.out()), 15_000, 'simulator start');
    const url = /listening on (http:\/\/\S+)/.exec(sim.out())![1]!;
    const cfg = (adapter: string) => {
      const p = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(
        p,
        `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\nadapter: ${adapter}\n`,
      );
      return p;
    };
    const common = [
      '--kubeconfig',
      kubeconfigPath,
      '--leader-elect',
      'false',
      '--http-address',
      '127.0.0.1:0',
    ];
    const bad = await run(
      process.execPath,
      [...CLI, 'controller', '--config', cfg(`{type: avi, url: "${url}", concurrency: 0}`), ...common],
      { cwd: ROOT, env: CREDS },
    ).catch((e: { code: number; stderr: string }) => e);
    assert.equal((bad as { code: number }).code, 2);
    assert.match(
      (bad as { stderr: string }).stderr.trim(),
      /^npl-lb: adapter\.concurrency: .*\[NPL_CONFIG_INVALID\]$/,
    );
    const noCloud = await run(
      process.execPath,
      [...CLI, 'controller', '--config', cfg(`{type: avi, url: "${url}", cloud: Nowhere}`), ...common],
      { cwd: ROOT, env: CREDS },
    ).catch((e: { code: number; stderr: string }) => e);
    assert.equal((noCloud as { code: number }).code, 1);
    assert.match(
      (noCloud as { stderr: string }).stderr,
      /cloud Nowhere not found.*\[NPL_ADAPTER_CHECK_FAILED\]/,
    );

    await new Cluster(kc).service('web', {
      type: 'LoadBalancer',
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    });
    const ctl = start(t, ['controller', '--config', cfg(`{type: avi, url: "${url}"}`), ...common], CREDS);
    const session = new AviSession({
      url,
      username: 'admin',
      password: 'pw0rd',
      version: '22.1.3',
      tenant: 'admin',
    });
    t.after(() => session.close());
    await eventually(
      async () => {
        const r = await session.call('GET', '/api/virtualservice?name=c1--default-web-TCP-80');
        return (r.body as { count?: number }).count === 1;
      },
      15_000,
      'the virtual service on the Avi simulator',
    );
    assert.doesNotMatch(ctl.out(), /pw0rd/, 'no credentials in logs');
    ctl.child.kill('SIGTERM');
    await new Promise((r) => ctl.child.once('exit', r));
    assert.equal(ctl.child.exitCode, 0);

    // Uninstall: --delete-config --once removes every object of ours and exits 0.
    const count = async (type: string) =>
      ((await session.call('GET', `/api/${type}?created_by=npl-lb-c1`)).body as { count?: number }).count;
    assert.ok(((await count('pool')) ?? 0) > 0);
    const { stderr } = await run(
      process.execPath,
      [
        ...CLI,
        'controller',
        '--config',
        cfg(`{type: avi, url: "${url}"}`),
        ...common,
        '--delete-config=true',
        '--once',
      ],
      { cwd: ROOT, env: CREDS, timeout: 60_000 },
    );
    assert.match(stderr, /nothing of ours is left on the load balancer/);
    for (const type of ['virtualservice', 'vsvip', 'pool'])
      assert.equal(await count(type), 0, `${type}: 0 left`);
  });
});
