/**
 * Issue 35, item 1: Helm 4 against the sandbox, as the README's Helm path runs it: `helm install`
 * (server-side apply, Helm 4's default; the release kept in a Secret written in protobuf), `helm
 * upgrade`, `helm rollback`, `helm history`, `helm uninstall`; each step read back with kubectl.
 * And the same install with --server-side=false (client-side: protobuf bodies). `--wait` is not
 * used: the sandbox runs no kubelet, so nothing ever becomes ready.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ROOT } from '../support/cli-process.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { useSandbox } from '../support/sandbox.ts';

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
        await k('get', 'crd', 'backendpolicies.npl-lb.io', '-o', 'name'),
        /backendpolicies\.npl-lb\.io/,
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
});
