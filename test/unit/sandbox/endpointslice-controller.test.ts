/**
 * The sandbox's EndpointSlice controller: a Service's slice lists its selected Pods with address,
 * node, targetRef and conditions, and its ports resolved to the Pods' numbers; readiness, a new Pod,
 * a deleted Pod and a deleted Service follow; a dual-stack Pod gets an IPv6 slice too; a Service
 * without a selector keeps the slices its writer made; off unless asked.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { startSandbox } from '../../../src/sandbox/server.ts';
import { eventually } from '../../support/sandbox.ts';

type Slice = {
  metadata: { name: string; labels: Record<string, string> };
  addressType: string;
  endpoints?: {
    addresses: string[];
    nodeName?: string;
    targetRef: { name: string };
    conditions: { ready: boolean; terminating: boolean };
  }[];
  ports?: { name?: string; port?: number; protocol: string }[];
};

async function sandbox(t: TestContext, endpointSlices = true) {
  const sb = await startSandbox({ endpointSlices });
  t.after(() => sb.close());
  const call = async (method: string, path: string, body?: object, type = 'application/json') => {
    const r = await fetch(`${sb.url}${path}`, {
      method,
      headers: { 'content-type': type },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return (await r.json()) as Record<string, unknown>;
  };
  const slices = async () =>
    (
      (await call('GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices')).items as Slice[]
    ).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  const pod = async (name: string, ips: string[], ready: boolean, node = 'n1') => {
    await call('POST', '/api/v1/namespaces/default/pods', {
      metadata: { name, labels: { app: 'web' } },
      spec: {
        nodeName: node,
        containers: [{ name: 'c', image: 'i', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    });
    await call(
      'PATCH',
      `/api/v1/namespaces/default/pods/${name}/status`,
      {
        status: {
          podIPs: ips.map((ip) => ({ ip })),
          podIP: ips[0],
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        },
      },
      'application/merge-patch+json',
    );
  };
  return { call, slices, pod };
}

describe('the sandbox EndpointSlice controller', () => {
  it('follows Services and Pods as kube-controller-manager does', async (t) => {
    const { call, slices, pod } = await sandbox(t);
    await call('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
    });
    await pod('web-1', ['10.0.0.1'], true);
    await pod('web-2', ['10.0.0.2', 'fd00::2'], false, 'n2');
    await eventually(async () => (await slices()).length === 2, 3000, 'an IPv4 and an IPv6 slice');
    const [v4, v6] = await slices();
    assert.equal(v4!.metadata.name, 'web-ipv4');
    assert.equal(v4!.metadata.labels['kubernetes.io/service-name'], 'web');
    assert.deepEqual(v4!.ports, [{ name: 'http', protocol: 'TCP', port: 8080 }]);
    assert.deepEqual(
      v4!.endpoints!.map((e) => [e.addresses[0], e.nodeName, e.targetRef.name, e.conditions.ready]),
      [
        ['10.0.0.1', 'n1', 'web-1', true],
        ['10.0.0.2', 'n2', 'web-2', false],
      ],
    );
    assert.deepEqual([v6!.addressType, v6!.endpoints!.map((e) => e.addresses[0])], ['IPv6', ['fd00::2']]);

    await call(
      'PATCH',
      '/api/v1/namespaces/default/pods/web-2/status',
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      'application/merge-patch+json',
    );
    await eventually(
      async () => (await slices())[0]!.endpoints!.every((e) => e.conditions.ready),
      3000,
      'web-2 ready',
    );
    await call('DELETE', '/api/v1/namespaces/default/pods/web-1');
    await eventually(async () => (await slices())[0]!.endpoints!.length === 1, 3000, 'web-1 gone');
    await call('DELETE', '/api/v1/namespaces/default/services/web');
    await eventually(async () => (await slices()).length === 0, 3000, 'slices of a deleted Service go');
  });

  it("a Service without a selector keeps its writer's slices; off unless asked", async (t) => {
    const { call, slices } = await sandbox(t);
    await call('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'manual' },
      spec: { ports: [{ port: 80 }] },
    });
    await call('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      metadata: { name: 'manual-1', labels: { 'kubernetes.io/service-name': 'manual' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.9'] }],
      ports: [{ port: 80, protocol: 'TCP' }],
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(
      (await slices()).map((s) => s.metadata.name),
      ['manual-1'],
    );
    const off = await sandbox(t, false);
    await off.call('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    await off.pod('web-1', ['10.0.0.1'], true);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await off.slices(), []);
  });
});
