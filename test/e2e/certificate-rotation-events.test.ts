/**
 * Issue 30, item 7: a certificate rotation the load balancer does not take is said where its
 * owners look: a Warning `CertificateRotationFailed` on the Secret and on the Ingress served with
 * it, naming the device's code; the listener keeps the certificate it had; a later Secret that the
 * device takes goes through.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import type { ApplyError } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { testCertificate, tlsSecret } from '../support/certs.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const CERT = 'c1--default.shop-tls';

it('a rotation the device refuses: Warning on the Secret and the Ingress, the old certificate still served, the next one goes', async (t) => {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  const net = kc.makeApiClient(NetworkingV1Api);
  const [first, second, third] = await Promise.all(
    [1, 2, 3].map(() => testCertificate({ dns: ['shop.example.com'] })),
  );
  await net.createIngressClass({
    body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
  });
  await c.node('n1', { internal: ['192.0.2.201'] });
  await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
  await c.nplPod('web-1', {
    node: 'n1',
    entries: [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }],
  });
  const secret = (cert: { cert: string; key: string }) => tlsSecret('default', 'shop-tls', cert) as never;
  await c.core.createNamespacedSecret({ namespace: 'default', body: secret(first!) });
  await net.createNamespacedIngress({
    namespace: 'default',
    body: {
      metadata: { name: 'shop' },
      spec: {
        ingressClassName: 'npl',
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { name: 'http' } } },
                },
              ],
            },
          },
        ],
      },
    },
  });
  const device = new MemoryLoadBalancer();
  const events = new RecordingEvents();
  let refuse: ApplyError | undefined;
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\n'),
    adapter: new MemoryAdapter({
      owner: 'c1',
      device,
      fault: (ch) => (ch.kind === 'certificate' && ch.op === 'update' ? refuse : undefined),
    }),
    events,
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  const held = () => device.certificates.get(CERT)?.cert.certPem.trim();
  await eventually(() => held() === first!.cert.trim(), 5000, 'HTTPS served');
  const rotationWarnings = () => events.seen.filter((e) => e.reason === 'CertificateRotationFailed');
  assert.equal(rotationWarnings().length, 0, 'no Warning before anything failed');

  // The device refuses the new certificate (bad input: retrying cannot help).
  refuse = { code: 'Invalid', message: 'certificate chain rejected by the device', terminal: true };
  await c.core.replaceNamespacedSecret({ name: 'shop-tls', namespace: 'default', body: secret(second!) });
  await eventually(
    () => new Set(rotationWarnings().map((e) => e.target)).size === 2,
    5000,
    'Warning on the Secret and the Ingress',
  );
  for (const e of rotationWarnings()) {
    assert.equal(e.type, 'Warning');
    assert.match(e.message, /did not replace the one served on memory: Invalid: certificate chain rejected/);
    assert.match(e.message, /from Secret default\/shop-tls/);
  }
  assert.deepEqual([...new Set(rotationWarnings().map((e) => e.target))].sort(), [
    'default/shop',
    'default/shop-tls',
  ]);
  assert.equal(held(), first!.cert.trim(), 'the certificate served before stays');
  assert.ok(device.virtualServices.has('c1--ingress-npl_https'), 'HTTPS still served');
  // The state document says so too (never a key).
  const doc = ctl.state.document();
  assert.equal(doc.certificates.find((x) => x.name === CERT)?.lastApply?.error?.code, 'Invalid');

  // The next Secret the device takes goes through; no further Warning.
  refuse = undefined;
  const before = rotationWarnings().length;
  await c.core.replaceNamespacedSecret({ name: 'shop-tls', namespace: 'default', body: secret(third!) });
  await eventually(() => held() === third!.cert.trim(), 5000, 'rotated');
  await ctl.settled();
  assert.equal(rotationWarnings().length, before);
});
