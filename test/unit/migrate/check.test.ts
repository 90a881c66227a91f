/**
 * Issue 49: `npl-lb migrate ... --check` holds the produced values against a running cluster's
 * objects: what would change hands (and so move), what npl-lb would serve anew, what would collide
 * (an IngressClass of npl-lb's name owned by another controller, a second default class, a second
 * NodePortLocal agent or none), and it exits 1 when any of that is found. The rules as a table on
 * the pure check, then the command against a sandbox cluster (a real API server's answers, paged),
 * and the faults: objects that do not parse, a cluster that does not answer.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { listAll } from '../../../src/main/migrate-check.ts';
import { checkMigration, type ClusterObjects, renderCheck } from '../../../src/migrate/check.ts';
import { runCli } from '../../support/cli-process.ts';
import { api, useSandbox } from '../../support/sandbox.ts';

const svc = (ns: string, name: string, cls?: string, ip?: string) => ({
  metadata: { name, namespace: ns },
  spec: { type: 'LoadBalancer', ...(cls ? { loadBalancerClass: cls } : {}) },
  ...(ip ? { status: { loadBalancer: { ingress: [{ ip }] } } } : {}),
});
const ing = (ns: string, name: string, cls?: string, ip?: string) => ({
  metadata: { name, namespace: ns },
  spec: cls ? { ingressClassName: cls } : {},
  ...(ip ? { status: { loadBalancer: { ingress: [{ ip }] } } } : {}),
});
const cluster = (over: Partial<ClusterObjects>): ClusterObjects => ({
  services: [],
  ingresses: [],
  ingressClasses: [],
  pods: [{ metadata: { name: 'p', namespace: 'a', annotations: { 'nodeportlocal.antrea.io': '[]' } } }],
  ...over,
});
const kinds = (values: Record<string, unknown>, c: ClusterObjects) =>
  checkMigration({ agent: { enabled: false }, ...values }, c, 'CIS').map((f) => `${f.kind}: ${f.object}`);

describe('migrate --check: the rules', () => {
  it('LoadBalancer Services: by class, and without one only with defaultLoadBalancer', () => {
    const c = cluster({
      services: [
        svc('a', 'served-no-class', undefined, '192.0.2.1'),
        svc('a', 'ours-new', 'npl-lb.io/lb'),
        svc('a', 'cis-class', 'f5.com/bigip', '192.0.2.2'),
      ],
    });
    assert.deepEqual(kinds({ defaultLoadBalancer: false }, c), [
      'stays: Service a/served-no-class',
      'newly served: Service a/ours-new',
      'stays: Service a/cis-class',
    ]);
    assert.deepEqual(kinds({ defaultLoadBalancer: true }, c), [
      'changes hands: Service a/served-no-class',
      'newly served: Service a/ours-new',
      'stays: Service a/cis-class',
    ]);
    // Taking CIS's own class would take its Services.
    assert.deepEqual(
      kinds({ loadBalancerClass: 'f5.com/bigip' }, c).at(-1),
      'changes hands: Service a/cis-class',
    );
    // Namespaces npl-lb does not watch are left out.
    assert.deepEqual(kinds({ defaultLoadBalancer: true, namespaces: { exclude: ['a'] } }, c), []);
  });

  it('Ingresses: by class name or annotation, the default class, and the chart colliding with a class of its name', () => {
    const classes = [
      {
        metadata: { name: 'f5', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
        spec: { controller: 'f5.com/cntr-ingress-svcs' },
      },
    ];
    const c = cluster({
      ingressClasses: classes,
      ingresses: [
        ing('a', 'cis', 'f5', '192.0.2.3'),
        ing('a', 'none', undefined, '192.0.2.4'),
        ing('a', 'ours', 'npl-lb'),
        {
          metadata: {
            name: 'legacy',
            namespace: 'a',
            annotations: { 'kubernetes.io/ingress.class': 'npl-lb' },
          },
          spec: {},
        },
      ],
    });
    assert.deepEqual(kinds({}, c), [
      'stays: Ingress a/cis',
      'stays: Ingress a/none',
      'newly served: Ingress a/ours',
      'newly served: Ingress a/legacy',
    ]);
    // npl-lb as the default class: the Ingress without a class changes hands, and two defaults collide.
    assert.deepEqual(kinds({ ingressClass: { default: true } }, c), [
      'stays: Ingress a/cis',
      'changes hands: Ingress a/none',
      'newly served: Ingress a/ours',
      'newly served: Ingress a/legacy',
      'conflict: IngressClass f5',
    ]);
    // Taking CIS's class name: its Ingress changes hands and the chart's IngressClass collides.
    assert.deepEqual(
      kinds({ ingressClass: { name: 'f5' } }, c).filter((k) => !k.startsWith('stays')),
      ['changes hands: Ingress a/cis', 'changes hands: Ingress a/none', 'conflict: IngressClass f5'],
    );
  });

  it('the NodePortLocal agent: doubled where Antrea annotates Pods, missing where nothing does', () => {
    const antrea = cluster({});
    const none = cluster({ pods: [{ metadata: { name: 'p', namespace: 'a' } }] });
    const agent = (enabled: boolean, c: ClusterObjects) =>
      checkMigration({ agent: { enabled } }, c, 'AKO').map((f) => `${f.kind}: ${f.object}`);
    assert.deepEqual(agent(true, antrea), ['conflict: agent.enabled: true']);
    assert.deepEqual(agent(false, antrea), []);
    assert.deepEqual(agent(false, none), ['conflict: agent.enabled: false']);
    assert.deepEqual(agent(true, none), []);
  });

  it('the report: exit 1 when anything changes hands or collides, values of the wrong type read as the defaults', () => {
    const c = cluster({ services: [svc('a', 'x', undefined, '192.0.2.1')] });
    const safe = renderCheck(
      checkMigration({ agent: { enabled: false } }, c, 'AKO'),
      'AKO values v.yaml',
      'ctx',
    );
    assert.equal(safe.clean, true);
    assert.match(safe.text, /Stay where they are \(1\):\n {2}Service a\/x: no class/);
    const moving = renderCheck(
      checkMigration({ defaultLoadBalancer: true, agent: { enabled: false } }, c, 'AKO'),
      's',
      'ctx',
    );
    assert.equal(moving.clean, false);
    assert.match(moving.text, /AKO serves it at 192\.0\.2\.1 now/);
    // A value of the wrong type is the chart's default, never a crash.
    const odd = checkMigration({ defaultLoadBalancer: 'yes', ingressClass: 7, agent: null }, c, 'AKO');
    assert.deepEqual(
      odd.map((f) => f.kind),
      ['stays', 'conflict'],
    );
  });
});

describe('migrate --check: reading the cluster', () => {
  it('follows every page of a list, skips what does not parse, and names a list that fails', async (t) => {
    const sb = await useSandbox(t);
    for (let i = 0; i < 7; i++)
      await api(sb.url, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `c${i}` } });
    const calls: (string | undefined)[] = [];
    const schema = z.object({ metadata: z.object({ name: z.string() }) });
    const items = await listAll(
      'ConfigMaps',
      schema,
      async (p) => {
        calls.push(p._continue);
        const r = await api(
          sb.url,
          'GET',
          `/api/v1/namespaces/default/configmaps?limit=${p.limit}${p._continue ? `&continue=${encodeURIComponent(p._continue)}` : ''}`,
        );
        const body = r.body as { items: unknown[]; metadata: { continue?: string } };
        // One item that is not an object of the kind (as a broken proxy might give): skipped.
        return { items: [...body.items, { bogus: true }], metadata: { _continue: body.metadata.continue } };
      },
      3,
    );
    assert.deepEqual(items.map((i) => i.metadata.name).sort(), ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6']);
    assert.equal(calls.length, 3, 'three pages of at most three');
    assert.equal(calls[0], undefined);
    await assert.rejects(
      listAll('Pods', schema, () => Promise.reject(new Error('connect ECONNREFUSED\nstack'))),
      /cannot list Pods: connect ECONNREFUSED$/,
    );
  });
});

describe('migrate --check: the command against a cluster', () => {
  it('reads a sandbox cluster, prints what would move and collide, exit 1; a clean one exit 0', async (t) => {
    const sb = await useSandbox(t);
    const post = async (path: string, body: unknown) => {
      const r = await api(sb.url, 'POST', path, body);
      assert.ok(r.status < 300, `${path}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    await post('/api/v1/namespaces', { metadata: { name: 'shop' } });
    await post('/api/v1/namespaces/shop/services', {
      metadata: { name: 'internal' },
      spec: { type: 'ClusterIP', ports: [{ port: 80 }] },
    });
    await post('/api/v1/namespaces/shop/services', {
      metadata: { name: 'web' },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    });
    const status = await api(sb.url, 'PUT', '/api/v1/namespaces/shop/services/web/status', {
      ...(await api(sb.url, 'GET', '/api/v1/namespaces/shop/services/web')).body,
      status: { loadBalancer: { ingress: [{ ip: '192.0.2.10' }] } },
    });
    assert.equal(status.status, 200, JSON.stringify(status.body));
    await post('/apis/networking.k8s.io/v1/ingressclasses', {
      metadata: { name: 'npl-lb' },
      spec: { controller: 'f5.com/cntr-ingress-svcs' },
    });
    const values = join(sb.dir, 'ako.yaml');
    writeFileSync(
      values,
      'AKOSettings: {clusterName: c, layer7Only: false}\nControllerSettings: {controllerHost: avi.example}\n',
    );
    const r = await runCli(['migrate', 'ako', '--check', '--kubeconfig', sb.kubeconfigPath, values]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /Would collide \(1\):\n {2}IngressClass npl-lb: exists with controller f5\.com\/cntr-ingress-svcs/,
    );
    assert.match(r.stdout, /Stay where they are \(1\):\n {2}Service shop\/web: no class/);
    assert.doesNotMatch(r.stdout, /clusterName:/, 'the check prints no values');

    // The class taken away: nothing changes hands or collides, exit 0.
    assert.equal(
      (await api(sb.url, 'DELETE', '/apis/networking.k8s.io/v1/ingressclasses/npl-lb')).status,
      200,
    );
    const clean = await runCli(['migrate', 'ako', `--kubeconfig=${sb.kubeconfigPath}`, '--check', values]);
    assert.equal(clean.code, 0, clean.stderr + clean.stdout);
    assert.match(clean.stdout, /Nothing would change hands or collide/);

    // CIS's flags after --, with --check before them.
    const cis = await runCli([
      'migrate',
      'cis',
      '--check',
      '--kubeconfig',
      sb.kubeconfigPath,
      '--',
      '--bigip-url=https://bigip.example',
      '--bigip-partition=k8s',
      '--pool-member-type=nodeportlocal',
    ]);
    // agent.enabled: false and no Pod annotated here: nothing would give the pools members.
    assert.equal(cis.code, 1, cis.stderr);
    assert.match(cis.stdout, /agent\.enabled: false: no Pod carries a NodePortLocal annotation/);
  });

  it('bad use and a cluster that does not answer: one line each', async (t) => {
    const sb = await useSandbox(t);
    const values = join(sb.dir, 'ako.yaml');
    writeFileSync(values, 'AKOSettings: {clusterName: c}\n');
    const dead = join(sb.dir, 'dead.kubeconfig');
    // A port nothing listens on (the sandbox's own, once it is closed, is not reused this soon).
    writeFileSync(
      dead,
      `apiVersion: v1\nkind: Config\nclusters: [{name: d, cluster: {server: 'http://127.0.0.1:9'}}]\nusers: [{name: d, user: {}}]\ncontexts: [{name: d, context: {cluster: d, user: d}}]\ncurrent-context: d\n`,
    );
    const cases: [string[], number, RegExp][] = [
      [
        ['migrate', 'ako', '--kubeconfig', sb.kubeconfigPath, values],
        2,
        /--kubeconfig names the cluster --check reads/,
      ],
      [['migrate', 'ako', '--check', '-f', values], 2, /--check holds the values of the settings/],
      [['migrate', 'ako', '--check', '--kubeconfig'], 2, /--kubeconfig needs a file/],
      [
        ['migrate', 'ako', '--check', '--kubeconfig', join(sb.dir, 'none'), values],
        1,
        /kubeconfig .* does not exist/,
      ],
      [
        ['migrate', 'ako', '--check', '--kubeconfig', dead, values],
        1,
        /cannot list Services: .*\[NPL_INFORMER_LIST_FAILED\]$/,
      ],
    ];
    for (const [args, code, said] of cases) {
      const r = await runCli(args);
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr.trim(), said);
    }
  });
});
