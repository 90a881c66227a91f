/**
 * `npl-lb sim dataplane` and `npl-lb controller` with the HAProxy dataplane transport, as
 * processes: flags and settings refused in one line, the controller configures a LoadBalancer
 * Service through the simulator's API, and the simulator stops its HAProxy on SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DataplaneClient } from '../../../adapters/haproxy/dataplane/client.ts';
import { exited, runCli, startCli } from '../../support/cli-process.ts';
import { Cluster } from '../../support/cluster.ts';
import { haproxyMissing } from '../../support/haproxy.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';

const CREDS = { ...process.env, NPL_LB_HAPROXY_USERNAME: 'ops', NPL_LB_HAPROXY_PASSWORD: 'pw0rd' };

describe('HAProxy Data Plane API from the command line', { skip: haproxyMissing() }, () => {
  it('sim dataplane and the controller: bad input refused, a Service configured, HAProxy stopped', async (t) => {
    const noDir = await runCli(['sim', 'dataplane', '--port', '0']);
    assert.equal(noDir.code, 2);
    assert.match(noDir.stderr, /work-dir.*\[NPL_FLAG_INVALID\]/);

    const work = mkdtempSync(join(tmpdir(), 'npl-sim-dp-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    const sim = startCli(t, [
      'sim',
      'dataplane',
      '--port',
      '0',
      '--work-dir',
      work,
      '--username',
      'ops',
      '--password',
      'pw0rd',
    ]);
    await eventually(() => /listening on http:\/\/\S+/.test(sim.out()), 15_000, 'simulator start');
    const url = /listening on (http:\/\/\S+)/.exec(sim.out())![1]!;
    const haproxyPid = Number(/HAProxy PID (\d+)/.exec(sim.out())![1]);

    const { kubeconfigPath, kc, dir } = await useSandbox(t);
    const cfg = (adapter: string) => {
      const p = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
      writeFileSync(
        p,
        `clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.33.0/24]}\nadapter: ${adapter}\n`,
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
    const badSlots = await runCli(
      [
        'controller',
        '--config',
        cfg(`{type: haproxy, transport: dataplane, url: "${url}", slots: 0}`),
        ...common,
      ],
      CREDS,
    );
    assert.equal(badSlots.code, 2);
    assert.match(badSlots.stderr.trim(), /^npl-lb: adapter\.slots: .*\[NPL_CONFIG_INVALID\]$/);
    const noCreds = await runCli([
      'controller',
      '--config',
      cfg(`{type: haproxy, transport: dataplane, url: "${url}"}`),
      ...common,
    ]);
    assert.equal(noCreds.code, 2);
    assert.match(noCreds.stderr, /NPL_LB_HAPROXY_USERNAME/);

    await new Cluster(kc).service('web', {
      type: 'LoadBalancer',
      ports: [{ name: 'http', port: 18300, targetPort: 8080 }],
    });
    const ctl = startCli(
      t,
      [
        'controller',
        '--config',
        cfg(`{type: haproxy, transport: dataplane, url: "${url}", apiVersion: v2, slots: 3}`),
        ...common,
      ],
      { env: CREDS },
    );
    const api = new DataplaneClient({ url, apiVersion: 'v2', username: 'ops', password: 'pw0rd' });
    t.after(() => api.close());
    await eventually(
      async () => (await api.frontends()).some((f) => f.name === 'c1--default-web-TCP-18300'),
      20_000,
      'the frontend is configured',
    );
    const servers = await api.servers('c1--default-web-http');
    assert.equal(servers.length, 3, 'one step of slots, all free');
    assert.ok(servers.every((s) => s.maintenance === 'enabled'));
    ctl.child.kill('SIGTERM');
    assert.equal(await exited(ctl.child), 0);

    sim.child.kill('SIGTERM');
    assert.equal(await exited(sim.child), 0);
    assert.throws(() => process.kill(haproxyPid, 0), 'HAProxy is stopped with the simulator');
  });
});
