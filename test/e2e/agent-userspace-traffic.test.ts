/**
 * Real traffic through the userspace forwarder: Pods are small TCP and UDP servers on loopback
 * addresses, the node IP is a loopback address, and a client connects to nodeIP:nodePort.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect, createServer, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODE_IP = '127.0.10.1';

async function tcpPod(t: TestContext, ip: string, port: number, id: string): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => {
      chunks.push(d);
      if (d.toString().includes('RESET')) s.resetAndDestroy();
    });
    s.on('error', () => {});
    // Answers only after the client half-closed: proves the FIN is carried across.
    s.on('end', () => {
      const body = Buffer.concat(chunks);
      s.end(`${id}:${body.length}:${createHash('sha256').update(body).digest('hex')}`);
    });
  });
  await new Promise<void>((r) => server.listen(port, ip, () => r()));
  t.after(() => server.close());
  return server;
}

async function udpPod(t: TestContext, ip: string, port: number, id: string): Promise<void> {
  const sock = createSocket('udp4');
  sock.on('message', (msg, from) => sock.send(`${id}:${msg.toString()}`, from.port, from.address));
  await new Promise<void>((r) => sock.bind(port, ip, () => r()));
  t.after(() => sock.close());
}

function request(port: number, payload: Buffer, host = NODE_IP): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect({ host, port, allowHalfOpen: true });
    let out = '';
    c.on('data', (d: Buffer) => {
      out += d.toString();
    });
    c.on('end', () => resolve(out));
    c.on('error', reject);
    c.end(payload);
  });
}

function udpRequest(port: number, msg: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      reject(new Error('no UDP reply'));
    }, 3000);
    s.on('message', (m) => {
      clearTimeout(timer);
      s.close();
      resolve(m.toString());
    });
    s.send(msg, port, NODE_IP);
  });
}

describe('userspace forwarding with real traffic', () => {
  it('TCP and UDP to nodeIP:nodePort reach the right Pod; half-close, large transfers and resets carried', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: [NODE_IP] });
    await c.service('web', {
      ports: [
        { name: 'http', port: 80, targetPort: 18080 },
        { name: 'dns', port: 53, targetPort: 18053, protocol: 'UDP' },
      ],
    });
    await tcpPod(t, '127.0.20.1', 18080, 'pod-a');
    await tcpPod(t, '127.0.20.2', 18080, 'pod-b');
    await udpPod(t, '127.0.20.1', 18053, 'pod-a');
    await udpPod(t, '127.0.20.2', 18053, 'pod-b');
    await c.pod('a', { node: 'n1', ips: ['127.0.20.1'] });
    await c.pod('b', { node: 'n1', ips: ['127.0.20.2'] });
    const backend = new UserspaceBackend({ udpIdleMs: 200 });
    await startAgent(t, kc, { nodeName: 'n1', backend });
    await eventually(
      async () => (await c.entries('a')).length === 2 && (await c.entries('b')).length === 2,
      5000,
      'annotations',
    );
    for (const [pod, id] of [
      ['a', 'pod-a'],
      ['b', 'pod-b'],
    ] as const) {
      const entries = await c.entries(pod);
      const tcp = entries.find((e) => e.protocol === 'tcp')!;
      const udp = entries.find((e) => e.protocol === 'udp')!;
      assert.equal(tcp.nodeIP, NODE_IP);
      const small = await request(tcp.nodePort, Buffer.from('hello'));
      assert.equal(small, `${id}:5:${createHash('sha256').update('hello').digest('hex')}`);
      const big = randomBytes(8 * 1024 * 1024);
      const reply = await request(tcp.nodePort, big);
      assert.equal(
        reply,
        `${id}:${big.length}:${createHash('sha256').update(big).digest('hex')}`,
        'backpressure keeps every byte',
      );
      assert.equal(await udpRequest(udp.nodePort, 'q1'), `${id}:q1`);
    }
    assert.ok(backend.udpSessions() >= 1);
    await eventually(() => backend.udpSessions() === 0, 3000, 'UDP sessions end after the idle timeout');
    const tcpA = (await c.entries('a')).find((e) => e.protocol === 'tcp')!;
    await assert.rejects(
      new Promise((resolve, reject) => {
        const s = connect({ host: NODE_IP, port: tcpA.nodePort });
        s.on('error', reject);
        s.on('close', resolve);
        s.write('RESET');
      }),
      (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET',
      'a reset by the Pod reaches the client',
    );
    // Deleting the Pod stops forwarding on its port.
    await c.core.deleteNamespacedPod({ name: 'a', namespace: 'default' });
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const s = connect({ host: NODE_IP, port: tcpA.nodePort });
          s.on('error', () => resolve(true));
          s.on('close', () => resolve(true));
          s.on('data', () => resolve(false));
          s.end('x');
        }),
      5000,
      'port closed',
    );
  });

  it('a dual-stack Pod: an entry per family, each at the node address of that family, forwarding in its family', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['127.0.10.5', '::1'] });
    await c.service('dual', { ports: [{ name: 'tcp', port: 80, targetPort: 18381 }] });
    await tcpPod(t, '127.0.20.5', 18381, 'pod-v4');
    await tcpPod(t, '::1', 18381, 'pod-v6');
    await c.pod('d', { node: 'n1', labels: { app: 'dual' }, ips: ['127.0.20.5', '::1'] });
    await startAgent(t, kc, {
      nodeName: 'n1',
      backend: new UserspaceBackend({}),
      range: { start: 62400, end: 62499 },
    });
    await eventually(async () => (await c.entries('d')).length === 2, 5000, 'an entry per family');
    const entries = await c.entries('d');
    const v4 = entries.find((e) => e.ipFamily === 'IPv4')!;
    const v6 = entries.find((e) => e.ipFamily === 'IPv6')!;
    assert.deepEqual([v4.nodeIP, v6.nodeIP], ['127.0.10.5', '::1']);
    const sum = createHash('sha256').update('hi').digest('hex');
    assert.equal(await request(v4.nodePort, Buffer.from('hi'), v4.nodeIP), `pod-v4:2:${sum}`);
    assert.equal(await request(v6.nodePort, Buffer.from('hi'), v6.nodeIP), `pod-v6:2:${sum}`);
  });
});
