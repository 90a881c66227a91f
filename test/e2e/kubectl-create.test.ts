/**
 * Issue 35, item 1 (protobuf): the real kubectl v1.35 `create` commands send Kubernetes protobuf
 * bodies for built-in kinds (`application/vnd.kubernetes.protobuf`), which the sandbox answered
 * 415 before, and are answered in protobuf, which kubectl prefers and reads. Namespace, TLS Secret (bytes), Deployment (an IntOrString, a Quantity, a Time),
 * ConfigMap, Service, Role: created, then read back as kubectl prints them. A protobuf body that is
 * not one (no envelope, truncated, an unknown kind) is a 400 or 415 naming why, never a crash.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { selfSignedCertificate } from '../../src/runtime/tls.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);

describe('kubectl create (protobuf bodies) against the sandbox', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('create ns, secret tls, deployment, configmap, service, role: each created and read back', async (t) => {
    const sb = await useSandbox(t);
    const k = async (...args: string[]): Promise<string> => {
      const { stdout, stderr } = await run(kubectl, args, {
        env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
        timeout: 30_000,
      });
      return stdout + stderr;
    };
    // What kubectl prints with -o json, in the shape the caller reads.
    const json = async (...args: string[]): Promise<unknown> => JSON.parse(await kq(...args, '-o', 'json'));
    const kq = async (...args: string[]): Promise<string> =>
      (await run(kubectl, args, { env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir } }))
        .stdout;

    // -v=8 shows kubectl's own request headers: it does send protobuf (the case this test is about).
    const made = await k('-v=8', 'create', 'ns', 'team-a');
    assert.match(made, /namespace\/team-a created/);
    assert.match(made, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    // ... and is answered in protobuf, which it reads.
    assert.match(
      made,
      /"Response" status="201 Created" headers=<[^>]*Content-Type: application\/vnd\.kubernetes\.protobuf/,
    );
    assert.equal(
      ((await json('get', 'ns', 'team-a')) as { metadata: { name: string } }).metadata.name,
      'team-a',
    );

    const tls = await selfSignedCertificate('web.team-a.example');
    writeFileSync(join(sb.dir, 'tls.crt'), tls.cert);
    writeFileSync(join(sb.dir, 'tls.key'), tls.key);
    assert.match(
      await k(
        'create',
        'secret',
        'tls',
        'web-tls',
        '-n',
        'team-a',
        '--cert',
        join(sb.dir, 'tls.crt'),
        '--key',
        join(sb.dir, 'tls.key'),
      ),
      /secret\/web-tls created/,
    );
    const secret = (await json('get', 'secret', 'web-tls', '-n', 'team-a')) as {
      type: string;
      data: Record<string, string>;
    };
    assert.equal(secret.type, 'kubernetes.io/tls');
    assert.equal(Buffer.from(secret.data['tls.crt']!, 'base64').toString(), tls.cert, 'bytes round-trip');

    assert.match(
      await k(
        'create',
        'deployment',
        'web',
        '-n',
        'team-a',
        '--image=nginx:1.27',
        '--replicas=3',
        '--port=8080',
      ),
      /deployment.apps\/web created/,
    );
    const d = (await json('get', 'deployment', 'web', '-n', 'team-a')) as {
      metadata: { creationTimestamp: string };
      spec: {
        replicas: number;
        selector: { matchLabels: Record<string, string> };
        template: { spec: { containers: { image: string; ports: { containerPort: number }[] }[] } };
      };
    };
    assert.equal(d.spec.replicas, 3);
    assert.deepEqual(d.spec.selector.matchLabels, { app: 'web' });
    assert.equal(d.spec.template.spec.containers[0]!.image, 'nginx:1.27');
    assert.equal(d.spec.template.spec.containers[0]!.ports[0]!.containerPort, 8080);
    assert.match(d.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    assert.match(
      await k('create', 'configmap', 'cfg', '-n', 'team-a', '--from-literal=a=1', '--from-literal=b=two'),
      /configmap\/cfg created/,
    );
    assert.deepEqual(((await json('get', 'cm', 'cfg', '-n', 'team-a')) as { data: unknown }).data, {
      a: '1',
      b: 'two',
    });

    assert.match(
      await k('create', 'service', 'clusterip', 'web', '-n', 'team-a', '--tcp=80:http'),
      /service\/web created/,
    );
    const svc = (await json('get', 'svc', 'web', '-n', 'team-a')) as {
      spec: { ports: { port: number; targetPort: number | string }[] };
    };
    assert.deepEqual(
      [svc.spec.ports[0]!.port, svc.spec.ports[0]!.targetPort],
      [80, 'http'],
      'an IntOrString as a name',
    );

    assert.match(
      await k('create', 'role', 'reader', '-n', 'team-a', '--verb=get,list', '--resource=pods'),
      /role.rbac.authorization.k8s.io\/reader created/,
    );
    assert.match(await kq('get', 'deploy,cm,svc,role,secret', '-n', 'team-a'), /deployment.apps\/web/);
  });

  it('a protobuf body that is not one is refused with why: no envelope, truncated, a kind without protobuf', async (t) => {
    const sb = await useSandbox(t);
    const post = async (path: string, body: Buffer) => {
      const r = await fetch(`${sb.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
        body,
      });
      return { status: r.status, body: (await r.json()) as { reason: string; message: string } };
    };
    const noEnvelope = await post('/api/v1/namespaces', Buffer.from('{"kind":"Namespace"}'));
    assert.equal(noEnvelope.status, 400);
    assert.match(noEnvelope.body.message, /k8s\\0 envelope/);
    // The envelope, then a length-delimited field whose length runs past the end.
    const truncated = await post(
      '/api/v1/namespaces',
      Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x40, 0x01]),
    );
    assert.equal(truncated.status, 400);
    assert.match(truncated.body.message, /protobuf body/);
    // typeMeta {apiVersion: "example.com/v1", kind: "Widget"}: no built-in kind.
    const tm = Buffer.concat([
      Buffer.from([0x0a, 14]),
      Buffer.from('example.com/v1'),
      Buffer.from([0x12, 6]),
      Buffer.from('Widget'),
    ]);
    const custom = await post(
      '/api/v1/namespaces',
      Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x0a, tm.length]), tm]),
    );
    assert.equal(custom.status, 415);
    assert.match(custom.body.message, /example\.com\/v1\/Widget/);
  });
});
