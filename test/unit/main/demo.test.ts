/**
 * `npm start` (the demo) as a user runs it: traffic through the load balancer reaches the Pods by
 * every printed command, a second demo in the same clone is refused, HAProxy killed is restarted
 * and told, Ctrl-C removes what it made; and `npm start -- --dual-stack` in both families.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { CLI, exited, run, startCli } from '../../support/cli-process.ts';
import { startDemo } from '../../support/demo-process.ts';
import { haproxyMissing } from '../../support/haproxy.ts';
import { ensureKubeTools } from '../../support/kube-tools.ts';
import { eventually } from '../../support/sandbox.ts';

/** Whether curl is missing here (CI installs it: the demo's printed commands are run verbatim). */
function curlMissing(): boolean {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return true;
  }
}

const start = (t: TestContext, args: string[]) => startCli(t, args);

describe('npm start (the demo)', () => {
  it('npm start (the demo): traffic through the load balancer reaches the Pods; Ctrl-C removes what it made', async (t) => {
    // Stopped, its HAProxy too, and its folder removed after the test whatever happens.
    const { child, out, dir } = startDemo(t);
    await eventually(() => /Press Ctrl-C/.test(out()), 150_000, 'demo start');
    assert.doesNotMatch(out(), /not answering yet/, 'every printed URL answers by the banner');
    assert.match(out(), new RegExp(`export KUBECONFIG=${join(dir, 'kubeconfig')}`));
    // A second npm start in the same clone: refused in one line, the first demo's files untouched.
    const second = start(t, ['demo', '--work-dir', dir]);
    assert.equal(await exited(second.child), 1);
    assert.match(
      second.out(),
      /^npl-lb: a demo is already running from .* \(pid \d+\).* \[NPL_DEMO_RUNNING\]$/m,
    );
    assert.ok(existsSync(join(dir, 'kubeconfig')), "the first demo's kubeconfig is still there");
    assert.match(readFileSync(join(dir, 'kubeconfig'), 'utf8'), /server: http:\/\/127\.0\.0\.1:\d+/);
    const dashboard = /Pools by node: (http:\/\/\S+)\/ \(dashboard\)/.exec(out())![1]!;
    assert.match(await (await fetch(`${dashboard}/`)).text(), /<title>npl-lb: pools by node<\/title>/);
    // A cluster that looks alive in kubectl: Pods Running and 1/1, the Ingress on the ports it is served on.
    const kubectl = (...args: string[]) =>
      run(ensureKubeTools().kubectl, args, { env: { ...process.env, KUBECONFIG: join(dir, 'kubeconfig') } });
    const pods = (await kubectl('get', 'pods', '-l', 'app=web')).stdout;
    assert.equal(pods.match(/ 1\/1 +Running /g)?.length, 3, pods);
    // The Services' endpoints, kept by the sandbox's EndpointSlice controller: web's three Pods.
    await eventually(
      async () =>
        /^web-ipv4 +IPv4 +8080 +127\.\d\.4[1-3]\.\d+,127\.\d\.4[1-3]\.\d+,127\.\d\.4[1-3]\.\d+ /m.test(
          (await kubectl('get', 'endpointslices')).stdout,
        ),
      10_000,
      'kubectl get endpointslices lists the Pods',
    );
    // Every namespace is served, as the banner says: a LoadBalancer Service made in a new one gets a VIP.
    assert.match(out(), /The controller serves every namespace/);
    await kubectl('create', 'namespace', 'team-a');
    writeFileSync(
      join(dir, 'other.yaml'),
      'apiVersion: v1\nkind: Service\nmetadata: {name: other, namespace: team-a}\nspec: {type: LoadBalancer, loadBalancerClass: npl-lb.io/lb, selector: {app: other}, ports: [{port: 80, targetPort: 8080}]}\n',
    );
    await kubectl('apply', '-f', join(dir, 'other.yaml'));
    await eventually(
      async () =>
        /^127\.\d+\.30\.\d+$/.test(
          (
            await kubectl(
              '-n',
              'team-a',
              'get',
              'service',
              'other',
              '-o',
              'jsonpath={.status.loadBalancer.ingress[0].ip}',
            )
          ).stdout,
        ),
      15_000,
      'a Service in another namespace gets a VIP',
    );
    await eventually(
      async () =>
        /web +npl-lb +web\.demo\.local +\S+ +8080, 8443 /.test(
          (await kubectl('get', 'ingress', 'web')).stdout,
        ),
      10_000,
      'the Ingress shows 8080, 8443',
    );
    if (haproxyMissing()) {
      assert.match(out(), /HAProxy is not installed/);
    } else {
      const l4 = /curl (http:\/\/127\.\d\.30\.\d+:8080\/)/.exec(out())![1]!;
      const l7 = /curl -H 'Host: web\.demo\.local' (http:\/\/127\.\d\.30\.\d+:8080\/)/.exec(out())![1]!;
      const seen = new Set<string>();
      for (let i = 0; i < 6; i++) {
        // A new connection each time: the L4 VIP balances connections, not the requests on one.
        const body = await (await request(l4, { reset: true })).body.text();
        assert.match(body, /^hello from pod web-[a-z0-9]+-[a-z0-9]{5} on node-\d/);
        seen.add(body.split(' ')[3]!);
      }
      assert.equal(seen.size, 3, `round robin over the three Pods: ${[...seen].join(' ')}`);
      // (fetch does not let a caller set Host; undici's request does.)
      const viaIngress = await request(l7, { headers: { host: 'web.demo.local' } });
      assert.match(
        await viaIngress.body.text(),
        /^hello from pod web-[a-z0-9]+-[a-z0-9]{5} on node-\d \(web\.demo\.local/,
      );
      const other = await request(l7, { headers: { host: 'elsewhere' } });
      await other.body.dump();
      assert.equal(other.statusCode, 503, 'no route for another host');
      // The Gateway: the printed curl command, verbatim; over 40 requests both versions answer
      // (80/20), each with the header the route adds.
      const gwCurl = /^ {2}(curl -H 'Host: gw\.demo\.local' http:\/\/\S+)/m.exec(out())![1]!;
      const gwUrl = /(http:\/\/\S+)/.exec(gwCurl)![1]!;
      const versions = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const body = await (await request(gwUrl, { headers: { host: 'gw.demo.local' } })).body.text();
        assert.match(body, /\[x-demo: gateway\]$/m);
        versions.add(/pod (web-v2|web)-/.exec(body)![1]!);
      }
      assert.deepEqual([...versions].sort(), ['web', 'web-v2'], 'the split reaches both versions');
      if (!curlMissing()) assert.match((await run('sh', ['-c', gwCurl])).stdout, /\[x-demo: gateway\]/);
      // HTTPS: the printed curl command, verbatim, with the CA file the demo wrote (no -k).
      const https = /^ {2}(curl --cacert \S+ --resolve \S+ https:\/\/\S+)/m.exec(out())![1]!;
      if (curlMissing())
        t.diagnostic('curl is not installed (apt-get install curl): the HTTPS command was not run');
      else {
        const body = (await run('sh', ['-c', https])).stdout;
        assert.match(body, /^hello from pod web-[a-z0-9]+-[a-z0-9]{5} on node-\d \(web\.demo\.local/);
      }
      // The Deployment shop, rolled with the printed kubectl commands while traffic flows through
      // its VIP (a new connection each request): its Pods are processes the sandbox's kubelet
      // runs, each gated on the load balancer; nothing is lost through a rollout restart, a scale
      // up and a Pod deleted.
      const shopUrl = /curl -s (http:\/\/127\.\d\.30\.\d+:8080\/); done/.exec(out())![1]!;
      let sent = 0;
      const lost: string[] = [];
      let stop = false;
      let phase = 'start';
      const traffic = (async () => {
        for (let i = 0; i < 3000 && !stop; i++) {
          sent++;
          try {
            const r = await request(shopUrl, { reset: true, headersTimeout: 2000, bodyTimeout: 2000 });
            const body = await r.body.text();
            if (!/^hello from pod shop-/.test(body))
              lost.push(`${phase}: ${r.statusCode} ${body.slice(0, 80)}`);
          } catch (e) {
            lost.push(`${phase}: ${(e as Error).message}`);
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      try {
        const before = (await kubectl('get', 'pods', '-l', 'app=shop', '-o', 'name')).stdout
          .trim()
          .split('\n');
        assert.equal(before.length, 3, 'three shop Pods');
        phase = 'rollout restart';
        await kubectl('rollout', 'restart', 'deploy/shop');
        await kubectl('rollout', 'status', 'deploy/shop', '--timeout=60s');
        phase = 'scale';
        await kubectl('scale', 'deploy/shop', '--replicas=4');
        await kubectl('rollout', 'status', 'deploy/shop', '--timeout=60s');
        phase = 'delete';
        // One Pod deleted, as the banner prints it (every Pod at once is an outage on any cluster
        // once their preStop ends before new ones are ready: docs/rollouts.md).
        // A Pod of the new ReplicaSet: one of the old ones may still be Terminating (its preStop)
        // and gone by the time it is named (a clean-clone run deleted such a one: NotFound).
        const pods = JSON.parse((await kubectl('get', 'pod', '-l', 'app=shop', '-o', 'json')).stdout) as {
          items: { metadata: { name: string; deletionTimestamp?: string } }[];
        };
        const live = pods.items.find((p) => !p.metadata.deletionTimestamp);
        assert.ok(live, 'a shop Pod not terminating');
        const victim = `pod/${live.metadata.name}`;
        await kubectl('delete', victim, '--wait=false');
        await eventually(
          async () => {
            const wide = (await kubectl('get', 'pods', '-l', 'app=shop', '-o', 'wide')).stdout;
            return (wide.match(/ 1\/1 +Running +0 .* 127\.\d\.4\d\.\d+ +node-\d/g) ?? []).length === 4;
          },
          30_000,
          'four shop Pods Running, each on an address of its node',
        );
        // The Pods deleted stay Terminating for their preStop, then go.
        await eventually(
          async () => {
            const after = (await kubectl('get', 'pods', '-l', 'app=shop', '-o', 'name')).stdout;
            return (
              after.trim().split('\n').length === 4 && [...before, victim].every((p) => !after.includes(p))
            );
          },
          15_000,
          'the first three Pods replaced, the deleted one gone',
        );
      } finally {
        stop = true;
        await traffic;
      }
      assert.ok(sent > 50, `traffic flowed throughout (${sent} requests)`);
      assert.deepEqual(lost, [], 'no request lost through the rollout, the scale and the deletions');
      // HAProxy killed: the demo's supervisor starts it again, the controller says so on its own
      // Pod (Warning, then Normal) and counts the restart; traffic is back within seconds.
      process.kill(Number(/HAProxy \(pid (\d+)\)/.exec(out())![1]), 'SIGKILL');
      const server = /server: (http:\/\/\S+)/.exec(readFileSync(join(dir, 'kubeconfig'), 'utf8'))![1]!;
      const said = async (): Promise<string[]> => {
        const list = (await (await fetch(`${server}/api/v1/namespaces/npl-lb-system/events`)).json()) as {
          items: { reason: string; involvedObject: { kind: string; name: string } }[];
        };
        return list.items
          .filter((e) => e.involvedObject.kind === 'Pod' && e.involvedObject.name === 'npl-lb-controller')
          .map((e) => e.reason);
      };
      await eventually(
        async () => {
          const reasons = await said();
          return reasons.includes('LoadBalancerUnreachable') && reasons.includes('LoadBalancerReachable');
        },
        10_000,
        'the outage told on the controller Pod',
      );
      assert.match(await (await fetch(`${dashboard}/metrics`)).text(), /^npl_lb_device_restarts_total 1$/m);
      await eventually(
        async () => {
          try {
            const r = await request(l4, { reset: true, headersTimeout: 1000, bodyTimeout: 1000 });
            return /^hello from pod/.test(await r.body.text());
          } catch {
            return false;
          }
        },
        5000,
        'traffic back after the restart',
      );
    }
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
    assert.equal(existsSync(join(dir, 'kubeconfig')), false, 'kubeconfig removed');
    assert.equal(existsSync(join(dir, 'haproxy')), false, 'HAProxy files removed');
  });

  it('npm start -- --dual-stack: web-dual answers on its IPv4 VIP and on ::1, its IPv6 member the web Pod on node-1', async (t) => {
    const { child, out } = startDemo(t, ['--dual-stack']);
    await eventually(() => /Press Ctrl-C/.test(out()), 150_000, 'demo start');
    assert.doesNotMatch(out(), /not answering yet/, 'every printed URL answers by the banner');
    if (haproxyMissing()) {
      assert.match(out(), /HAProxy is not installed/);
    } else {
      const v4 =
        /curl (http:\/\/127\.\d\.30\.\d+:9080\/) +# LoadBalancer Service web-dual \(RequireDualStack\), IPv4/.exec(
          out(),
        );
      const v6 =
        /curl -g (http:\/\/\[::1\]:9080\/) +# LoadBalancer Service web-dual \(RequireDualStack\), IPv6/.exec(
          out(),
        );
      assert.ok(v4 && v6, out());
      // The banner says each URL answers, not that every member is in its pool yet: on a loaded
      // CI machine the third web Pod's port was mapped after it (2 of 3 seen in six requests).
      const seen = new Set<string>();
      await eventually(
        async () => {
          const body = await (await request(v4[1]!, { reset: true })).body.text();
          seen.add(body.split(' ')[3]!);
          return seen.size === 3;
        },
        15_000,
        'IPv4: the three Pods',
      ).catch(() => undefined); // the assertion below names what was seen
      assert.equal(seen.size, 3, `IPv4: the three Pods: ${[...seen].join(' ')}`);
      for (let i = 0; i < 3; i++) {
        const body = await (await request(v6[1]!, { reset: true })).body.text();
        assert.match(
          body,
          /^hello from pod web-[a-z0-9]+-[a-z0-9]{5} on node-1 \(\[::1\]:9080/,
          'IPv6: the web Pod on node-1, the one Pod with an IPv6 address',
        );
      }
      if (!curlMissing())
        assert.match(
          (await run('sh', ['-c', v6[0]!.replace(/ +#.*$/, '')])).stdout,
          /^hello from pod web-\S+ on node-1/,
        );
      // The state API and `npl-lb pools` show both families.
      const dashboard = /Pools by node: (http:\/\/\S+)\/ \(dashboard\)/.exec(out())![1]!;
      const doc = (await (await fetch(`${dashboard}/api/v1/state`)).json()) as {
        virtualServices: { name: string; vip: string }[];
        pools: { name: string; members: { address: string; node: string }[] }[];
      };
      assert.deepEqual(
        doc.virtualServices
          .filter((v) => v.name.startsWith('demo--default-web-dual-'))
          .map((v) => v.vip.includes(':')),
        [false, true],
      );
      const pool6 = doc.pools.find((p) => p.name === 'demo--default-web-dual-http_v6')!;
      assert.deepEqual(
        pool6.members.map((m) => `${m.address}@${m.node}`),
        ['::1@node-1'],
      );
      const pools = await run(process.execPath, [...CLI, 'pools', '--server', dashboard]);
      assert.match(
        pools.stdout,
        /^node-1 +\[::1\]:\d+ +default\/web-\S+ .* demo--default-web-dual-http_v6 +demo--default-web-dual-TCP-9080_v6 \(\[::1\]:9080\)/m,
      );
    }
    child.kill('SIGTERM');
    assert.equal(await exited(child), 0);
  });
});
