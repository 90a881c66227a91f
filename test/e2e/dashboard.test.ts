/**
 * The dashboard as an LB admin uses it, in headless Chromium (Debian's, driven by playwright-core),
 * kept live by server-sent events with no reload: members under their nodes with our admin state
 * and the device's health, a member turning from up to down when its backend stops and back, a
 * node's members draining once it is labelled for maintenance, the impact of losing a node, the
 * virtual services needing attention in red, the pool view (the Service a pool stands for, what is
 * in front, a member's down reason written out, the drain share per node), the leader/standby
 * banner, the node filter; and
 * `npl-lb pools` against the same controller. Screenshots are kept in test-artifacts/.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import type { Server } from 'node:net';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { chromium, type Page } from 'playwright-core';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { runPools } from '../../src/main/pools.ts';
import { ErrorCodes, NplError } from '../../src/runtime/errors.ts';
import { EXCLUDE_LABEL } from '../../src/source/maintenance.ts';
import { CHECKOUT } from '../support/cli-process.ts';
import { closeServer, serveController, tcpBackend } from '../support/controller-http.ts';
import { Cluster } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const CHROMIUM = '/usr/bin/chromium';
// The checkout's test-artifacts/ (not the compiled mirror's, which the next npm test remakes).
const ARTIFACTS = `${join(CHECKOUT, 'test-artifacts')}/`;
const NODES: Record<string, string> = { n1: '127.0.60.1', n2: '127.0.60.2', n3: '127.0.60.3' };
const PORT = 46200;

const attr = (page: Page, selector: string, name: string) =>
  page.$$eval(selector, (els, n) => els.map((e) => e.getAttribute(n)), name);

describe('dashboard and npl-lb pools', () => {
  it(
    'shows health live from the device, maintenance, the impact of losing a node and what needs attention; npl-lb pools prints the same',
    { skip: !existsSync(CHROMIUM) && `no ${CHROMIUM} (apt-get install chromium)` },
    async (t) => {
      const { kc } = await useSandbox(t);
      const c = new Cluster(kc);
      const backends = new Map<string, Server>();
      t.after(async () => {
        for (const s of backends.values()) await closeServer(s);
      });
      for (const [name, ip] of Object.entries(NODES)) {
        await c.node(name, { internal: [ip] });
        backends.set(name, await tcpBackend(ip, PORT));
      }
      const ctl = new NplController({
        kubeConfig: kc,
        config: parseControllerConfig(
          'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}\nhealthIntervalSeconds: 1\ndrainSeconds: 60\n',
        ),
        adapter: new MemoryAdapter({ owner: 'c1' }),
        events: { record: async () => {} },
        coalesceMs: 20,
        sweepIntervalMs: 0,
      });
      t.after(() => ctl.stop());
      await ctl.start();
      const url = await serveController(t, ctl, { tickMs: 300 });

      // web: one Pod per node; solo: one Pod, on n1; empty: no Pod at all.
      await c.service('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
      await c.service('solo', {
        type: 'LoadBalancer',
        selector: { app: 'solo' },
        ports: [{ name: 'http', port: 81, targetPort: 8080 }],
      });
      await c.service('empty', {
        type: 'LoadBalancer',
        selector: { app: 'none' },
        ports: [{ name: 'http', port: 82, targetPort: 8080 }],
      });
      const pod = async (name: string, node: string, labels?: Record<string, string>) => {
        await c.pod(name, {
          node,
          ips: ['10.244.0.1'],
          ports: [{ containerPort: 8080 }],
          ...(labels ? { labels } : {}),
        });
        await c.patchPodStatus(name, {
          metadata: {
            annotations: {
              [NPL_POD_ANNOTATION]: JSON.stringify([
                { podPort: 8080, nodeIP: NODES[node], nodePort: PORT, protocol: 'tcp', ipFamily: 'IPv4' },
              ]),
            },
          },
          status: { conditions: [{ type: 'Ready', status: 'True' }] },
        });
      };
      for (const n of ['n1', 'n2', 'n3']) await pod(`web-${n.slice(1)}`, n);
      await pod('solo-1', 'n1', { app: 'solo' });

      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu'],
      });
      t.after(() => browser.close());
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const loads: string[] = [];
      page.on('load', () => loads.push(page.url()));
      await page.goto(url);
      const row = (node: string) => `tr[data-node="${node}"][data-pool="c1--default-web-http"]`;
      for (const n of ['n1', 'n2', 'n3'])
        await page.waitForSelector(`${row(n)}[data-health="up"]`, { timeout: 15_000 });
      assert.equal(await page.textContent('#live'), 'live');

      // What needs attention is first and red, with the reason; the others say ok.
      const vsRows = await page.$$eval('#vss tr[data-vs]', (trs) =>
        trs.map((tr) => [tr.getAttribute('data-vs'), tr.className, tr.getAttribute('data-problem')]),
      );
      assert.deepEqual(vsRows[0], ['c1--default-empty-TCP-82', 'problem', 'no members']);
      assert.deepEqual(
        vsRows.slice(1).map((r) => r[1]),
        ['', ''],
      );

      // The impact of losing n1: web keeps 2 of 3, solo has none left.
      const impact = async (node: string) =>
        page.$$eval(`.impact[data-impact-node="${node}"] tr[data-vs]`, (trs) =>
          Object.fromEntries(
            trs.map((tr) => [
              tr.getAttribute('data-vs'),
              `${tr.getAttribute('data-lose')}/${tr.getAttribute('data-of')}${tr.getAttribute('data-none-left') === 'true' ? ' none left' : ''}`,
            ]),
          ),
        );
      assert.deepEqual(await impact('n1'), {
        'c1--default-solo-TCP-81': '1/1 none left',
        'c1--default-web-TCP-80': '1/3',
      });
      assert.match(
        (await page.textContent('.impact[data-impact-node="n1"]')) ?? '',
        /2 virtual service\(s\) lose members, 1 would have none left/,
      );
      assert.match(
        (await page.textContent('#banner')) ?? '',
        /^Single replica: this controller writes to the load balancer\. Last sync \d{4}-/,
      );
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}dashboard.png`, fullPage: true });

      // n2's backend stops: its member turns down on the open page; losing n1 now costs web 1 of 2.
      await closeServer(backends.get('n2')!);
      await page.waitForSelector(`${row('n2')}[data-health="down"]`, { timeout: 10_000 });
      assert.equal(await page.getAttribute(row('n2'), 'data-state'), 'enabled', 'our intent is unchanged');
      await eventually(
        async () => (await impact('n1'))['c1--default-web-TCP-80'] === '1/2',
        5000,
        'impact follows health',
      );
      // The pool view: the Service it stands for, what is in front, the down reason written out.
      const card = '[data-pool-card="c1--default-web-http"]';
      assert.match((await page.textContent(`${card} h3`)) ?? '', /Service default\/web, port http/);
      assert.match(
        (await page.textContent(`${card} .front`)) ?? '',
        /c1--default-web-TCP-80 \(\S+:80\) for Service default\/web/,
      );
      const poolRow = `${card} tr[data-member-node="n2"]`;
      await page.waitForSelector(`${poolRow}[data-health="down"]`, { timeout: 10_000 });
      // The pool's picture: its VIP, its three nodes, a circle per member coloured by state; n2's
      // member red (down), the other two green (serving), drawn with DOM calls (text as text).
      const picture = `${card} svg[data-picture-of="c1--default-web-http"]`;
      await page.waitForSelector(`${picture} circle[data-member-state="down"]`, { timeout: 10_000 });
      assert.equal((await page.$$(`${picture} rect[data-vip]`)).length, 1);
      assert.deepEqual((await attr(page, `${picture} rect[data-node-box]`, 'data-node-box')).sort(), [
        'n1',
        'n2',
        'n3',
      ]);
      const circles = await page.$$eval(`${picture} circle[data-member]`, (cs) =>
        cs.map((c) => `${c.getAttribute('data-member-state')} ${c.getAttribute('fill')}`).sort(),
      );
      assert.deepEqual(circles, ['down #b3261e', 'serving #17803d', 'serving #17803d']);
      assert.match(
        (await page.textContent(`${picture} title`)) ?? '',
        /c1--default-web-http: VIP, nodes and Pods/,
      );
      // Its last hour, from the controller's memory, newest first: up -> down with the reason,
      // after it was added.
      await eventually(
        async () =>
          /\d\d:\d\d:\d\d health up → down \(\S+/.test(
            (await page.textContent(`${poolRow} td.history`)) ?? '',
          ),
        10_000,
        "the member's history shows it going down",
      );
      assert.match((await page.textContent(`${poolRow} td.history`)) ?? '', /added \(enabled\)$/);
      assert.notEqual(
        ((await page.textContent(`${poolRow} td.reason`)) ?? '').trim(),
        '',
        'the reason, not a tooltip',
      );
      assert.match((await page.textContent(`${card} .drain`)) ?? '', /n1 1 of 3, n2 1 of 3, n3 1 of 3/);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-member-down.png`, fullPage: true });
      // ...and back up, read on demand with the button.
      backends.set('n2', await tcpBackend(NODES.n2!, PORT));
      await page.click('#refresh-health');
      await page.waitForSelector(`${row('n2')}[data-health="up"]`, { timeout: 10_000 });

      // n3 is labelled for maintenance: its member drains (kept for the drain time, 60 s here).
      await c.core.patchNode(
        { name: 'n3', body: { metadata: { labels: { [EXCLUDE_LABEL]: '' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await page.waitForSelector(`${row('n3')}[data-state="draining"]`, { timeout: 5000 });
      assert.deepEqual(await impact('n3'), {}, 'a drained node carries no serving member');
      assert.deepEqual(await impact('n1'), {
        'c1--default-solo-TCP-81': '1/1 none left',
        'c1--default-web-TCP-80': '1/2',
      });

      // The node filter.
      await page.selectOption('#node', 'n2');
      await eventually(async () => (await page.$$('section.node')).length === 1, 5000, 'node filter');
      assert.deepEqual(await attr(page, 'section.node', 'data-node'), ['n2']);
      await page.screenshot({ path: `${ARTIFACTS}dashboard-n2.png`, fullPage: true });

      // A standby says so (no event for it: the stream notices within its tick).
      ctl.state.setLeadership(() => ({
        role: 'standby',
        identity: 'replica-b',
        holder: 'replica-a',
        since: '2026-11-23T05:00:00.000Z',
      }));
      await page.waitForSelector('#banner[data-role="standby"]', { timeout: 5000 });
      assert.match(
        (await page.textContent('#banner')) ?? '',
        /^Standby: this replica does not write to the load balancer\. The leader is replica-a since 2026-11-23T05:00:00\.000Z/,
      );
      assert.equal(loads.length, 1, 'live without a reload');

      // The same from the command line.
      let out = '';
      await runPools(['--server', url], (s) => (out += s));
      assert.match(out, /^standby: this replica does not write; the leader is replica-a/);
      assert.match(out, /\nn3\s+127\.0\.60\.3:46200\s+default\/web-3\s+draining\s+up\s+c1--default-web-http/);
      out = '';
      await runPools(['--server', url, '--node', 'n1', '--impact'], (s) => (out += s));
      assert.match(out, /losing node n1: 2 virtual service\(s\) lose members, 1 would have none left/);
      assert.match(out, /\nc1--default-solo-TCP-81\s+192\.0\.2\.\d+:81\s+1 of 1\s+NONE LEFT\n/);
      out = '';
      await runPools(['--server', url, '--node', 'n1', '-o', 'json'], (s) => (out += s));
      const json = JSON.parse(out) as { node: string; members: { pod: string; health: string }[] }[];
      assert.deepEqual(
        json.map((n) => [n.node, n.members.map((m) => `${m.pod} ${m.health}`).sort()]),
        [['n1', ['default/solo-1 up', 'default/web-1 up']]],
      );
      out = '';
      await runPools(['--server', url, '--failed'], (s) => (out += s));
      assert.match(out, /no virtual service failed to apply\n\nno member failed to apply\n$/);
      await assert.rejects(
        runPools(['--server', url, '--node', 'n9'], () => {}),
        (e: unknown) =>
          e instanceof NplError && e.code === ErrorCodes.UNKNOWN_NODE && /nodes: n1, n2, n3$/.test(e.message),
      );
      await assert.rejects(
        runPools(['--server', 'http://127.0.0.1:9'], () => {}),
        (e: unknown) => e instanceof NplError && e.code === ErrorCodes.STATE_UNAVAILABLE,
      );
    },
  );
});
