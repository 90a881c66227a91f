/**
 * Issue 47, items 2 and 3: readiness gate injection end to end with the real kubectl. The
 * controller's webhook (its own certificate, kept in a Secret and written into the configuration's
 * caBundle) is called by the sandbox as kube-apiserver calls admission webhooks: a Pod created with
 * kubectl in a namespace labelled `npl-lb.io/readiness-gate-injection: enabled` that a load-balanced
 * Service selects gets the gate; one no such Service selects, and one in an unlabelled namespace,
 * do not; a Deployment's Pods get it through the ReplicaSet's creates. Faults: a body that is not an
 * AdmissionReview is a 400 (the webhook keeps serving); a webhook that is down does not block a
 * Pod (failurePolicy Ignore); with failurePolicy Fail the create fails with the API server's error;
 * a certificate another replica rotated in the Secret is served after a check, and trusted.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';
import { request, Agent } from 'undici';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { GateWebhook, needsRotation } from '../../src/main/gate-webhook.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const run = promisify(execFile);
const GATE = 'npl-lb.io/load-balancer-ready';
const PORT = 18471;
const CONFIG = 'npl-lb-readiness-gate';

describe('readiness gate injection through the sandbox', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('labelled and selected: gated; otherwise not; a webhook down never blocks a Pod unless told to', async (t) => {
    const sb = await useSandbox(t, { workloads: true });
    const k = async (...args: string[]) =>
      (
        await run(kubectl, args, {
          env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
          timeout: 30_000,
        })
      ).stdout;
    const post = async (path: string, body: unknown) => {
      const r = await api(sb.url, 'POST', path, body);
      assert.ok(r.status < 300, `${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    };
    const hook = (failurePolicy: 'Ignore' | 'Fail') => ({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: CONFIG },
      webhooks: [
        {
          name: 'pods.npl-lb.io',
          clientConfig: { url: `https://127.0.0.1:${PORT}/mutate-pods` },
          rules: [
            {
              operations: ['CREATE'],
              apiGroups: [''],
              apiVersions: ['v1'],
              resources: ['pods'],
              scope: 'Namespaced',
            },
          ],
          namespaceSelector: { matchLabels: { 'npl-lb.io/readiness-gate-injection': 'enabled' } },
          failurePolicy,
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds: 5,
        },
      ],
    });
    await post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', hook('Ignore'));
    const webhook = new GateWebhook({
      kubeConfig: sb.kc,
      config: parseControllerConfig(
        'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}\n',
      ),
      log: silentLogger(),
      host: '127.0.0.1',
      port: PORT,
      namespace: 'default',
      secretName: 'npl-lb-webhook-tls',
      serviceName: 'npl-lb-webhook',
      configurationName: CONFIG,
    });
    let running = true;
    t.after(() => (running ? webhook.stop() : undefined));
    await webhook.start();
    const cfg = (
      await api(
        sb.url,
        'GET',
        `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIG}`,
      )
    ).body as Obj;
    assert.equal(
      Buffer.from(String(cfg.webhooks[0].clientConfig.caBundle), 'base64').toString(),
      webhook.certificate,
      'the caBundle is the certificate served',
    );

    await k('create', 'namespace', 'team-a');
    await k('label', 'namespace', 'team-a', 'npl-lb.io/readiness-gate-injection=enabled');
    await k('create', 'namespace', 'team-b');
    for (const ns of ['team-a', 'team-b'])
      await post(`/api/v1/namespaces/${ns}/services`, {
        metadata: { name: 'web', annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      });
    const gates = async (ns: string, name: string) =>
      (
        ((await api(sb.url, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`)).body as Obj).spec
          .readinessGates ?? []
      ).map((g: Obj) => g.conditionType);

    await k('run', 'web-1', '--image=web:1', '--labels=app=web', '-n', 'team-a');
    assert.deepEqual(await gates('team-a', 'web-1'), [GATE], 'labelled namespace, selected: gated');
    await k('run', 'other', '--image=web:1', '--labels=app=other', '-n', 'team-a');
    assert.deepEqual(await gates('team-a', 'other'), [], 'not selected: no gate');
    await k('run', 'web-1', '--image=web:1', '--labels=app=web', '-n', 'team-b');
    assert.deepEqual(await gates('team-b', 'web-1'), [], 'unlabelled namespace: no gate');
    assert.equal(webhook.stats.injected, 1);

    // A Deployment's Pods get it too (the ReplicaSet's creates are admitted).
    await k('create', 'deployment', 'web', '--image=web:1', '--replicas=2', '-n', 'team-a');
    await eventually(
      async () => {
        const pods =
          ((await api(sb.url, 'GET', '/api/v1/namespaces/team-a/pods?labelSelector=app%3Dweb')).body
            .items as Obj[]) ?? [];
        return (
          pods.filter((p) => p.metadata.ownerReferences).length === 2 &&
          pods
            .filter((p) => p.metadata.ownerReferences)
            .every((p) => (p.spec.readinessGates ?? []).some((g: Obj) => g.conditionType === GATE))
        );
      },
      10_000,
      "the Deployment's Pods gated",
    ).catch(async () => {
      // kubectl create deployment labels its Pods app=web already; if none came, say what is there.
      const all = (await api(sb.url, 'GET', '/api/v1/namespaces/team-a/pods')).body.items as Obj[];
      throw new Error(
        JSON.stringify(all.map((p) => [p.metadata.name, p.metadata.labels, p.spec.readinessGates])),
      );
    });

    // Bad input: a 400, and it keeps serving.
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    t.after(() => insecure.close());
    const bad = await request(`https://127.0.0.1:${PORT}/mutate-pods`, {
      method: 'POST',
      body: '{"kind":"Pod"}',
      dispatcher: insecure,
    });
    assert.equal(bad.statusCode, 400);
    await bad.body.dump();

    // Another replica rotated the certificate: served after a check, and trusted.
    const pems = await generate([{ name: 'commonName', value: 'npl-lb-webhook.default.svc' }], {
      keyType: 'ec',
      extensions: [
        { name: 'basicConstraints', cA: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    });
    const r = await api(
      sb.url,
      'PATCH',
      '/api/v1/namespaces/default/secrets/npl-lb-webhook-tls',
      {
        data: {
          'tls.crt': Buffer.from(pems.cert).toString('base64'),
          'tls.key': Buffer.from(pems.private).toString('base64'),
        },
      },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(r.status, 200);
    await webhook.check();
    assert.equal(webhook.certificate, pems.cert);
    await k('run', 'web-2', '--image=web:1', '--labels=app=web', '-n', 'team-a');
    assert.deepEqual(await gates('team-a', 'web-2'), [GATE], 'served with the rotated certificate, trusted');

    // Down: the Pod is created without the gate (Ignore) ...
    await webhook.stop();
    running = false;
    await k('run', 'web-3', '--image=web:1', '--labels=app=web', '-n', 'team-a');
    assert.deepEqual(await gates('team-a', 'web-3'), [], 'created, ungated, while the webhook is down');
    // ... and with Fail, refused with the API server's error.
    const del = await api(
      sb.url,
      'DELETE',
      `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${CONFIG}`,
    );
    assert.equal(del.status, 200);
    await post('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', hook('Fail'));
    await assert.rejects(
      k('run', 'web-4', '--image=web:1', '--labels=app=web', '-n', 'team-a'),
      /failed calling webhook "pods\.npl-lb\.io"/,
    );
  });

  it('a certificate with less than a third of its life left is rotated', async () => {
    const pems = await generate([{ name: 'commonName', value: 'x' }], {
      keyType: 'ec',
      notBeforeDate: new Date(Date.now() - 80 * 24 * 3600 * 1000),
      notAfterDate: new Date(Date.now() + 20 * 24 * 3600 * 1000),
    });
    assert.equal(needsRotation(pems.cert), true);
    assert.equal(needsRotation('not a certificate'), true);
    const fresh = await generate([{ name: 'commonName', value: 'x' }], { keyType: 'ec' });
    assert.equal(needsRotation(fresh.cert), false);
  });
});
