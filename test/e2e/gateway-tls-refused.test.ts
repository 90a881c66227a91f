/**
 * Issue 48, item 0, through the controller on the sandbox: a Gateway whose `spec.tls.frontend`
 * asks client certificates is never served without them. Its HTTPS listener is refused by name
 * (Accepted=False/UnsupportedValue in the written status, a Warning Event on the Gateway) while
 * its HTTP listener serves; removing the field serves the HTTPS listener (the transition). A
 * BackendTLSPolicy over a routed Service makes the route's ResolvedRefs False (UnsupportedProtocol)
 * and writes the policy's ancestor status; deleting the policy resolves the route again and takes
 * our ancestor entry away.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { testCertificate, tlsSecret } from '../support/certs.ts';
import { RecordingEvents, runController } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Cond = { type: string; status: string; reason: string; message?: string };
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

describe('Gateway TLS fields and BackendTLSPolicy, refused through the controller', () => {
  it('refused by name with an Event, served once removed; a policy’s route unresolved until it goes', async (t) => {
    const { kc, url } = await useSandbox(t);
    await installGatewayApi(url);
    const events = new RecordingEvents();
    await runController(
      t,
      kc,
      new MemoryAdapter({ owner: 'c1', device: new MemoryLoadBalancer() }),
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\n',
      events,
    );
    const cert = await testCertificate({ dns: ['secure.example'] });
    const post = async (path: string, body: unknown) => {
      const r = await api(url, 'POST', path, body);
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    };
    await post(`${GW_API}/gatewayclasses`, {
      metadata: { name: 'npl-lb' },
      spec: { controllerName: 'npl-lb.io/gateway-controller' },
    });
    await post('/api/v1/namespaces/default/secrets', tlsSecret('default', 'cert', cert));
    await post('/api/v1/namespaces/default/services', {
      metadata: { name: 'secure' },
      spec: { selector: { app: 'secure' }, ports: [{ name: 'https', port: 443 }] },
    });
    const validation = { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }] };
    await post(`${GW_API}/namespaces/default/gateways`, {
      metadata: { name: 'gw' },
      spec: {
        gatewayClassName: 'npl-lb',
        tls: { frontend: { default: { validation } } },
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP' },
          { name: 'https', port: 443, protocol: 'HTTPS', tls: { certificateRefs: [{ name: 'cert' }] } },
        ],
      },
    });
    const listeners = async () => {
      const g = (await api(url, 'GET', `${GW_API}/namespaces/default/gateways/gw`)).body as {
        status?: { listeners?: { name: string; conditions: Cond[] }[] };
      };
      return new Map((g.status?.listeners ?? []).map((l) => [l.name, brief(l.conditions)]));
    };
    await eventually(
      async () => (await listeners()).get('https')?.includes('Accepted=False/UnsupportedValue') === true,
      15_000,
      'the HTTPS listener refused',
    ).catch(async (e: Error) => assert.fail(`${e.message}: ${JSON.stringify([...(await listeners())])}`));
    assert.ok((await listeners()).get('http')?.includes('Accepted=True/Accepted'));
    await eventually(
      async () =>
        events.seen.some(
          (e) =>
            e.target === 'default/gw' &&
            e.reason === 'UnsupportedByLoadBalancer' &&
            /listener https: spec\.tls\.frontend\.default\.validation/.test(e.message),
        ),
      10_000,
      'a Warning Event on the Gateway',
    );

    // The route to a Service a BackendTLSPolicy targets: unresolved, and the policy says so.
    await post(`${GW_API}/namespaces/default/httproutes`, {
      metadata: { name: 'secure' },
      spec: {
        parentRefs: [{ name: 'gw', sectionName: 'http' }],
        rules: [{ backendRefs: [{ name: 'secure', port: 443 }] }],
      },
    });
    await post(`${GW_API}/namespaces/default/backendtlspolicies`, {
      metadata: { name: 'secure' },
      spec: {
        targetRefs: [{ group: '', kind: 'Service', name: 'secure' }],
        validation: { hostname: 'secure.example', wellKnownCACertificates: 'System' },
      },
    });
    const routeRefs = async () => {
      const r = (await api(url, 'GET', `${GW_API}/namespaces/default/httproutes/secure`)).body as {
        status?: { parents?: { conditions: Cond[] }[] };
      };
      return brief(r.status?.parents?.[0]?.conditions).find((c) => c.startsWith('ResolvedRefs'));
    };
    const ancestors = async () => {
      const p = (await api(url, 'GET', `${GW_API}/namespaces/default/backendtlspolicies/secure`)).body as {
        status?: {
          ancestors?: { ancestorRef: { name: string }; controllerName: string; conditions: Cond[] }[];
        };
      };
      return p.status?.ancestors ?? [];
    };
    await eventually(
      async () => (await routeRefs()) === 'ResolvedRefs=False/UnsupportedProtocol',
      15_000,
      'unresolved',
    );
    await eventually(async () => (await ancestors()).length === 1, 15_000, 'the policy status');
    const [a] = await ancestors();
    assert.equal(a!.ancestorRef.name, 'gw');
    assert.equal(a!.controllerName, 'npl-lb.io/gateway-controller');
    assert.deepEqual(brief(a!.conditions), ['Accepted=False/Invalid']);

    // Transitions: the field removed serves the listener; the policy deleted resolves the route.
    const patch = await api(
      url,
      'PATCH',
      `${GW_API}/namespaces/default/gateways/gw`,
      { spec: { tls: null } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(patch.status, 200);
    await eventually(
      async () => (await listeners()).get('https')?.includes('Accepted=True/Accepted') === true,
      15_000,
      'served once removed',
    );
    assert.equal(
      (await api(url, 'DELETE', `${GW_API}/namespaces/default/backendtlspolicies/secure`)).status,
      200,
    );
    await eventually(
      async () => (await routeRefs()) === 'ResolvedRefs=True/ResolvedRefs',
      15_000,
      'resolved again',
    );
  });
});
