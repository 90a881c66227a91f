/**
 * The npl-lb executable: help, one clear line and exit code 2 on bad flags, and the sandbox
 * subcommand as a user runs it (the demo, `npm start`: demo.test.ts).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parseAgentFlags } from '../../../src/config/agent-flags.ts';
import { parseSandboxFlags } from '../../../src/main/sandbox.ts';
import { NplError } from '../../../src/runtime/errors.ts';
import { CLI, ROOT } from '../../support/cli-process.ts';
import { Cluster } from '../../support/cluster.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';

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
    // Complete: every command listed answers its own --help, and the simulators listed are the
    // ones `sim` runs (each a section of its help).
    const commands = [...help.stdout.matchAll(/^ {2}([a-z]+) +\S/gm)].map((m) => m[1]!);
    assert.deepEqual(commands, ['agent', 'controller', 'sandbox', 'sim', 'pools', 'migrate', 'demo']);
    const helps = await Promise.all(
      commands.map((c) => run(process.execPath, [...CLI, c, '--help'], { cwd: ROOT })),
    );
    for (const [i, c] of commands.entries()) assert.match(helps[i]!.stdout, new RegExp(`npl-lb ${c}\\b`), c);
    const kinds = /simulators \(([^)]+)\)/.exec(help.stdout)![1]!.split(', ');
    assert.deepEqual(kinds, ['avi', 'bigip', 'dataplane']);
    const simHelp = helps[commands.indexOf('sim')]!.stdout;
    for (const k of kinds)
      assert.match(simHelp, new RegExp(`npl-lb sim ${k}\\b`), `sim ${k} has its section`);
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
    const metrics = await (await fetch(`${http}/metrics`)).text();
    assert.match(metrics, /npl_lb_controller_reconcile_duration_seconds/);
    // The sweep's whole passes (none yet this soon) and its period: the default minute while
    // whole passes are cheap (the bench, bench/controller/process-cost.ts, reads these).
    assert.match(metrics, /^npl_lb_controller_whole_passes_total \d+$/m);
    assert.match(metrics, /^npl_lb_controller_whole_pass_cpu_seconds_total \S+$/m);
    assert.match(metrics, /^npl_lb_controller_sweep_period_seconds 60$/m);
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

  it('npx npl-lb <command> runs this checkout, as the README writes it (built or not)', async () => {
    const version = await run('npx', ['--no-install', 'npl-lb', '--version'], { cwd: ROOT });
    assert.match(version.stdout, /^npl-lb \d+\.\d+\.\d+/);
    const help = await run('npx', ['--no-install', 'npl-lb', 'migrate', '--help'], { cwd: ROOT });
    assert.match(help.stdout, /npl-lb migrate ako <AKO values\.yaml>/);
    // Every `npx npl-lb <command>` the README prints names a command npl-lb has.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const commands = new Set([...readme.matchAll(/npx npl-lb ([a-z]+)/g)].map((m) => m[1]!));
    const usage = (await run('npx', ['--no-install', 'npl-lb', '--help'], { cwd: ROOT })).stdout;
    for (const c of commands) assert.match(usage, new RegExp(`^  ${c} `, 'm'), `README's npx npl-lb ${c}`);
  });
});
