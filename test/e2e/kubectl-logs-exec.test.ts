/**
 * Issue 47 item 5 / issue 49 item 1, with the real kubectl: `kubectl logs` of a sandbox Pod
 * answers its (empty) log; a container it does not have, and no container named for a Pod of two,
 * are the API server's 400s; a Pod that is not there is a 404. `kubectl exec` is refused with the
 * API server's error for a kubelet it cannot reach (none runs in the sandbox), and for a Pod bound
 * to no node with its own.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);

describe('kubectl logs and exec against the sandbox', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('logs: empty, or the API server’s error; exec: the API server’s error', async (t) => {
    const sb = await useSandbox(t);
    const k = async (...args: string[]) =>
      run(kubectl, args, {
        env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
        timeout: 30_000,
      });
    const pod = async (name: string, containers: string[], nodeName?: string) =>
      assert.equal(
        (
          await api(sb.url, 'POST', '/api/v1/namespaces/default/pods', {
            metadata: { name },
            spec: {
              ...(nodeName ? { nodeName } : {}),
              containers: containers.map((c) => ({ name: c, image: 'x' })),
            },
          })
        ).status,
        201,
      );
    await pod('one', ['app'], 'n1');
    await pod('two', ['app', 'sidecar'], 'n1');
    await pod('floating', ['app']);

    assert.equal((await k('logs', 'one')).stdout, '', 'an empty log');
    assert.equal((await k('logs', 'two', '-c', 'sidecar')).stdout, '');
    await assert.rejects(k('logs', 'one', '-c', 'nope'), /container nope is not valid for pod one/);
    await assert.rejects(k('logs', 'missing'), /pods "missing" not found/);
    const both = await api(sb.url, 'GET', '/api/v1/namespaces/default/pods/two/log');
    assert.equal(both.status, 400);
    assert.match(String(both.body.message), /a container name must be specified for pod two/);

    await assert.rejects(k('exec', 'one', '--', 'ls'), /error dialing backend/);
    await assert.rejects(k('exec', 'floating', '--', 'ls'), /does not have a host assigned/);
  });
});
