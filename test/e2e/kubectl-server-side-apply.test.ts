/**
 * Issue 35, item 1 (server-side apply): the real kubectl v1.35 `apply --server-side` against the
 * sandbox: an object created by apply, a conflict with another manager's fields refused (409, the
 * manager and each field named, kubectl's own advice printed), `--force-conflicts` taking them
 * over, a field no longer applied removed, co-ownership where values agree, and `managedFields` as
 * kubectl shows them. Bad applies (no field manager, another kind, not YAML) are a 400 naming why.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);

const deployment = (replicas: number, image: string, labels: string) => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {${labels}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - {name: nginx, image: "${image}"}
`;

type Managed = { manager: string; operation: string; fieldsV1: Record<string, unknown> }[];

describe('kubectl apply --server-side against the sandbox', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('create, conflict, force, removal, co-ownership', async (t) => {
    const sb = await useSandbox(t);
    const env = { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir };
    const k = (...args: string[]) =>
      run(kubectl, args, { env }).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
    const file = join(sb.dir, 'web.yaml');
    const apply = async (yaml: string, ...extra: string[]) => {
      writeFileSync(file, yaml);
      return k('apply', '--server-side', '-f', file, ...extra);
    };
    const live = async () =>
      JSON.parse((await k('get', 'deploy', 'web', '-o', 'json', '--show-managed-fields')).out) as {
        metadata: { labels: Record<string, string>; managedFields: Managed };
        spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
      };

    // Created by apply: the applier owns what it applied.
    const first = await apply(deployment(2, 'nginx:1.27', 'app: web, tier: front'));
    assert.equal(first.code, 0, first.out);
    assert.match(first.out, /deployment.apps\/web serverside-applied/);
    let d = await live();
    assert.deepEqual(
      d.metadata.managedFields.map((m) => [m.manager, m.operation]),
      [['kubectl', 'Apply']],
    );

    // Another writer (kubectl patch: an Update by kubectl-patch) takes replicas; applying another value conflicts.
    assert.equal((await k('patch', 'deploy/web', '-p', '{"spec":{"replicas":4}}')).code, 0);
    const refused = await apply(deployment(3, 'nginx:1.28', 'app: web, tier: front'));
    assert.equal(refused.code, 1);
    assert.match(
      refused.out,
      /Apply failed with 1 conflict: conflict with "kubectl-patch": \.spec\.replicas/,
    );
    assert.match(refused.out, /--force-conflicts/);
    d = await live();
    assert.deepEqual(
      [d.spec.replicas, d.spec.template.spec.containers[0]!.image],
      [4, 'nginx:1.27'],
      'nothing written',
    );

    // Forced: the applier takes replicas over; the image moves with it.
    assert.equal(
      (await apply(deployment(3, 'nginx:1.28', 'app: web, tier: front'), '--force-conflicts')).code,
      0,
    );
    d = await live();
    assert.deepEqual([d.spec.replicas, d.spec.template.spec.containers[0]!.image], [3, 'nginx:1.28']);
    assert.ok(
      !JSON.stringify(d.metadata.managedFields.filter((m) => m.manager !== 'kubectl')).includes('f:replicas'),
    );

    // A label no longer applied goes (nobody else owns it); the same value applied again is co-owned.
    assert.equal((await apply(deployment(3, 'nginx:1.28', 'app: web'))).code, 0);
    d = await live();
    assert.deepEqual(d.metadata.labels, { app: 'web' });
    assert.equal((await k('label', 'deploy/web', 'team=a')).code, 0);
    const same = await apply(deployment(3, 'nginx:1.28', 'app: web, team: a'));
    assert.equal(same.code, 0, 'an equal value owned by another manager is no conflict');
    d = await live();
    const owners = d.metadata.managedFields.filter((m) => JSON.stringify(m.fieldsV1).includes('"f:team"'));
    assert.deepEqual(owners.map((m) => m.manager).sort(), ['kubectl', 'kubectl-label']);
  });

  it('bad applies are a 400 naming why', async (t) => {
    const sb = await useSandbox(t);
    const patch = async (query: string, body: string) => {
      const r = await fetch(`${sb.url}/apis/apps/v1/namespaces/default/deployments/web${query}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/apply-patch+yaml' },
        body,
      });
      return { status: r.status, message: ((await r.json()) as { message: string }).message };
    };
    const yaml = deployment(1, 'nginx', 'app: web');
    const noManager = await patch('', yaml);
    assert.equal(noManager.status, 400);
    assert.match(noManager.message, /fieldManager: Required value: is required for apply patch/);
    const wrongKind = await patch('?fieldManager=t', yaml.replace('kind: Deployment', 'kind: DaemonSet'));
    assert.equal(wrongKind.status, 400);
    assert.match(wrongKind.message, /apps\/v1\/DaemonSet, not apps\/v1\/Deployment/);
    const notYaml = await patch('?fieldManager=t', 'a: [unclosed');
    assert.equal(notYaml.status, 400);
    const otherName = await patch('?fieldManager=t', yaml.replace('name: web', 'name: other'));
    assert.equal(otherName.status, 400);
    assert.match(otherName.message, /does not match the name on the URL/);
  });

  it("an ordinary manifest without ports' protocol, applied three times unchanged, stays as it was: one port each, generation 1, one ReplicaSet (issue 49, item 1)", async (t) => {
    const sb = await useSandbox(t, { workloads: true });
    const env = { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir };
    const k = (...args: string[]) => run(kubectl, args, { env }).then((r) => r.stdout);
    const file = join(sb.dir, 'app.yaml');
    // As `helm create` and most manifests write them: no `protocol`, which the API server defaults.
    writeFileSync(
      file,
      `apiVersion: v1
kind: Service
metadata: {name: app}
spec:
  selector: {app: app}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:
      containers: [{name: c, image: nginx, ports: [{name: http, containerPort: 8080}]}]
`,
    );
    for (let i = 0; i < 3; i++) {
      const out = await k('apply', '--server-side', '-f', file);
      assert.match(out, /service\/app serverside-applied/);
    }
    // Client-side apply over it as well (a strategic merge by the ports' own merge keys).
    await k('apply', '-f', file);
    const deploy = JSON.parse(await k('get', 'deploy', 'app', '-o', 'json')) as {
      metadata: { generation: number };
      spec: { template: { spec: { containers: { ports: unknown[] }[] } } };
    };
    assert.equal(deploy.metadata.generation, 1, 'nothing changed: the same generation');
    assert.deepEqual(deploy.spec.template.spec.containers[0]!.ports, [
      { containerPort: 8080, name: 'http', protocol: 'TCP' },
    ]);
    const svc = JSON.parse(await k('get', 'svc', 'app', '-o', 'json')) as { spec: { ports: unknown[] } };
    assert.deepEqual(svc.spec.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' }]);
    const rs = await k('get', 'rs', '-o', 'name');
    assert.equal(rs.trim().split('\n').length, 1, `one ReplicaSet: ${rs}`);
    // An explicit protocol in the manifest names the same port: still one.
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('containerPort: 8080}', 'containerPort: 8080, protocol: TCP}'),
    );
    await k('apply', '--server-side', '-f', file);
    const again = JSON.parse(await k('get', 'deploy', 'app', '-o', 'json')) as typeof deploy;
    assert.equal(again.spec.template.spec.containers[0]!.ports.length, 1);
    assert.equal(again.metadata.generation, 1);
  });
});
