/**
 * The controller's dashboard in headless Chromium (Debian's, driven by playwright-core) and
 * `npl-lb pools` against the same controller: after a scale-out the page shows the new members
 * under the right nodes, the filters work, and a screenshot is kept in test-artifacts/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { controllerRoutes } from '../../src/controller/http-routes.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { runPools } from '../../src/main/pools.ts';
import { ErrorCodes, NplError } from '../../src/runtime/errors.ts';
import { serveStatus } from '../../src/runtime/status-server.ts';
import { Cluster } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-artifacts/', import.meta.url));
const NODES: Record<string, string> = { n1: '192.0.2.1', n2: '192.0.2.2', n3: '192.0.2.3' };

describe('dashboard and npl-lb pools', () => {
  it(
    'shows members under their nodes, live, with filters; npl-lb pools prints the same',
    {
      skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (apt-get install chromium)`,
    },
    async (t) => {
      const { kc } = await useSandbox(t);
      const c = new Cluster(kc);
      const ctl = new NplController({
        kubeConfig: kc,
        config: parseControllerConfig(
          'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
        ),
        adapter: new MemoryAdapter({ owner: 'c1' }),
        events: { record: async () => {} },
        coalesceMs: 20,
        sweepIntervalMs: 0,
      });
      t.after(() => ctl.stop());
      await ctl.start();
      const routes = controllerRoutes(ctl.state);
      const http = await serveStatus(
        { host: '127.0.0.1', port: 0 },
        ctl.metrics.registry,
        () => ctl.isReady,
        routes.json,
        routes.html,
      );
      t.after(() => http.close());

      // NodePortLocal entries count only when their nodeIP is an address of the Pod's Node.
      for (const [name, ip] of Object.entries(NODES)) await c.node(name, { internal: [ip] });
      await c.service('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
      let port = 61000;
      const pod = async (name: string, node: string) => {
        await c.pod(name, { node, ips: ['10.244.0.1'], ports: [{ containerPort: 8080 }] });
        await c.patchPodStatus(name, {
          metadata: {
            annotations: {
              [NPL_POD_ANNOTATION]: JSON.stringify([
                { podPort: 8080, nodeIP: NODES[node], nodePort: port++, protocol: 'tcp', ipFamily: 'IPv4' },
              ]),
            },
          },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        });
      };
      await pod('web-1', 'n1');

      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu'],
      });
      t.after(() => browser.close());
      const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
      await page.goto(http.url);
      await page.waitForSelector('tr[data-node="n1"][data-member="192.0.2.1:61000"]', { timeout: 10_000 });

      // Scale out: two more Pods on n2 and n3 appear on the open page, under their nodes.
      await pod('web-2', 'n2');
      await pod('web-3', 'n3');
      await page.waitForSelector('section[data-node="n3"] tr[data-member="192.0.2.3:61002"]', {
        timeout: 10_000,
      });
      const rows = await page.$$eval('tr[data-member]', (trs) =>
        trs.map(
          (tr) =>
            `${tr.getAttribute('data-node')} ${tr.getAttribute('data-member')} ${tr.getAttribute('data-state')}`,
        ),
      );
      assert.deepEqual(rows.sort(), [
        'n1 192.0.2.1:61000 enabled',
        'n2 192.0.2.2:61001 enabled',
        'n3 192.0.2.3:61002 enabled',
      ]);
      const n2 = await page.textContent('section[data-node="n2"]');
      assert.match(n2 ?? '', /default\/web-2/);
      assert.match(n2 ?? '', /c1--default-web-TCP-80 \(192\.0\.2\.\d+:80\)/);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}dashboard.png`, fullPage: true });
      assert.ok(existsSync(`${ARTIFACTS}dashboard.png`));
      await page.selectOption('#node', 'n2');
      await eventually(async () => (await page.$$('section.node')).length === 1, 5000, 'node filter');
      assert.equal(await page.getAttribute('section.node', 'data-node'), 'n2');

      // The same from the command line.
      let out = '';
      await runPools(['--server', http.url], (s) => (out += s));
      assert.match(out, /^NODE\s+MEMBER/);
      assert.match(out, /\nn3\s+192\.0\.2\.3:61002\s+default\/web-3\s+enabled\s+c1--default-web-http/);
      out = '';
      await runPools(['--server', http.url, '--node', 'n1', '--output', 'json'], (s) => (out += s));
      const json = JSON.parse(out) as { node: string; members: { pod: string }[] }[];
      assert.deepEqual(
        json.map((n) => [n.node, n.members.map((m) => m.pod)]),
        [['n1', ['default/web-1']]],
      );
      // A standby says so instead of showing an empty table.
      assert.equal(await page.isVisible('#banner'), false, 'no banner on the replica that writes');
      ctl.state.setLeadership(() => ({
        role: 'standby',
        identity: 'replica-b',
        holder: 'replica-a',
        since: '2026-11-23T05:00:00.000Z',
      }));
      await page.waitForSelector('#banner', { state: 'visible', timeout: 5000 });
      assert.match(
        (await page.textContent('#banner')) ?? '',
        /^Standby: this replica does not write to the load balancer\. The leader is replica-a since 2026-11-23T05:00:00\.000Z/,
      );
      await page.screenshot({ path: `${ARTIFACTS}dashboard-standby.png` });
      await assert.rejects(
        runPools(['--server', 'http://127.0.0.1:9'], () => {}),
        (e: unknown) => e instanceof NplError && e.code === ErrorCodes.STATE_UNAVAILABLE,
      );
    },
  );
});
