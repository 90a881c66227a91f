/**
 * Issue 35, item 1: Helm 4 against the sandbox, as the README's Helm path runs it: `helm install`
 * (server-side apply, Helm 4's default; the release kept in a Secret written in protobuf), `helm
 * upgrade`, `helm rollback`, `helm history`, `helm uninstall`; each step read back with kubectl.
 * And the same install with --server-side=false (client-side: protobuf bodies). With the sandbox's
 * workload controllers (--workloads, as in the demo) `--wait` works as on a cluster, in Helm 4's
 * watcher (kstatus) and Helm 3's legacy checker: install and upgrade wait for the Deployment and
 * DaemonSet to be ready, `kubectl rollout status` agrees, and an upgrade whose Pods no node can
 * take fails after --timeout instead of saying deployed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../support/cli-process.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);
const CHART = join(ROOT, 'deploy/helm/npl-lb');

describe('helm install, upgrade, rollback and uninstall on the sandbox', () => {
  let helm = '';
  let kubectl = '';
  before(() => {
    ({ helm, kubectl } = ensureKubeTools());
  });

  for (const serverSide of [true, false])
    it(`the chart's whole life cycle (${serverSide ? 'server-side apply' : 'client-side'})`, async (t) => {
      const sb = await useSandbox(t);
      const env = {
        ...process.env,
        KUBECONFIG: sb.kubeconfigPath,
        HOME: sb.dir,
        HELM_CACHE_HOME: join(sb.dir, 'cache'),
      };
      const h = async (...args: string[]) =>
        (await run(helm, [...args, `--server-side=${serverSide}`], { env, timeout: 60_000 })).stdout;
      const hq = async (...args: string[]) => (await run(helm, args, { env, timeout: 60_000 })).stdout;
      const k = async (...args: string[]) => (await run(kubectl, args, { env })).stdout;
      const replicas = async () =>
        k('get', 'deploy', '-n', 'npl', 'r1-npl-lb-controller', '-o', 'jsonpath={.spec.replicas}');

      assert.match(
        await h('install', 'r1', CHART, '-n', 'npl', '--create-namespace', '--set', 'clusterName=c1'),
        /STATUS: deployed/,
      );
      const made = await k('get', 'deploy,ds,cm,sa,role,rolebinding,ingressclass', '-n', 'npl', '-o', 'name');
      for (const o of [
        'deployment.apps/r1-npl-lb-controller',
        'daemonset.apps/r1-npl-lb-agent',
        'configmap/r1-npl-lb-controller',
      ])
        assert.ok(made.includes(o), `${o} in\n${made}`);
      assert.match(
        await k('get', 'crd', 'backendpolicies.npl-lb.io', 'loadbalancerparameters.npl-lb.io', '-o', 'name'),
        /backendpolicies\.npl-lb\.io[\s\S]*loadbalancerparameters\.npl-lb\.io/,
      );
      assert.equal(await replicas(), '2');

      assert.match(
        await h(
          'upgrade',
          'r1',
          CHART,
          '-n',
          'npl',
          '--set',
          'clusterName=c1',
          '--set',
          'controller.replicas=3',
        ),
        /has been upgraded/,
      );
      assert.equal(await replicas(), '3');
      assert.match(await hq('rollback', 'r1', '1', '-n', 'npl'), /Rollback was a success/);
      assert.equal(await replicas(), '2');
      const history = await hq('history', 'r1', '-n', 'npl');
      assert.match(history, /1\s.*superseded.*Install complete/);
      assert.match(history, /3\s.*deployed.*Rollback to 1/);

      assert.match(await hq('uninstall', 'r1', '-n', 'npl'), /release "r1" uninstalled/);
      assert.equal(
        (await k('get', 'deploy,ds,cm,secret', '-n', 'npl', '-o', 'name')).trim(),
        '',
        'nothing left, release Secrets included',
      );
    });

  for (const strategy of ['watcher', 'legacy'])
    it(`--wait=${strategy}: install and upgrade wait for the workloads; Pods no node takes fail the upgrade`, async (t) => {
      const sb = await useSandbox(t, { workloads: true });
      for (const [i, name] of ['node-1', 'node-2'].entries()) {
        assert.equal((await api(sb.url, 'POST', '/api/v1/nodes', { metadata: { name } })).status, 201);
        const status = {
          addresses: [{ type: 'InternalIP', address: `127.0.0.${61 + i}` }],
          conditions: [{ type: 'Ready', status: 'True' }],
        };
        await api(
          sb.url,
          'PATCH',
          `/api/v1/nodes/${name}/status`,
          { status },
          {
            'Content-Type': 'application/merge-patch+json',
          },
        );
      }
      const env = {
        ...process.env,
        KUBECONFIG: sb.kubeconfigPath,
        HOME: sb.dir,
        HELM_CACHE_HOME: join(sb.dir, 'cache'),
      };
      const h = async (...args: string[]) => (await run(helm, args, { env, timeout: 90_000 })).stdout;
      const k = async (...args: string[]) => (await run(kubectl, args, { env })).stdout;
      const wait = [`--wait=${strategy}`, '--timeout', '60s', '--set', 'clusterName=c1'];

      assert.match(
        await h('install', 'r1', CHART, '-n', 'npl', '--create-namespace', ...wait),
        /STATUS: deployed/,
      );
      // Waited for: ready when helm returns, not later.
      assert.match(await k('get', 'deploy', '-n', 'npl'), /r1-npl-lb-controller\s+2\/2\s+2\s+2\s/);
      assert.match(await k('get', 'ds', '-n', 'npl'), /r1-npl-lb-agent\s+2\s+2\s+2\s+2\s+2\s/);
      assert.match(
        await k('rollout', 'status', 'deploy/r1-npl-lb-controller', '-n', 'npl', '--timeout=10s'),
        /successfully rolled out/,
      );
      const pods = await k('get', 'pods', '-n', 'npl', '-o', 'wide');
      assert.equal(pods.match(/\s1\/1\s+Running\s/g)?.length, 4, pods);

      assert.match(
        await h('upgrade', 'r1', CHART, '-n', 'npl', ...wait, '--set', 'controller.replicas=3'),
        /has been upgraded/,
      );
      assert.match(await k('get', 'deploy', '-n', 'npl'), /r1-npl-lb-controller\s+3\/3\s+3\s+3\s/);
      assert.match(await k('get', 'rs', '-n', 'npl'), /r1-npl-lb-controller-\w+\s+3\s+3\s+3\s/);

      // No node has this label: the new Pods stay Pending, and --wait says so instead of deployed.
      const failed = await run(
        helm,
        [
          'upgrade',
          'r1',
          CHART,
          '-n',
          'npl',
          `--wait=${strategy}`,
          '--timeout',
          '4s',
          '--set',
          'clusterName=c1',
          '--set',
          'controller.nodeSelector.role=none',
        ],
        { env, timeout: 60_000 },
      ).then(
        () => '',
        (e: { stderr: string }) => e.stderr,
      );
      assert.match(failed, /context deadline exceeded|timed out|not ready/i);
      assert.match(await h('status', 'r1', '-n', 'npl'), /STATUS: failed/);
      const pending = await k(
        'get',
        'pods',
        '-n',
        'npl',
        '--field-selector=status.phase=Pending',
        '-o',
        'name',
      );
      assert.ok(pending.trim().length > 0, 'the new Pods wait for a node');
      assert.match(await h('uninstall', 'r1', '-n', 'npl'), /release "r1" uninstalled/);
      await eventually(
        async () => (await k('get', 'deploy,rs,ds,pods', '-n', 'npl', '-o', 'name')).trim() === '',
        10_000,
        'collected',
      );
    });

  it('a `helm create` chart without `protocol` on its ports installs and upgrades, server-side, unchanged', async (t) => {
    // What users deploy every day: the chart `helm create` writes, with the `protocol: TCP` lines
    // taken out as many charts leave them out. Server-side apply keys the ports by (port,
    // protocol), protocol defaulted to TCP: an upgrade must find the same entries, not add one.
    const sb = await useSandbox(t);
    const env = {
      ...process.env,
      KUBECONFIG: sb.kubeconfigPath,
      HOME: sb.dir,
      HELM_CACHE_HOME: join(sb.dir, 'cache'),
    };
    const h = async (...args: string[]) =>
      (await run(helm, args, { env, cwd: sb.dir, timeout: 60_000 })).stdout;
    const k = async (...args: string[]) => (await run(kubectl, args, { env })).stdout;
    await h('create', 'web');
    for (const f of ['templates/service.yaml', 'templates/deployment.yaml']) {
      const path = join(sb.dir, 'web', f);
      const text = readFileSync(path, 'utf8');
      assert.match(text, /^\s+protocol: TCP$/m, `${f} as helm create writes it`);
      writeFileSync(path, text.replace(/^\s+protocol: TCP\n/gm, ''));
    }
    const chart = join(sb.dir, 'web');
    assert.match(
      await h('install', 'w1', chart, '--server-side=true', '--set', 'image.tag=1.27'),
      /STATUS: deployed/,
    );
    const shape = async () => {
      const svc = JSON.parse(await k('get', 'service', 'w1-web', '-o', 'json')) as {
        spec: { ports: { port: number; protocol: string; name: string }[] };
      };
      const dep = JSON.parse(await k('get', 'deployment', 'w1-web', '-o', 'json')) as {
        metadata: { generation: number };
        spec: {
          template: { spec: { containers: { ports: { containerPort: number; protocol: string }[] }[] } };
        };
      };
      return {
        servicePorts: svc.spec.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`),
        containerPorts: dep.spec.template.spec.containers[0]!.ports.map(
          (p) => `${p.containerPort}/${p.protocol}`,
        ),
        generation: dep.metadata.generation,
      };
    };
    const first = await shape();
    assert.deepEqual(first.servicePorts, ['http 80/TCP']);
    assert.deepEqual(first.containerPorts, ['80/TCP']);
    for (let i = 0; i < 2; i++)
      assert.match(
        await h('upgrade', 'w1', chart, '--server-side=true', '--set', 'image.tag=1.27'),
        /STATUS: deployed/,
        `upgrade ${i + 1}`,
      );
    assert.deepEqual(await shape(), first, 'unchanged: one port each, the same generation');
    // A real change still lands, on the same single port entries.
    await h('upgrade', 'w1', chart, '--server-side=true', '--set', 'image.tag=1.28');
    const changed = await shape();
    assert.deepEqual(changed.containerPorts, ['80/TCP']);
    assert.equal(changed.generation, first.generation + 1);
  });
});
