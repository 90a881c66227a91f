/**
 * The alert rules (deploy/helm/npl-lb/files/alerts.yaml) and the Grafana dashboard
 * (files/dashboard.json) as promtool and Grafana would hold them: every expression parses with
 * Prometheus's own PromQL grammar, every metric it names is one npl-lb exports (the controller's and
 * the agent's registries, the process metrics beside them), every label it groups or matches by is
 * one those metrics carry or a scrape adds, every alert says how bad and what to do, and the
 * dashboard's panels are laid out without overlap and use only the variables it defines. The
 * checks are held to fail: a misspelt metric, a broken expression and an unknown label are refused.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { AgentMetrics } from '../../../src/agent/metrics.ts';
import { ControllerMetrics } from '../../../src/controller/metrics.ts';

const file = (name: string) =>
  readFileSync(new URL(`../../../deploy/helm/npl-lb/files/${name}`, import.meta.url), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}
const alerts = parse(file('alerts.yaml')) as { groups: { name: string; rules: Rule[] }[] };
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: { expr: string; refId: string }[];
}
const dashboard = JSON.parse(file('dashboard.json')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string }[] };
};

/** Every series name npl-lb exports, with the labels it carries (histograms as Prometheus names them). */
async function exported(): Promise<Map<string, Set<string>>> {
  const out = new Map<string, Set<string>>();
  const controller = new ControllerMetrics(() => 0);
  const agent = new AgentMetrics();
  for (const registry of [controller.registry, agent.registry]) {
    for (const m of await registry.getMetricsAsJSON()) {
      const labels = new Set<string>();
      for (const v of m.values) for (const l of Object.keys(v.labels)) labels.add(l);
      // A metric with no value yet has its declared label names only on the collector.
      for (const l of (registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ??
        [])
        labels.add(l);
      const names =
        m.type.toString() === 'histogram'
          ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`]
          : [m.name];
      for (const n of names) {
        const set = out.get(n) ?? new Set<string>();
        for (const l of labels) if (l !== 'le' || n.endsWith('_bucket')) set.add(l);
        if (n.endsWith('_bucket')) set.add('le');
        out.set(n, set);
      }
    }
  }
  return out;
}

/** What a scrape through the chart's ServiceMonitor adds to every series. */
const TARGET_LABELS = new Set(['namespace', 'pod', 'job', 'instance', 'service', 'container', 'endpoint']);

/** Why an expression is wrong for npl-lb's metrics, or nothing. */
function problems(expr: string, metrics: Map<string, Set<string>>): string[] {
  const tree = parser.parse(expr);
  const out: string[] = [];
  const used: string[] = [];
  const labels: string[] = [];
  tree.iterate({
    enter: (n) => {
      if (n.type.isError)
        out.push(`does not parse at ${n.from}: ${JSON.stringify(expr.slice(n.from, n.from + 20))}`);
      const text = expr.slice(n.from, n.to);
      if (n.name === 'Identifier' && n.node.parent?.name === 'VectorSelector') used.push(text);
      if (n.name === 'LabelName') labels.push(text);
    },
  });
  if (!used.length && !out.length) out.push('names no metric');
  const known = new Set<string>(TARGET_LABELS);
  for (const name of used) {
    const m = metrics.get(name);
    if (!m) out.push(`${name} is not a metric npl-lb exports`);
    else for (const l of m) known.add(l);
  }
  for (const l of labels) if (!known.has(l)) out.push(`label ${l} is on none of ${used.join(', ')}`);
  return out;
}

describe('alert rules and dashboard', () => {
  it("every alert's expression parses and names only what npl-lb exports; each says how bad and why", async () => {
    const metrics = await exported();
    const names = new Set<string>();
    for (const g of alerts.groups)
      for (const r of g.rules) {
        assert.deepEqual(problems(r.expr, metrics), [], r.alert);
        assert.ok(!names.has(r.alert), `${r.alert} twice`);
        names.add(r.alert);
        assert.match(r.alert, /^NplLb[A-Z][A-Za-z]+$/);
        assert.ok(['critical', 'warning'].includes(r.labels.severity), `${r.alert}: severity`);
        assert.ok(r.annotations.summary && r.annotations.description, `${r.alert}: summary and description`);
        if (r.for !== undefined) assert.match(r.for, /^\d+[smh]$/, `${r.alert}: for`);
      }
    // The list: device unreachable, writes failing, gate latency, port exhaustion, no leader.
    for (const a of [
      'NplLbLoadBalancerUnreachable',
      'NplLbApplyErrors',
      'NplLbReadinessGateSlow',
      'NplLbNodePortsExhausted',
      'NplLbNoLeader',
    ])
      assert.ok(names.has(a), a);
  });

  it("every panel's query parses and names only what npl-lb exports; panels do not overlap", async () => {
    const metrics = await exported();
    const vars = new Set(dashboard.templating.list.map((v) => v.name));
    const ids = new Set<number>();
    const cells = new Map<string, string>();
    for (const p of dashboard.panels) {
      assert.ok(!ids.has(p.id), `panel id ${p.id} twice`);
      ids.add(p.id);
      const g = p.gridPos;
      assert.ok(g.x >= 0 && g.w > 0 && g.x + g.w <= 24, `${p.title}: within the 24 columns`);
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          const was = cells.get(`${x},${y}`);
          assert.equal(was, undefined, `${p.title} overlaps ${was}`);
          cells.set(`${x},${y}`, p.title);
        }
      if (p.type === 'row') continue;
      assert.ok(p.targets?.length, `${p.title}: a query`);
      for (const t of p.targets) {
        // Grafana's variables replaced as Grafana would before Prometheus reads the query.
        for (const v of t.expr.matchAll(/\$\{?(\w+)\}?/g)) assert.ok(vars.has(v[1]!), `${p.title}: $${v[1]}`);
        assert.deepEqual(problems(t.expr.replaceAll('$namespace', 'npl-lb'), metrics), [], p.title);
      }
    }
  });

  it('the checks refuse a misspelt metric, a broken expression and a label no metric has', async () => {
    const metrics = await exported();
    assert.deepEqual(problems('npl_lb_device_reachabel == 0', metrics), [
      'npl_lb_device_reachabel is not a metric npl-lb exports',
    ]);
    assert.match(problems('sum by (pod) (rate(npl_lb_leader[5m])', metrics)[0]!, /^does not parse/);
    assert.deepEqual(problems('sum by (tenant) (npl_lb_controller_apply_errors_total)', metrics), [
      'label tenant is on none of npl_lb_controller_apply_errors_total',
    ]);
    assert.deepEqual(
      problems('sum by (kind, code, pod) (npl_lb_controller_apply_errors_total)', metrics),
      [],
    );
  });
});
