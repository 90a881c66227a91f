/**
 * Issue 34 end to end, in network namespaces the test creates (IPv6 ULA and private IPv4 addresses
 * on their interfaces, nothing outside them): a node namespace with the agent's iptables and
 * ip6tables rules and a real HAProxy, a Pod namespace behind a veth. The agent maps a dual-stack
 * Pod in both families; the controller serves a RequireDualStack LoadBalancer Service and an
 * HTTPRoute on an IPv4 and an IPv6 VIP each, on every HAProxy transport, with real traffic in both
 * families (the Pod answers with the address it was reached on, so the member's family shows);
 * both addresses are in the statuses. A controller restart writes nothing (the runtime transport
 * read `[fd00::1]:61000` back as `fd00:` port 1 and rewrote every IPv6 object at each start).
 * Bad input (entries, requests, families that cannot be served) is in
 * test/unit/source/dual-stack.test.ts. Skipped with a reason without root, network namespaces,
 * ip6tables or HAProxy.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { type CommandRunner, runCommand } from '../../src/agent/rules/exec.ts';
import { IptablesBackend } from '../../src/agent/rules/iptables.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { Cluster, runController, startAgent } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { Netns, netnsUnavailable } from '../support/netns.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);

function ip6tablesMissing(): string | undefined {
  const r = spawnSync('sh', ['-c', 'command -v ip6tables-restore']);
  return r.status === 0 ? undefined : 'needs ip6tables (Debian iptables)';
}
const skip = netnsUnavailable() ?? ip6tablesMissing() ?? haproxyMissing();

const NODE = ['10.124.1.1', 'fd00:124:1::1'] as const;
const POD = ['10.124.1.2', 'fd00:124:1::2'] as const;
/** The VIP ranges: 10.124.9.1-6 and fd00:124:9::1-3, each address on the node namespace's lo. */
const CIDRS = ['10.124.9.0/29', 'fd00:124:9::/126'];
const VIPS = [1, 2, 3, 4, 5, 6].map((i) => `10.124.9.${i}`).concat([1, 2, 3].map((i) => `fd00:124:9::${i}`));
const L4_PORT = 18301;
const GW_PORT = 18302;

/** The Pod: HTTP on both families, answering with the address it was reached on. */
const POD_SERVER = `require('http').createServer((q,s)=>s.end('web-1 on '+q.socket.localAddress.replace(/^::ffff:/,'')+'\\n')).listen(8080,'::',()=>console.log('listening'))`;
const CLIENT = `const h=require('http');const r=h.get(process.argv[1],{timeout:2000,headers:{host:'dual.example'}},(s)=>{let o='';s.on('data',d=>o+=d);s.on('end',()=>{console.log(s.statusCode+' '+o.trim());process.exit(0)})});r.on('timeout',()=>{console.log('timeout');process.exit(1)});r.on('error',e=>{console.log(e.code);process.exit(1)})`;

const inNs =
  (ns: string): CommandRunner =>
  (cmd, args, input) =>
    runCommand('ip', ['netns', 'exec', ns, cmd, ...args], input);

