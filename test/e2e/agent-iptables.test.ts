/**
 * Real iptables in network namespaces the test creates: a node namespace with veths to a Pod
 * namespace and a client namespace. Traffic to nodeIP:nodePort reaches the Pod from the node
 * (OUTPUT) and from another host (PREROUTING); a hand-deleted rule is back after the resync; an
 * agent restart keeps ports and traffic. Skipped with a reason without root, iptables or iproute2.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type CommandRunner, runCommand } from '../../src/agent/rules/exec.ts';
import { IptablesBackend, NPL_CHAIN } from '../../src/agent/rules/iptables.ts';
import { NplError } from '../../src/runtime/errors.ts';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { CLI } from '../support/cli-process.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { Netns, netnsUnavailable } from '../support/netns.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const skip = netnsUnavailable();
const run = promisify(execFile);

const NODE_IP = '10.123.1.1';
const POD_IP = '10.123.1.2';
const NODE_CLIENT_SIDE = '10.123.2.1';
const CLIENT_IP = '10.123.2.2';

const inNs =
  (ns: string): CommandRunner =>
  (cmd, args, input) =>
    runCommand('ip', ['netns', 'exec', ns, cmd, ...args], input);

const SERVER = `require('net').createServer((s)=>{s.on('error',()=>{});s.end('pod-ok '+process.argv[1]+'\\n')}).listen(8080,process.argv[1],()=>console.log('listening'))`;
const CLIENT = `const s=require('net').connect({host:process.argv[1],port:+process.argv[2],timeout:2000});let o='';s.on('data',d=>o+=d);s.on('end',()=>{console.log(o.trim());process.exit(0)});s.on('timeout',()=>{console.log('timeout');process.exit(1)});s.on('error',e=>{console.log(e.code);process.exit(1)})`;

describe('iptables forwarding in network namespaces', { skip }, () => {
  it('forwards node ports to the Pod, repairs hand-edited rules, survives an agent restart, cleans up', async (t) => {
    const ns = new Netns(t);
    const node = ns.add('node');
    const pod = ns.add('pod');
    const client = ns.add('client');
    ns.link(node, NODE_IP, pod, POD_IP);
    ns.link(node, NODE_CLIENT_SIDE, client, CLIENT_IP);
    ns.exec(pod, 'ip', 'route', 'add', 'default', 'via', NODE_IP);
    ns.exec(client, 'ip', 'route', 'add', 'default', 'via', NODE_CLIENT_SIDE);
    ns.exec(node, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1');
    const server = ns.spawn(pod, process.execPath, ['-e', SERVER, POD_IP]);
    await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
    const curl = async (from: string, port: number) =>
      (
        await run('ip', ['netns', 'exec', from, process.execPath, '-e', CLIENT, NODE_IP, String(port)]).catch(
          (e: { stdout: string }) => e,
        )
      ).stdout.trim();

    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: [NODE_IP] });
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('web-1', { node: 'n1', ips: [POD_IP] });
    const backend = () => new IptablesBackend({ run: inNs(node), ipv6: false });
    const first = await startAgent(t, kc, {
      nodeName: 'n1',
      backend: backend(),
      resyncIntervalMs: 300,
      range: { start: 63000, end: 63099 },
    });
    await eventually(async () => (await c.annotationText('web-1')) !== undefined, 5000, 'annotation');
    const nodePort = (await c.entries('web-1'))[0]!.nodePort;
    assert.equal(await curl(node, nodePort), `pod-ok ${POD_IP}`, 'from the node itself (OUTPUT)');
    assert.equal(await curl(client, nodePort), `pod-ok ${POD_IP}`, 'from another host (PREROUTING)');

    const chain = () => ns.exec(node, 'iptables', '-w', '-t', 'nat', '-S', NPL_CHAIN);
    const rule = chain()
      .split('\n')
      .find((l) => l.includes(`--dport ${nodePort}`))!;
    assert.ok(rule, chain());
    ns.exec(node, 'sh', '-c', `iptables -w -t nat ${rule.replace(/^-A /, '-D ')}`);
    ns.exec(
      node,
      'iptables',
      '-w',
      '-t',
      'nat',
      '-A',
      NPL_CHAIN,
      '-p',
      'tcp',
      '--dport',
      '63099',
      '-j',
      'DNAT',
      '--to-destination',
      '10.123.1.9:1',
    );
    assert.ok(!chain().includes(`--dport ${nodePort}`), 'deleted by hand');
    await eventually(
      () => chain().includes(`--dport ${nodePort}`) && !chain().includes('63099'),
      5000,
      'resync repaired the chain',
    );
    assert.equal(await curl(client, nodePort), `pod-ok ${POD_IP}`);

    await first.stop();
    assert.equal(await curl(client, nodePort), `pod-ok ${POD_IP}`, 'rules stay while the agent is down');
    const second = await startAgent(t, kc, {
      nodeName: 'n1',
      backend: backend(),
      resyncIntervalMs: 0,
      range: { start: 63000, end: 63099 },
    });
    await second.agent.settled();
    assert.equal((await c.entries('web-1'))[0]!.nodePort, nodePort, 'the port is stable across the restart');
    assert.equal(second.agent.restoreReport.restored, 1);
    assert.equal(await curl(client, nodePort), `pod-ok ${POD_IP}`);
    await second.stop();

    // `npl-lb agent --cleanup`, run inside the node's namespace, removes the chain and the jumps.
    const cleanup = ns.tryExec(
      node,
      process.execPath,
      ...CLI,
      'agent',
      '--cleanup',
      '--http-address',
      '127.0.0.1:0',
    );
    assert.equal(cleanup.code, 0, cleanup.out);
    assert.notEqual(
      ns.tryExec(node, 'iptables', '-w', '-t', 'nat', '-S', NPL_CHAIN).code,
      0,
      'chain removed',
    );
    assert.ok(
      !ns.exec(node, 'iptables', '-w', '-t', 'nat', '-S', 'PREROUTING').includes(NPL_CHAIN),
      'jump removed',
    );
  });

  it("refuses to start beside Antrea's NodePortLocal, in one line, from the command line too", async (t) => {
    const ns = new Netns(t);
    const node = ns.add('antrea');
    ns.exec(node, 'iptables', '-w', '-t', 'nat', '-N', 'ANTREA-NODE-PORT-LOCAL');
    ns.exec(
      node,
      'iptables',
      '-w',
      '-t',
      'nat',
      '-A',
      'ANTREA-NODE-PORT-LOCAL',
      '-p',
      'tcp',
      '--dport',
      '61000',
      '-j',
      'DNAT',
      '--to-destination',
      '10.123.1.2:80',
    );
    await assert.rejects(
      new IptablesBackend({ run: inNs(node), ipv6: false }).start(),
      (e: unknown) => e instanceof NplError && e.code === 'NPL_ANTREA_NPL_ACTIVE',
    );
    const { kubeconfigPath } = await useSandbox(t);
    const r = ns.tryExec(
      node,
      process.execPath,
      ...CLI,
      'agent',
      '--node-name',
      'n1',
      '--kubeconfig',
      kubeconfigPath,
      '--http-address',
      '127.0.0.1:0',
    );
    assert.notEqual(r.code, 0);
    const lines = r.out
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('npl-lb:'));
    assert.equal(lines.length, 1, r.out);
    assert.match(lines[0]!, /Antrea's NodePortLocal is active on this node.*\[NPL_ANTREA_NPL_ACTIVE\]$/);
  });

  it('a burst of 300 newly selected Pods is mapped in at most 3 restores (the bench in short), every rule in the chain', async (t) => {
    const ns = new Netns(t);
    const node = ns.add('node');
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['127.0.70.1'] });
    await c.service('web', { enabled: null, ports: [{ port: 80, targetPort: 8080 }] });
    const PODS = 300;
    for (let i = 0; i < PODS; i += 30) {
      await Promise.all(
        Array.from({ length: 30 }, (_, j) =>
          c.pod(`web-${i + j}`, { node: 'n1', ips: [`10.244.${(i + j) >> 8}.${(i + j) & 255}`] }),
        ),
      );
    }
    const backend = new IptablesBackend({ run: inNs(node), ipv6: false });
    const agent = await startAgent(t, kc, { nodeName: 'n1', backend, range: { start: 47000, end: 47999 } });
    await agent.agent.settled();
    const before = { ...backend.stats };
    await c.core.patchNamespacedService(
      {
        name: 'web',
        namespace: 'default',
        body: { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      async () => {
        const pods = await c.core.listNamespacedPod({ namespace: 'default' });
        return pods.items.filter((p) => p.metadata?.annotations?.['nodeportlocal.antrea.io']).length === PODS;
      },
      30_000,
      `all ${PODS} Pods annotated`,
    );
    const restores = backend.stats.restores - before.restores;
    const processes = backend.stats.processes - before.processes;
    assert.ok(restores >= 1 && restores <= 3, `${restores} restores for the burst`);
    assert.equal(processes, restores, 'no process but the restores');
    const chain = ns.exec(node, 'iptables', '-w', '-t', 'nat', '-S', NPL_CHAIN).trim().split('\n');
    assert.equal(chain.filter((l) => l.startsWith(`-A ${NPL_CHAIN} `)).length, PODS);
  });
});
