/**
 * Uninstall leaves no rules behind: an agent run with --cleanup-on-uninstall keeps its forwarding
 * rules when it stops while its DaemonSet exists (a rollout, a node drain), and removes them when
 * the DaemonSet is gone (helm uninstall). Real iptables, in a network namespace.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { AppsV1Api, CoreV1Api } from '@kubernetes/client-node';
import { type CommandRunner, runCommand } from '../../src/agent/rules/exec.ts';
import { IptablesBackend, NPL_CHAIN } from '../../src/agent/rules/iptables.ts';
import { cleanupIfUninstalled } from '../../src/agent/uninstall.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { Netns, netnsUnavailable } from '../support/netns.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const DS = 'npl-lb/r1-npl-lb-agent';
const inNs =
  (ns: string): CommandRunner =>
  (cmd, args, input) =>
    runCommand('ip', ['netns', 'exec', ns, cmd, ...args], input);

it(
  'a stopping agent removes its rules only when its DaemonSet is gone',
  { skip: netnsUnavailable() },
  async (t) => {
    const ns = new Netns(t);
    const node = ns.add('node');
    const { kc } = await useSandbox(t);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: 'npl-lb' } } });
    const apps = kc.makeApiClient(AppsV1Api);
    const labels = { app: 'npl-lb-agent' };
    await apps.createNamespacedDaemonSet({
      namespace: 'npl-lb',
      body: {
        metadata: { name: 'r1-npl-lb-agent' },
        spec: {
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'agent', image: 'npl-lb' }] } },
        },
      },
    });
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['10.123.9.1'] });
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('web-1', { node: 'n1', ips: ['10.123.9.2'] });
    const chainExists = () => ns.tryExec(node, 'iptables', '-w', '-t', 'nat', '-S', NPL_CHAIN).code === 0;
    const cycle = async () => {
      const backend = new IptablesBackend({ run: inNs(node), ipv6: false });
      const a = await startAgent(t, kc, {
        nodeName: 'n1',
        backend,
        resyncIntervalMs: 0,
        range: { start: 63100, end: 63199 },
      });
      await eventually(chainExists, 10_000, 'the agent programmed its chain');
      await a.stop();
      return cleanupIfUninstalled(kc, DS, backend, silentLogger());
    };

    // A rollout: the DaemonSet stays, so do the rules.
    assert.equal(await cycle(), false);
    assert.ok(chainExists(), 'rules kept while the DaemonSet exists');
    assert.equal(
      await cleanupIfUninstalled(
        kc,
        undefined,
        new IptablesBackend({ run: inNs(node), ipv6: false }),
        silentLogger(),
      ),
      false,
      'off unless asked',
    );

    // helm uninstall: the DaemonSet is deleted, the stopping agent removes its rules.
    await apps.deleteNamespacedDaemonSet({ name: 'r1-npl-lb-agent', namespace: 'npl-lb' });
    assert.equal(await cycle(), true);
    assert.ok(!chainExists(), 'chain removed');
    assert.ok(
      !ns.exec(node, 'iptables', '-w', '-t', 'nat', '-S', 'PREROUTING').includes(NPL_CHAIN),
      'jump removed',
    );
  },
);
