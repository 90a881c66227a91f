/**
 * The real kubectl v1.35 against the sandbox: each command's printed output is what is asserted.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { eventually, type TestSandbox, useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);

const MANIFEST = (image: string) => `
apiVersion: v1
kind: Service
metadata:
  name: web
  annotations:
    nodeportlocal.antrea.io/enabled: "true"
spec:
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec:
  nodeName: n1
  containers:
  - {name: web, image: "${image}", ports: [{containerPort: 8080, name: http}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-2, labels: {app: web}}
spec:
  nodeName: n2
  containers:
  - {name: web, image: nginx:1.27, ports: [{containerPort: 8080, name: http}]}
---
apiVersion: v1
kind: Pod
metadata: {name: db-1, labels: {app: db}}
spec:
  nodeName: n1
  containers:
  - {name: db, image: postgres:17}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: npl-lb}
spec: {controller: npl-lb.io/ingress-controller}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: npl-lb
  rules:
  - host: web.example.test
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`;

describe('kubectl v1.35 against the sandbox', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  async function setup(
    t: Parameters<typeof useSandbox>[0],
  ): Promise<TestSandbox & { k: (...a: string[]) => Promise<string> }> {
    const sb = await useSandbox(t);
    const k = async (...args: string[]): Promise<string> => {
      const { stdout, stderr } = await run(kubectl, args, {
        env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
        timeout: 30_000,
      });
      return stdout + stderr;
    };
    return { ...sb, k };
  }

  it('apply creates, apply again configures only what changed, get -o json shows it', async (t) => {
    const { k, dir } = await setup(t);
    const file = join(dir, 'm.yaml');
    writeFileSync(file, MANIFEST('nginx:1.27'));
    const first = await k('apply', '-f', file);
    for (const line of [
      'service/web created',
      'pod/web-1 created',
      'pod/web-2 created',
      'pod/db-1 created',
      'ingressclass.networking.k8s.io/npl-lb created',
      'ingress.networking.k8s.io/web created',
    ]) {
      assert.ok(first.includes(line), `${line} in:\n${first}`);
    }
    writeFileSync(file, MANIFEST('nginx:1.28'));
    const second = await k('apply', '-f', file);
    assert.match(second, /pod\/web-1 configured/);
    assert.match(second, /service\/web unchanged/);
    assert.match(second, /ingress.networking.k8s.io\/web unchanged/);
    const json = JSON.parse(await k('get', 'pod', 'web-1', '-o', 'json')) as {
      spec: { containers: { image: string }[] };
      metadata: { generation: number; annotations: Record<string, string> };
    };
    assert.equal(json.spec.containers[0]!.image, 'nginx:1.28');
    assert.equal(json.metadata.generation, 2);
    assert.ok(json.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
    const table = await k('get', 'pods');
    assert.match(table, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE/);
    assert.match(table, /web-1\s+0\/1\s+Pending\s+0/);
  });

  it('annotate, label, patch with each type and the status subresource', async (t) => {
    const { k, dir } = await setup(t);
    const file = join(dir, 'm.yaml');
    writeFileSync(file, MANIFEST('nginx:1.27'));
    await k('apply', '-f', file);
    assert.match(await k('annotate', 'pod', 'web-1', 'example.com/note=hello'), /pod\/web-1 annotated/);
    assert.match(await k('label', 'pod', 'web-1', 'tier=front'), /pod\/web-1 labeled/);
    assert.match(
      await k('patch', 'pod', 'web-1', '-p', '{"metadata":{"labels":{"s":"1"}}}'),
      /pod\/web-1 patched/,
    );
    assert.match(
      await k('patch', 'pod', 'web-1', '--type', 'merge', '-p', '{"metadata":{"labels":{"m":"2"}}}'),
      /pod\/web-1 patched/,
    );
    assert.match(
      await k(
        'patch',
        'pod',
        'web-1',
        '--type',
        'json',
        '-p',
        '[{"op":"add","path":"/metadata/labels/j","value":"3"}]',
      ),
      /pod\/web-1 patched/,
    );
    assert.match(
      await k(
        'patch',
        'pod',
        'web-1',
        '--subresource=status',
        '--type',
        'merge',
        '-p',
        '{"status":{"phase":"Running","podIP":"10.244.1.5"}}',
      ),
      /pod\/web-1 patched/,
    );
    const labels = await k('get', 'pod', 'web-1', '-o', 'jsonpath={.metadata.labels}');
    assert.deepEqual(JSON.parse(labels), { app: 'web', tier: 'front', s: '1', m: '2', j: '3' });
    assert.equal(
      await k('get', 'pod', 'web-1', '-o', 'jsonpath={.status.podIP} {.status.phase}'),
      '10.244.1.5 Running',
    );
    assert.equal(
      await k('get', 'pod', 'web-1', '-o', "jsonpath={.metadata.annotations['example\\.com/note']}"),
      'hello',
    );
    assert.match(
      await k('patch', 'pod', 'web-1', '--type', 'merge', '-p', '{"metadata":{"labels":{"s":"1"}}}'),
      /no change/,
    );
  });

  it('field and label selectors together; describe; delete', async (t) => {
    const { k, dir } = await setup(t);
    const file = join(dir, 'm.yaml');
    writeFileSync(file, MANIFEST('nginx:1.27'));
    await k('apply', '-f', file);
    const sel = await k('get', 'pods', '--field-selector', 'spec.nodeName=n1', '-l', 'app=web', '-o', 'name');
    assert.equal(sel.trim(), 'pod/web-1');
    const described = await k('describe', 'pod', 'web-1');
    assert.match(described, /^Name:\s+web-1$/m);
    assert.match(described, /^Namespace:\s+default$/m);
    assert.match(described, /^Node:\s+n1/m);
    assert.match(described, /^Labels:\s+app=web$/m);
    assert.match(described, /Image:\s+nginx:1.27/);
    assert.match(described, /^Events:\s+<none>$/m);
    // An event written through events.k8s.io/v1 shows in describe, which reads core/v1 events by
    // involvedObject field selectors, and in `kubectl get events`.
    const uid = await k('get', 'pod', 'web-1', '-o', 'jsonpath={.metadata.uid}');
    const eventFile = join(dir, 'event.yaml');
    writeFileSync(
      eventFile,
      JSON.stringify({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'web-1.npl' },
        eventTime: new Date().toISOString().replace('Z', '000Z'),
        reportingController: 'npl-lb.io/agent',
        reportingInstance: 'n1',
        action: 'Allocate',
        reason: 'NodePortLocalAllocated',
        note: 'allocated node port 61000',
        type: 'Normal',
        regarding: { kind: 'Pod', namespace: 'default', name: 'web-1', uid },
      }),
    );
    await k('create', '-f', eventFile);
    assert.match(
      await k('describe', 'pod', 'web-1'),
      /Normal\s+NodePortLocalAllocated\s+\S+\s+npl-lb.io\/agent\s+allocated node port 61000/,
    );
    assert.match(
      await k('get', 'events'),
      /Normal\s+NodePortLocalAllocated\s+pod\/web-1\s+allocated node port 61000/,
    );
    assert.match(await k('delete', 'pod', 'web-2'), /pod "web-2" deleted/);
    const names = await k('get', 'pods', '-o', 'name');
    assert.deepEqual(names.trim().split('\n').sort(), ['pod/db-1', 'pod/web-1']);
    const err = await k('get', 'pod', 'web-2').catch((e: { stderr: string }) => e.stderr);
    assert.match(err, /Error from server \(NotFound\): pods "web-2" not found/);
  });

  it('get pods -w sees a later change', async (t) => {
    const { k, dir, kubeconfigPath } = await setup(t);
    const file = join(dir, 'm.yaml');
    writeFileSync(file, MANIFEST('nginx:1.27'));
    await k('apply', '-f', file);
    const child = spawn(kubectl, ['get', 'pods', '-w', '-l', 'app=web'], {
      env: { ...process.env, KUBECONFIG: kubeconfigPath, HOME: dir },
    });
    t.after(() => child.kill('SIGTERM'));
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    await eventually(() => /web-2/.test(out), 10_000, 'initial listing');
    await k(
      'patch',
      'pod',
      'web-2',
      '--subresource=status',
      '--type',
      'merge',
      '-p',
      '{"status":{"phase":"Running"}}',
    );
    await eventually(() => /web-2\s+0\/1\s+Running/.test(out), 10_000, 'the change to Running');
    await k('delete', 'pod', 'web-1');
    // kubectl prints the deleted object's row once more when the DELETED event arrives.
    await eventually(() => /web-2\s+0\/1\s+Running[^\n]*\nweb-1\s/.test(out), 10_000, 'the deletion');
  });

  it('kubectl reports server-side validation errors', async (t) => {
    const { k } = await setup(t);
    const bad = await k('run', 'Bad_Name', '--image=x').catch((e: { stderr: string }) => e.stderr);
    assert.match(bad, /The Pod "Bad_Name" is invalid/);
    assert.match(bad, /metadata.name: Invalid value: "Bad_Name"/);
  });
});
