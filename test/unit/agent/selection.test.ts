import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { desiredTargets, nodeIPs } from '../../../src/agent/selection.ts';
import { nodeSchema, podSchema, serviceSchema } from '../../../src/kube/objects.ts';

const pod = (over: Record<string, unknown> = {}) =>
  podSchema.parse({
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'web' } },
    spec: {
      containers: [
        {
          name: 'c',
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'dns', containerPort: 53, protocol: 'UDP' },
          ],
        },
      ],
    },
    status: { phase: 'Running', podIP: '10.0.0.1' },
    ...over,
  });
const svc = (
  spec: Record<string, unknown>,
  annotations: Record<string, string> = { 'nodeportlocal.antrea.io/enabled': 'true' },
  ns = 'ns',
) =>
  serviceSchema.parse({
    metadata: { name: 's', namespace: ns, annotations },
    spec: { selector: { app: 'web' }, ...spec },
  });
const V4 = { IPv4: '192.0.2.1' };
const keys = (ts: ReturnType<typeof desiredTargets>) =>
  ts.map((t) => `${t.podPort}/${t.protocol}/${t.family}${t.hostPort ? `/h${t.hostPort}` : ''}`).sort();

describe('desiredTargets', () => {
  const cases: [string, ReturnType<typeof pod>, ReturnType<typeof svc>[], string[]][] = [
    ['numeric targetPort', pod(), [svc({ ports: [{ port: 80, targetPort: 9000 }] })], ['9000/tcp/IPv4']],
    ['targetPort defaults to port', pod(), [svc({ ports: [{ port: 80 }] })], ['80/tcp/IPv4']],
    [
      'named targetPort through container ports',
      pod(),
      [svc({ ports: [{ port: 80, targetPort: 'http' }] })],
      ['8080/tcp/IPv4'],
    ],
    [
      'named port with the wrong protocol does not resolve',
      pod(),
      [svc({ ports: [{ port: 53, targetPort: 'dns' }] })],
      [],
    ],
    ['UDP', pod(), [svc({ ports: [{ port: 53, targetPort: 'dns', protocol: 'UDP' }] })], ['53/udp/IPv4']],
    ['SCTP ignored', pod(), [svc({ ports: [{ port: 5, protocol: 'SCTP' }] })], []],
    [
      'two Services on one port share it',
      pod(),
      [svc({ ports: [{ port: 80, targetPort: 8080 }] }), svc({ ports: [{ port: 81, targetPort: 'http' }] })],
      ['8080/tcp/IPv4'],
    ],
    ['NodePort Services are not eligible', pod(), [svc({ type: 'NodePort', ports: [{ port: 80 }] })], []],
    [
      'annotation must be exactly "true"',
      pod(),
      [svc({ ports: [{ port: 80 }] }, { 'nodeportlocal.antrea.io/enabled': 'True' })],
      [],
    ],
    ['empty selector selects nothing', pod(), [svc({ selector: {}, ports: [{ port: 80 }] })], []],
    ['another namespace does not select', pod(), [svc({ ports: [{ port: 80 }] }, undefined, 'other')], []],
    [
      'LoadBalancer and headless are eligible',
      pod(),
      [
        svc({ type: 'LoadBalancer', ports: [{ port: 80 }] }),
        svc({ clusterIP: 'None', ports: [{ port: 81 }] }),
      ],
      ['80/tcp/IPv4', '81/tcp/IPv4'],
    ],
    [
      'Succeeded Pods have none',
      pod({ status: { phase: 'Succeeded', podIP: '10.0.0.1' } }),
      [svc({ ports: [{ port: 80 }] })],
      [],
    ],
    [
      'Pods without an IP have none',
      pod({ status: { phase: 'Running' } }),
      [svc({ ports: [{ port: 80 }] })],
      [],
    ],
    [
      'hostPort published as is',
      pod({ spec: { containers: [{ name: 'c', ports: [{ containerPort: 8080, hostPort: 30080 }] }] } }),
      [svc({ ports: [{ port: 80, targetPort: 8080 }] })],
      ['8080/tcp/IPv4/h30080'],
    ],
  ];
  for (const [name, p, svcs, want] of cases) {
    it(name, () => assert.deepEqual(keys(desiredTargets(p, svcs, V4)), want));
  }

  it('dual-stack: one target per family the node has an IP in', () => {
    const ds = pod({
      status: { phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }] },
    });
    const s = [svc({ ports: [{ port: 80 }] })];
    assert.deepEqual(keys(desiredTargets(ds, s, { IPv4: '192.0.2.1', IPv6: '2001:db8::1' })), [
      '80/tcp/IPv4',
      '80/tcp/IPv6',
    ]);
    assert.deepEqual(keys(desiredTargets(ds, s, V4)), ['80/tcp/IPv4']);
  });

  it('one target per Pod port whatever the order and number of Services that reach it', () => {
    // Two Services reach the same Pod port (by name and by number): one mapping, not two, and the
    // same whichever Service is seen first (the allocator keys its ports by target).
    const byName = svc({ ports: [{ port: 80, targetPort: 'http' }] });
    const byNumber = svc({ ports: [{ port: 8081, targetPort: 8080 }] });
    const dns = svc({ ports: [{ port: 53, targetPort: 'dns', protocol: 'UDP' }] });
    const a = desiredTargets(pod(), [byName, byNumber, dns], V4);
    const b = desiredTargets(pod(), [dns, byNumber, byName], V4);
    assert.deepEqual(keys(a), ['53/udp/IPv4', '8080/tcp/IPv4']);
    assert.deepEqual(keys(b), keys(a));
  });
});

describe('nodeIPs', () => {
  const node = nodeSchema.parse({
    metadata: { name: 'n' },
    status: {
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'ExternalIP', address: '203.0.113.1' },
        { type: 'InternalIP', address: 'fd00::1' },
        { type: 'Hostname', address: 'n' },
      ],
    },
  });
  it('prefers ExternalIP, else InternalIP, per family', () =>
    assert.deepEqual(nodeIPs(node, 'ExternalIP'), { IPv4: '203.0.113.1', IPv6: 'fd00::1' }));
  it('or InternalIP first when asked', () =>
    assert.deepEqual(nodeIPs(node, 'InternalIP'), { IPv4: '10.0.0.1', IPv6: 'fd00::1' }));
});