/** A haproxy that runs in the namespace: the adapters start and check it as they would the real one. */
function haproxyIn(t: TestContext, ns: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-ns-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'haproxy');
  writeFileSync(bin, `#!/bin/sh\nexec ip netns exec ${ns} haproxy "$@"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

const url = (vip: string, port: number): string => `http://${vip.includes(':') ? `[${vip}]` : vip}:${port}/`;

for (const tr of TRANSPORTS)
  describe(`IPv6 and dual-stack through a real HAProxy (${tr.name})`, { skip }, () => {
    it('a dual-stack Pod mapped in both families, a RequireDualStack Service and an HTTPRoute served on both VIPs', async (t) => {
      const ns = new Netns(t);
      const node = ns.add('node6');
      const pod = ns.add('pod6');
      ns.link(node, NODE[0], pod, POD[0], [NODE[1], POD[1]]);
      for (const v of VIPS)
        ns.exec(
          node,
          'ip',
          ...(v.includes(':')
            ? ['-6', 'addr', 'add', `${v}/128`, 'dev', 'lo', 'nodad']
            : ['addr', 'add', `${v}/32`, 'dev', 'lo']),
        );
      const server = ns.spawn(pod, process.execPath, ['-e', POD_SERVER]);
      await new Promise<void>((resolve) => server.stdout!.once('data', () => resolve()));
      const get = async (vip: string, port: number): Promise<string> =>
        (
          await run('ip', ['netns', 'exec', node, process.execPath, '-e', CLIENT, url(vip, port)]).catch(
            (e: { stdout: string }) => e,
          )
        ).stdout.trim();

      const { kc, url: apiUrl } = await useSandbox(t);
      await installGatewayApi(apiUrl);
      const c = new Cluster(kc);
      await c.node('n1', { internal: [...NODE] });
      await startAgent(t, kc, {
        nodeName: 'n1',
        backend: new IptablesBackend({ run: inNs(node) }),
        range: { start: 63100, end: 63199 },
      });
      const rig = await tr.start(t, 4, { haproxyBin: haproxyIn(t, node) });
      const config = `clusterName: e2e\nserviceType: NodePortLocal\ndefaultLoadBalancer: true\nvip: {cidrs: [${CIDRS.map((x) => `"${x}"`).join(', ')}]}\n`;
      const first = await runController(t, kc, rig.adapter, config);

      await c.service('web', {
        type: 'LoadBalancer',
        ports: [{ name: 'http', port: L4_PORT, targetPort: 8080 }],
        spec: { ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' },
      });
      await c.pod('web-1', {
        node: 'n1',
        labels: { app: 'web' },
        ips: [...POD],
        ports: [{ containerPort: 8080 }],
      });
      await c.patchPodStatus('web-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      await api(apiUrl, 'POST', `${GW_API}/gatewayclasses`, {
        metadata: { name: 'npl-lb' },
        spec: { controllerName: 'npl-lb.io/gateway-controller' },
      });
      await api(apiUrl, 'POST', `${GW_API}/namespaces/default/gateways`, {
        metadata: { name: 'gw' },
        spec: { gatewayClassName: 'npl-lb', listeners: [{ name: 'http', port: GW_PORT, protocol: 'HTTP' }] },
      });
      await api(apiUrl, 'POST', `${GW_API}/namespaces/default/httproutes`, {
        metadata: { name: 'dual' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          hostnames: ['dual.example'],
          rules: [{ backendRefs: [{ name: 'web', port: L4_PORT }] }],
        },
      });

      // The agent maps the Pod in both families, each at the node's address of that family.
      await eventually(
        async () => (await c.entries('web-1')).length === 2,
        10_000,
        'two NodePortLocal entries',
      );
      const entries = await c.entries('web-1');
      assert.deepEqual(entries.map((e) => `${e.ipFamily} ${e.nodeIP}`).sort(), [
        `IPv4 ${NODE[0]}`,
        `IPv6 ${NODE[1]}`,
      ]);

      // The Service: one address per family in its status, each serving through its own family.
      let ips: string[] = [];
      await eventually(
        async () => {
          const s = (await api(apiUrl, 'GET', '/api/v1/namespaces/default/services/web')).body as {
            status?: { loadBalancer?: { ingress?: { ip: string }[] } };
          };
          ips = (s.status?.loadBalancer?.ingress ?? []).map((i) => i.ip);
          return ips.length === 2;
        },
        15_000,
        'two addresses in the Service status',
      );
      const [v4, v6] = ips as [string, string];
      assert.match(v4, /^10\.124\.9\.\d$/);
      assert.match(v6, /^fd00:124:9::\d$/);
      await eventually(async () => (await get(v6, L4_PORT)) === `200 web-1 on ${POD[1]}`, 15_000, 'IPv6 VIP');
      assert.equal(await get(v4, L4_PORT), `200 web-1 on ${POD[0]}`, 'the IPv4 VIP reaches the Pod in IPv4');

      // The Gateway: both addresses, the route served on each.
      let gwIps: string[] = [];
      await eventually(
        async () => {
          const g = (await api(apiUrl, 'GET', `${GW_API}/namespaces/default/gateways/gw`)).body as {
            status?: { addresses?: { value: string }[] };
          };
          gwIps = (g.status?.addresses ?? []).map((a) => a.value);
          return gwIps.length === 2;
        },
        15_000,
        'two Gateway addresses',
      );
      assert.ok(gwIps.some((a) => a.includes(':')) && gwIps.some((a) => !a.includes(':')), gwIps.join(' '));
      for (const a of gwIps)
        await eventually(
          async () => (await get(a, GW_PORT)).startsWith('200 web-1 on '),
          15_000,
          `route on ${a}`,
        );

      // A restart: the new controller finds everything in place and writes nothing.
      const reloads = rig.reloads();
      await first.stop();
      const asked: string[] = [];
      const counting: LoadBalancerAdapter = Object.create(rig.adapter) as LoadBalancerAdapter;
      counting.apply = (changes, ...rest) => {
        asked.push(...changes.map((ch) => `${ch.op} ${ch.kind} ${ch.name}`));
        return rig.adapter.apply(changes, ...rest);
      };
      await runController(t, kc, counting, config);
      await new Promise((r) => setTimeout(r, 2000));
      await rig.idle();
      assert.deepEqual(asked, [], 'nothing written again');
      assert.equal(rig.reloads(), reloads, 'no reload after the restart');
      assert.equal(await get(v6, L4_PORT), `200 web-1 on ${POD[1]}`);
      assert.ok(rig.specProblems().length === 0, rig.specProblems().join('\n'));
    });
  });
