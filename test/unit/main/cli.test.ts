/**
 * The npl-lb executable: help, one clear line and exit code 2 on bad flags, and the sandbox and
 * demo subcommands as a user runs them (`npm start` runs the demo).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseAgentFlags } from '../../../src/config/agent-flags.ts';
import { parseSandboxFlags } from '../../../src/main/sandbox.ts';
import { NplError } from '../../../src/runtime/errors.ts';
import { Cluster } from '../../support/cluster.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';
import { haproxyMissing } from '../../support/haproxy.ts';
import { request } from 'undici';

/** Whether curl is missing here (CI installs it: the demo's printed commands are run verbatim). */
function curlMissing(): boolean {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CLI = ['--import', 'tsx', join(ROOT, 'src/main/cli.ts')];
const run = promisify(execFile);

function start(t: TestContext, args: string[], cwd = ROOT): { child: ChildProcess; out: () => string } {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr!.on('data', (d: Buffer) => {
    out += d.toString();
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, out: () => out };
}

const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null ? Promise.resolve(c.exitCode) : new Promise((r) => c.once('exit', (code) => r(code)));

describe('npl-lb command line', () => {
  it('--help lists the commands; a bad flag is one line and exit code 2', async () => {
    const help = await run(process.execPath, [...CLI, '--help'], { cwd: ROOT });
    assert.match(help.stdout, /sandbox\s+in-memory Kubernetes API server/);
    const sub = await run(process.execPath, [...CLI, 'sandbox', '--help'], { cwd: ROOT });
    assert.match(sub.stdout, /--kubeconfig-out <value>/);
    const bad = await run(process.execPath, [...CLI, 'sandbox', '--nope'], { cwd: ROOT }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((bad as { code: number }).code, 2);
    const lines = (bad as { stderr: string }).stderr.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /^npl-lb: .*'--nope'.* \[NPL_FLAG_INVALID\]$/);
    const port = await run(process.execPath, [...CLI, 'sandbox', '--port', 'abc'], { cwd: ROOT }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((port as { code: number }).code, 2);
    assert.match((port as { stderr: string }).stderr, /invalid value for --port/);
  });

  it('agent: a missing --node-name and a bad --port-range are one clear line and exit code 2', async () => {
    const missing = await run(process.execPath, [...CLI, 'agent'], { cwd: ROOT }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((missing as { code: number }).code, 2);
    assert.match(
      (missing as { stderr: string }).stderr,
      /^npl-lb: invalid value for --node-name: is required/,
    );
    for (const range of ['61000', '62000-61000', '0-10', '1-70000']) {
      const bad = await run(process.execPath, [...CLI, 'agent', '--node-name', 'n1', '--port-range', range], {
        cwd: ROOT,
      }).catch((e: { code: number; stderr: string }) => e);
      assert.equal((bad as { code: number }).code, 2, range);
      assert.match(
        (bad as { stderr: string }).stderr,
        /^npl-lb: invalid value for --port-range: .*\[NPL_FLAG_INVALID\]\n$/,
        range,
      );
    }
  });

  it('agent runs as a process: annotates, serves /metrics and /readyz, stops on SIGTERM', async (t) => {
    const { kubeconfigPath, kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['127.0.10.1'] });
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('web-1', { node: 'n1', ips: ['127.0.20.1'] });
    const { child, out } = start(t, [
      'agent',
      '--node-name',
      'n1',
      '--kubeconfig',
      kubeconfigPath,
      '--forwarding',
      'userspace',
      '--http-address',
      '127.0.0.1:0',
    ]);
    await eventually(async () => (await c.annotationText('web-1')) !== undefined, 15_000, 'annotation');
    const http = /"http":"(http:\/\/[^"]+)"/.exec(out())?.[1];
    assert.ok(http, out());
    await eventually(async () => (await fetch(`${http}/readyz`)).status === 200, 5000, 'ready');
    assert.equal(await (await fetch(`${http}/healthz`)).text(), 'ok');
    assert.match(
      await (await fetch(`${http}/metrics`)).text(),
      /npl_lb_agent_ports_allocated\{protocol="tcp",family="IPv4"\} 1/,
    );
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
  });

  it('controller: a bad config is one line naming the field, exit 2; as a process it serves /api/v1/state', async (t) => {
    const { kubeconfigPath, kc, dir } = await useSandbox(t);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'clusterName: c1\nserviceType: Bogus\n');
    const r = await run(process.execPath, [...CLI, 'controller', '--config', bad], { cwd: ROOT }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal((r as { code: number }).code, 2);
    const lines = (r as { stderr: string }).stderr.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.match(lines[0]!, /serviceType: .*\[NPL_CONFIG_INVALID\]$/);
    const good = join(dir, 'good.yaml');
    writeFileSync(
      good,
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\nadapter: {type: memory}\n',
    );
    const c = new Cluster(kc);
    await c.service('web', { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 8080 }] });
    const { child, out } = start(t, [
      'controller',
      '--config',
      good,
      '--kubeconfig',
      kubeconfigPath,
      '--http-address',
      '127.0.0.1:0',
    ]);
    await eventually(() => /"http":"http:/.test(out()), 15_000, 'controller start');
    const http = /"http":"(http:\/\/[^"]+)"/.exec(out())![1];
    await eventually(
      async () => {
        const doc = (await (await fetch(`${http}/api/v1/state`)).json()) as {
          virtualServices: { name: string }[];
        };
        return doc.virtualServices.some((v) => v.name === 'c1--default-web-TCP-80');
      },
      10_000,
      'state shows the virtual service',
    );
    assert.match(
      await (await fetch(`${http}/metrics`)).text(),
      /npl_lb_controller_reconcile_duration_seconds/,
    );
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
  });

  it('controller: two replicas, one leader; the standby takes over when the leader stops', async (t) => {
    const { kubeconfigPath, kc, dir } = await useSandbox(t);
    const cfg = join(dir, 'c.yaml');
    writeFileSync(cfg, 'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\n');
    await new Cluster(kc).service('web', { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 8080 }] });
    const args = [
      'controller',
      '--config',
      cfg,
      '--kubeconfig',
      kubeconfigPath,
      '--http-address',
      '127.0.0.1:0',
      '--lease-namespace',
      'kube-system',
    ];
    const first = start(t, args);
    await eventually(() => /became leader/.test(first.out()), 15_000, 'first leads');
    const second = start(t, args);
    await eventually(() => /"http":"http:/.test(second.out()), 15_000, 'second up');
    const url = (o: string) => /"http":"(http:\/\/[^"]+)"/.exec(o)![1];
    const lastSync = async (o: string) =>
      ((await (await fetch(`${url(o)}/api/v1/state`)).json()) as { lastSync: unknown }).lastSync;
    await eventually(async () => (await lastSync(first.out())) !== null, 10_000, 'leader synced');
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await lastSync(second.out()), null, 'the standby writes nothing');
    first.child.kill('SIGTERM');
    assert.equal(await exited(first.child), 0);
    await eventually(() => /became leader/.test(second.out()), 10_000, 'standby takes over');
    await eventually(async () => (await lastSync(second.out())) !== null, 10_000, 'new leader synced');
    second.child.kill('SIGTERM');
    assert.equal(await exited(second.child), 0);
  });

  it('reads every flag from the environment too', () => {
    const f = parseSandboxFlags([], { NPL_LB_PORT: '1234', NPL_LB_TLS: 'true', NPL_LB_HOST: '127.0.0.2' });
    assert.equal(f.port, 1234);
    assert.equal(f.tls, true);
    assert.equal(f.host, '127.0.0.2');
    assert.equal(parseSandboxFlags(['--port', '5'], { NPL_LB_PORT: '1234' }).port, 5);
    assert.throws(() => parseSandboxFlags([], { NPL_LB_PORT: '99999' }), NplError);
    const agent = parseAgentFlags([], {
      NPL_LB_NODE_NAME: 'n7',
      NPL_LB_PORT_RANGE: '40000-40010',
      NPL_LB_FORWARDING: 'userspace',
    });
    assert.equal(agent['node-name'], 'n7');
    assert.deepEqual(agent['port-range'], { start: 40000, end: 40010 });
    assert.equal(agent.forwarding, 'userspace');
  });

  it('sandbox prints its URL, writes a kubeconfig client-node uses, and stops on SIGTERM', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-cli-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kcPath = join(dir, 'kubeconfig');
    const { child, out } = start(t, ['sandbox', '--port', '0', '--kubeconfig-out', kcPath]);
    await eventually(() => /kubeconfig written/.test(out()), 15_000, 'sandbox start');
    assert.match(out(), /sandbox listening on http:\/\/127\.0\.0\.1:\d+/);
    const kc = new KubeConfig();
    kc.loadFromFile(kcPath);
    const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.ok(ns.items.some((n) => n.metadata?.name === 'default'));
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
  });

  it('--tls serves HTTPS with a generated token written into the kubeconfig', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-cli-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const kcPath = join(dir, 'kubeconfig');
    const { child, out } = start(t, ['sandbox', '--tls', '--kubeconfig-out', kcPath]);
    await eventually(() => /kubeconfig written/.test(out()), 15_000, 'sandbox start');
    assert.match(out(), /https:\/\/127\.0\.0\.1:\d+/);
    const kc = new KubeConfig();
    kc.loadFromFile(kcPath);
    assert.ok(kc.getCurrentUser()?.token);
    const ns = await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.ok(ns.items.length >= 3);
    child.kill('SIGINT');
    assert.equal(await exited(child), 0);
  });

  it('npm start (the demo): traffic through the load balancer reaches the Pods; Ctrl-C removes what it made', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-demo-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { child, out } = start(t, ['demo', '--work-dir', dir]);
    // If the demo dies before its own cleanup (a failed assertion kills it), stop its HAProxy too:
    // the master running on this test's folder (not the printed pid: the test kills that one and
    // the supervisor starts another).
    t.after(() => {
      let pid: string | undefined;
      try {
        pid = execFileSync('pgrep', ['-o', '-f', `${dir}/haproxy/master.sock`], { encoding: 'utf8' }).trim();
      } catch {
        // none running
      }
      if (pid) {
        try {
          process.kill(Number(pid), 'SIGTERM');
        } catch {
          // already gone
        }
      }
    });
    await eventually(() => /Press Ctrl-C/.test(out()), 30_000, 'demo start');
    assert.match(out(), new RegExp(`export KUBECONFIG=${join(dir, 'kubeconfig')}`));
    // A second npm start in the same clone: refused in one line, the first demo's files untouched.
    const second = start(t, ['demo', '--work-dir', dir]);
    assert.equal(await exited(second.child), 1);
    assert.match(
      second.out(),
      /^npl-lb: a demo is already running from .* \(pid \d+\).* \[NPL_DEMO_RUNNING\]$/m,
    );
    assert.ok(existsSync(join(dir, 'kubeconfig')), "the first demo's kubeconfig is still there");
    assert.match(readFileSync(join(dir, 'kubeconfig'), 'utf8'), /server: http:\/\/127\.0\.0\.1:\d+/);
    const dashboard = /Pools by node: (http:\/\/\S+)\/ \(dashboard\)/.exec(out())![1]!;
    assert.match(await (await fetch(`${dashboard}/`)).text(), /<title>npl-lb: pools by node<\/title>/);
    if (haproxyMissing()) {
      assert.match(out(), /HAProxy is not installed/);
    } else {
      const l4 = /curl (http:\/\/127\.0\.30\.\d+:8080\/)/.exec(out())![1]!;
      const l7 = /curl -H 'Host: web\.demo\.local' (http:\/\/127\.0\.30\.\d+:8080\/)/.exec(out())![1]!;
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        // A new connection each time: the L4 VIP balances connections, not the requests on one.
        const body = await (await request(l4, { reset: true })).body.text();
        assert.match(body, /^hello from pod web-\d on node-\d/);
        seen.add(body.split(' ')[3]!);
      }
      assert.deepEqual([...seen].sort(), ['web-1', 'web-2', 'web-3'], 'round robin over the three Pods');
      // (fetch does not let a caller set Host; undici's request does.)
      const viaIngress = await request(l7, { headers: { host: 'web.demo.local' } });
      assert.match(await viaIngress.body.text(), /^hello from pod web-\d on node-\d \(web\.demo\.local/);
      const other = await request(l7, { headers: { host: 'elsewhere' } });
      await other.body.dump();
      assert.equal(other.statusCode, 503, 'no route for another host');
      // The Gateway: the printed curl command, verbatim; over 40 requests both versions answer
      // (80/20), each with the header the route adds.
      const gwCurl = /^ {2}(curl -H 'Host: gw\.demo\.local' http:\/\/\S+)/m.exec(out())![1]!;
      const gwUrl = /(http:\/\/\S+)/.exec(gwCurl)![1]!;
      const versions = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const body = await (await request(gwUrl, { headers: { host: 'gw.demo.local' } })).body.text();
        assert.match(body, /\[x-demo: gateway\]$/m);
        versions.add(/pod (web(?:-v2)?)-\d/.exec(body)![1]!);
      }
      assert.deepEqual([...versions].sort(), ['web', 'web-v2'], 'the split reaches both versions');
      if (!curlMissing()) assert.match((await run('sh', ['-c', gwCurl])).stdout, /\[x-demo: gateway\]/);
      // HTTPS: the printed curl command, verbatim, with the CA file the demo wrote (no -k).
      const https = /^ {2}(curl --cacert \S+ --resolve \S+ https:\/\/\S+)/m.exec(out())![1]!;
      if (curlMissing())
        t.diagnostic('curl is not installed (apt-get install curl): the HTTPS command was not run');
      else {
        const body = (await run('sh', ['-c', https])).stdout;
        assert.match(body, /^hello from pod web-\d on node-\d \(web\.demo\.local/);
      }
      // HAProxy killed: the demo's supervisor starts it again, the controller says so on its own
      // Pod (Warning, then Normal) and counts the restart; traffic is back within seconds.
      process.kill(Number(/HAProxy \(pid (\d+)\)/.exec(out())![1]), 'SIGKILL');
      const server = /server: (http:\/\/\S+)/.exec(readFileSync(join(dir, 'kubeconfig'), 'utf8'))![1]!;
      const said = async (): Promise<string[]> => {
        const list = (await (await fetch(`${server}/api/v1/namespaces/npl-lb-system/events`)).json()) as {
          items: { reason: string; involvedObject: { kind: string; name: string } }[];
        };
        return list.items
          .filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === 'npl-lb-controller')
          .map((e) => e.reason);
      };
      await eventually(
        async () => {
          const reasons = await said();
          return reasons.includes('LoadBalancerUnreachable') && reasons.includes('LoadBalancerReachable');
        },
        10_000,
        'the outage told on the controller Pod',
      );
      assert.match(await (await fetch(`${dashboard}/metrics`)).text(), /^npl_lb_device_restarts_total 1$/m);
      await eventually(
        async () => {
          try {
            const r = await request(l4, { reset: true, headersTimeout: 1000, bodyTimeout: 1000 });
            return /^hello from pod/.test(await r.body.text());
          } catch {
            return false;
          }
        },
        5000,
        'traffic back after the restart',
      );
    }
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    assert.equal(existsSync(join(dir, 'kubeconfig')), false, 'kubeconfig removed');
    assert.equal(existsSync(join(dir, 'haproxy')), false, 'HAProxy files removed');
  });

  it('npm start -- --dual-stack: web-dual answers on its IPv4 VIP and on ::1, its IPv6 member being web-1', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-demo-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { child, out } = start(t, ['demo', '--work-dir', dir, '--dual-stack']);
    t.after(() => {
      let pid: string | undefined;
      try {
        pid = execFileSync('pgrep', ['-o', '-f', `${dir}/haproxy/master.sock`], { encoding: 'utf8' }).trim();
      } catch {
        // none running
      }
      if (pid) process.kill(Number(pid), 'SIGTERM');
    });
    await eventually(() => /Press Ctrl-C/.test(out()), 30_000, 'demo start');
    if (haproxyMissing()) {
      assert.match(out(), /HAProxy is not installed/);
    } else {
      const v4 =
        /curl (http:\/\/127\.0\.30\.\d+:9080\/) +# LoadBalancer Service web-dual \(RequireDualStack\), IPv4/.exec(
          out(),
        );
      const v6 =
        /curl -g (http:\/\/\[::1\]:9080\/) +# LoadBalancer Service web-dual \(RequireDualStack\), IPv6/.exec(
          out(),
        );
      assert.ok(v4 && v6, out());
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        const body = await (await request(v4[1]!, { reset: true })).body.text();
        seen.add(body.split(' ')[3]!);
      }
      assert.deepEqual([...seen].sort(), ['web-1', 'web-2', 'web-3'], 'IPv4: the three Pods');
      for (let i = 0; i < 3; i++) {
        const body = await (await request(v6[1]!, { reset: true })).body.text();
        assert.match(
          body,
          /^hello from pod web-1 on node-1 \(\[::1\]:9080/,
          'IPv6: web-1, the one Pod with an IPv6 address',
        );
      }
      if (!curlMissing())
        assert.match((await run('sh', ['-c', v6[0]!.replace(/ +#.*$/, '')])).stdout, /^hello from pod web-1/);
      // The state API and `npl-lb pools` show both families.
      const dashboard = /Pools by node: (http:\/\/\S+)\/ \(dashboard\)/.exec(out())![1]!;
      const doc = (await (await fetch(`${dashboard}/api/v1/state`)).json()) as {
        virtualServices: { name: string; vip: string }[];
        pools: { name: string; members: { address: string; node: string }[] }[];
      };
      assert.deepEqual(
        doc.virtualServices
          .filter((v) => v.name.startsWith('demo--default-web-dual-'))
          .map((v) => v.vip.includes(':')),
        [false, true],
      );
      const pool6 = doc.pools.find((p) => p.name === 'demo--default-web-dual-http_v6')!;
      assert.deepEqual(
        pool6.members.map((m) => `${m.address}@${m.node}`),
        ['::1@node-1'],
      );
      const pools = await run(process.execPath, [
        '--import',
        'tsx',
        'src/main/cli.ts',
        'pools',
        '--server',
        dashboard,
      ]);
      assert.match(
        pools.stdout,
        /^node-1 +\[::1\]:\d+ +default\/web-1 .* demo--default-web-dual-http_v6 +demo--default-web-dual-TCP-9080_v6 \(\[::1\]:9080\)/m,
      );
    }
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
  });
});
