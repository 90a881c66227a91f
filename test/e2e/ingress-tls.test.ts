/**
 * Ingress `tls:` through the whole controller, on the sandbox with the memory adapter and real
 * certificates made here: HTTPS served from a Secret, the Secret rotated in place, broken, deleted
 * and put back, each converging without a restart; an Opaque Secret is never read; the state
 * document and the logs never show a key.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { testCertificate, tlsSecret } from '../support/certs.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const HTTPS = 'c1--ingress-npl_https';
const CERT = 'c1--default.shop-tls';

describe('Ingress TLS through the controller', () => {
  it('serves HTTPS from a Secret; rotation, a bad Secret, deletion and return converge without a restart', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const net = kc.makeApiClient(NetworkingV1Api);
    const [first, second] = await Promise.all([
      testCertificate({ dns: ['shop.example.com'] }),
      testCertificate({ dns: ['shop.example.com'] }),
    ]);
    await net.createIngressClass({
      body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
    });
    await c.node('n1', { internal: ['192.0.2.201'] });
    await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    await c.nplPod('web-1', {
      node: 'n1',
      entries: [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }],
    });
    const secret = (cert: { cert: string; key: string }, type?: string) =>
      tlsSecret('default', 'shop-tls', cert, type) as never;
    await c.core.createNamespacedSecret({ namespace: 'default', body: secret(first) });
    // An Opaque Secret that an Ingress names: the controller never lists it, and says so.
    await c.core.createNamespacedSecret({
      namespace: 'default',
      body: { metadata: { name: 'opaque' }, type: 'Opaque', data: { 'tls.crt': 'eA==', 'tls.key': 'eA==' } },
    });
    const path = {
      path: '/',
      pathType: 'Prefix',
      backend: { service: { name: 'web', port: { name: 'http' } } },
    };
    await net.createNamespacedIngress({
      namespace: 'default',
      body: {
        metadata: { name: 'shop' },
        spec: {
          ingressClassName: 'npl',
          tls: [
            { hosts: ['shop.example.com'], secretName: 'shop-tls' },
            { hosts: ['other.example.com'], secretName: 'opaque' },
          ],
          rules: [
            { host: 'shop.example.com', http: { paths: [path] } },
            { host: 'other.example.com', http: { paths: [path] } },
          ],
        },
      },
    });

    const device = new MemoryLoadBalancer();
    const events = new RecordingEvents();
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\ningressHttpsPort: 8443\n',
      ),
      adapter: new MemoryAdapter({ owner: 'c1', device }),
      events,
      coalesceMs: 10,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();

    const https = () => {
      const vs = device.virtualServices.get(HTTPS)?.vs;
      return vs?.kind === 'l7' ? vs : undefined;
    };
    const heldPem = () => device.certificates.get(CERT)?.cert.certPem.trim();
    const warned = (reason: string, text: RegExp) =>
      events.seen.some((e) => e.target === 'default/shop' && e.reason === reason && text.test(e.message));

    await eventually(() => heldPem() === first.cert.trim() && https() !== undefined, 5000, 'HTTPS served');
    assert.equal(https()!.port, 8443);
    assert.deepEqual(https()!.certificates, [CERT]);
    assert.deepEqual(
      https()!.routes.map((r) => r.host),
      ['shop.example.com'],
    );
    await eventually(
      () =>
        warned(
          'InvalidTLSSecret',
          /spec\.tls\[1\]: Secret default\/opaque not found \(or not of type kubernetes\.io\/tls\)/,
        ),
      5000,
      'the Opaque Secret is not read',
    );
    assert.equal(device.certificates.size, 1);

    // Rotation: the certificate is updated in place; the virtual service is not written.
    const writes = device.writes.length;
    await c.core.replaceNamespacedSecret({ name: 'shop-tls', namespace: 'default', body: secret(second) });
    await eventually(() => heldPem() === second.cert.trim(), 5000, 'rotated');
    await ctl.settled();
    assert.deepEqual(device.writes.slice(writes), [`update certificate ${CERT}`]);

    // A key that does not match: a Warning naming the Secret; HTTPS goes, HTTP stays.
    await c.core.replaceNamespacedSecret({
      name: 'shop-tls',
      namespace: 'default',
      body: secret({ cert: first.cert, key: second.key }),
    });
    await eventually(() => https() === undefined && device.certificates.size === 0, 5000, 'HTTPS withdrawn');
    // The Event is recorded after the pass that withdrew HTTPS: waited for, not assumed.
    await eventually(
      () => warned('InvalidTLSSecret', /Secret default\/shop-tls: tls\.key does not match the certificate/),
      5000,
      'the mismatched key is told',
    );
    assert.ok(device.virtualServices.has('c1--ingress-npl'), 'HTTP is not affected');

    // Deleted, then back: served again without a restart.
    await c.core.deleteNamespacedSecret({ name: 'shop-tls', namespace: 'default' });
    await eventually(() => warned('InvalidTLSSecret', /Secret default\/shop-tls not found/), 5000, 'told');
    await c.core.createNamespacedSecret({ namespace: 'default', body: secret(first) });
    await eventually(() => heldPem() === first.cert.trim() && https() !== undefined, 5000, 'back');

    // No key in the state document.
    const state = JSON.stringify(ctl.state.document());
    assert.ok(state.includes(CERT), 'the certificate is shown');
    assert.ok(!state.includes('PRIVATE KEY') && !state.includes(first.key.split('\n')[1]!), 'never its key');
  });
});
