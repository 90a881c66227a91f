/**
 * The Helm chart with the real helm v4 and kubectl v1.35: lint; render the defaults and each
 * adapter; every rendered object accepted by the sandbox through `kubectl apply`; the rendered
 * ConfigMap parsed by the controller's own config schema and its adapter settings by the adapter's;
 * bad values refused by values.schema.json with the field named.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse, parseAllDocuments } from 'yaml';
import { makeAdapter } from '../../adapters/index.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { selfSignedCertificate } from '../../src/runtime/tls.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);
const CHART = fileURLToPath(new URL('../../deploy/helm/npl-lb', import.meta.url));

type Doc = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
};

const VARIANTS: Record<string, string[]> = {
  defaults: ['--set', 'clusterName=c1'],
  avi: [
    '--set',
    'clusterName=c1',
    '--set',
    'adapter.type=avi',
    '--set',
    'adapter.avi.url=https://avi.example',
    '--set',
    'adapter.avi.vipNetwork.name=VIP-Network',
    '--set',
    'adapter.avi.vipNetwork.cidr=198.51.100.0/24',
    '--set',
    'adapter.avi.vipNetwork.cidr6=fd00:51::/112',
    '--set',
    'credentials.username=admin',
    '--set',
    'credentials.password=s3cret',
  ],
  // The runtime transport: pinned to the HAProxy node, one replica whatever controller.replicas says.
  haproxy: [
    '--set',
    'clusterName=c1',
    '--set',
    'adapter.type=haproxy',
    '--set',
    'adapter.haproxy.nodeSelector.kubernetes\\.io/hostname=lb-1',
    '--set',
    'adapter.haproxy.socketGroup=994',
  ],
  // Everything optional on: the uninstall hook, the network policy, no RBAC or service accounts
  // made by the chart (bring your own).
  extras: [
    '--set',
    'clusterName=c1',
    '--set',
    'uninstall.deleteConfig=true',
    '--set',
    'networkPolicy.enabled=true',
    '--set',
    'rbac.create=false',
    '--set',
    'controller.serviceAccount.create=false',
    '--set',
    'controller.serviceAccount.name=byo-controller',
  ],
  'haproxy-dataplane': [
    '--set',
    'clusterName=c1',
    '--set',
    'adapter.type=haproxy',
    '--set',
    'adapter.haproxy.transport=dataplane',
    '--set',
    'adapter.haproxy.url=http://haproxy.example:5555',
    '--set',
    'adapter.haproxy.apiVersion=v2',
    '--set',
    'credentials.username=dpapi',
    '--set',
    'credentials.password=s3cret',
  ],
  f5: [
    '--set',
    'clusterName=c1',
    '--set',
    'adapter.type=f5',
    '--set',
    'adapter.f5.url=https://bigip.example',
    '--set',
    'adapter.f5.tenant=k8s_c1',
    '--set',
    'credentials.existingSecret=bigip-creds',
    '--set',
    'agent.enabled=false',
    '--set',
    'controller.replicas=1',
  ],
};

describe('Helm chart', () => {
  let helm = '';
  let kubectl = '';
  before(() => {
    ({ helm, kubectl } = ensureKubeTools());
  });
  const template = async (args: string[]): Promise<Doc[]> => {
    const { stdout } = await run(helm, ['template', 'r1', CHART, '--namespace', 'npl-lb', ...args]);
    return parseAllDocuments(stdout)
      .map((d) => d.toJS() as Doc)
      .filter(Boolean);
  };

  it('helm lint passes with the defaults', async () => {
    const { stdout } = await run(helm, ['lint', CHART, '--strict']);
    assert.match(stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it('npm run chart packages it as npl-lb-<version>.tgz, the version the image carries', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-chart-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { version } = JSON.parse(readFileSync(join(CHART, '../../../package.json'), 'utf8')) as {
      version: string;
    };
    await run(helm, ['package', CHART, '--destination', dir]);
    const tgz = join(dir, `npl-lb-${version}.tgz`);
    const { stdout } = await run(helm, ['show', 'chart', tgz]);
    assert.match(stdout, new RegExp(`^appVersion: "?${version}"?$`, 'm'));
    // The package carries the alert rules and the dashboard the templates read.
    const { stdout: alerts } = await run(helm, [
      'template',
      'r1',
      tgz,
      '--set',
      'clusterName=c1',
      '--set',
      'metrics.prometheusRule.enabled=true',
    ]);
    assert.match(alerts, /alert: NplLbLoadBalancerUnreachable/);
  });

  it('renders the defaults and each adapter; the controller parses the ConfigMap it renders', async () => {
    for (const [variant, args] of Object.entries(VARIANTS)) {
      const docs = await template(args);
      const kinds = docs.map((d) => d.kind).sort();
      const want = [
        'ClusterRole',
        'ClusterRoleBinding',
        'ConfigMap',
        'Deployment',
        'IngressClass',
        'Role',
        'RoleBinding',
        'ServiceAccount',
      ];
      const byo = variant === 'extras';
      for (const k of want) {
        const expected = !(byo && /Role|ServiceAccount/.test(k)) || (k === 'ServiceAccount' && byo);
        assert.equal(kinds.includes(k), expected, `${variant}: ${k}`);
      }
      assert.equal(kinds.includes('DaemonSet'), variant !== 'f5', `${variant}: agent DaemonSet`);
      const type = variant === 'defaults' || variant === 'extras' ? 'memory' : variant.split('-')[0]!;
      const replicas = variant === 'f5' || variant === 'haproxy' ? 1 : 2;
      if (variant === 'haproxy') {
        const d = docs.find((x) => x.kind === 'Deployment') as unknown as {
          spec: {
            replicas: number;
            strategy: { type: string };
            template: {
              spec: {
                nodeSelector: Record<string, string>;
                securityContext: { supplementalGroups: number[] };
              };
            };
          };
        };
        assert.equal(d.spec.replicas, 1, 'one replica beside its HAProxy');
        assert.equal(d.spec.strategy.type, 'Recreate');
        assert.deepEqual(d.spec.template.spec.nodeSelector, { 'kubernetes.io/hostname': 'lb-1' });
        assert.deepEqual(d.spec.template.spec.securityContext.supplementalGroups, [994]);
      }
      if (variant === 'extras') {
        const job = docs.find((x) => x.kind === 'Job') as unknown as {
          metadata: { annotations: Record<string, string> };
          spec: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } };
        };
        assert.equal(job.metadata.annotations['helm.sh/hook'], 'pre-delete');
        assert.equal(job.spec.template.spec.serviceAccountName, 'byo-controller');
        const args = job.spec.template.spec.containers[0]!.args;
        for (const a of ['--delete-config=true', '--once', '--scale-down=npl-lb/r1-npl-lb-controller'])
          assert.ok(args.includes(a), a);
        assert.ok(kinds.includes('NetworkPolicy'));
      } else assert.ok(!kinds.includes('Job'), `${variant}: no uninstall hook unless asked`);
      if (variant !== 'f5') {
        const ds = docs.find((x) => x.kind === 'DaemonSet') as unknown as {
          spec: { template: { spec: { containers: { args: string[] }[] } } };
        };
        const args = ds.spec.template.spec.containers[0]!.args;
        assert.ok(args.includes('--http-address=$(NODE_IP):8081'), 'the agent listens on the node IP only');
        assert.ok(args.includes('--cleanup-on-uninstall=npl-lb/r1-npl-lb-agent'));
      }
      assert.equal(kinds.includes('PodDisruptionBudget'), replicas > 1, `${variant}: PDB with 2 replicas`);
      if (type === 'haproxy') {
        const d = docs.find((x) => x.kind === 'Deployment') as unknown as {
          spec: { template: { spec: { volumes: { name: string }[] } } };
        };
        assert.equal(
          d.spec.template.spec.volumes.some((v) => v.name === 'haproxy'),
          variant === 'haproxy',
          'the HAProxy directory is mounted for the runtime transport only',
        );
      }
      assert.equal(
        kinds.includes('Secret'),
        variant === 'avi' || variant === 'haproxy-dataplane',
        `${variant}: a Secret only when the chart makes one`,
      );
      const cm = docs.find((d) => d.kind === 'ConfigMap')!;
      const config = parseControllerConfig(cm.data!['config.yaml']!, `${variant} ConfigMap`);
      assert.equal(config.clusterName, 'c1');
      assert.deepEqual(
        [config.drainCordonedNodes, config.drainSeconds, config.healthIntervalSeconds],
        [true, 30, 10],
      );
      assert.equal(config.adapter.type, type);
      if (variant === 'haproxy-dataplane') {
        assert.deepEqual(
          [config.adapter.transport, config.adapter.url, config.adapter.apiVersion, config.adapter.slots],
          ['dataplane', 'http://haproxy.example:5555', 'v2', 10],
        );
      }
      // The adapter takes the rendered settings (credentials come from the Secret through env).
      const adapter = makeAdapter({
        owner: config.clusterName,
        settings: config.adapter,
        env: {
          NPL_LB_AVI_USERNAME: 'u',
          NPL_LB_AVI_PASSWORD: 'p',
          NPL_LB_F5_USERNAME: 'u',
          NPL_LB_F5_PASSWORD: 'p',
          NPL_LB_HAPROXY_USERNAME: 'u',
          NPL_LB_HAPROXY_PASSWORD: 'p',
        },
      });
      await adapter.close();
      const deploy = docs.find((d) => d.kind === 'Deployment') as unknown as {
        spec: { template: { spec: { containers: { args: string[]; env: { name: string }[] }[] } } };
      };
      const container = deploy.spec.template.spec.containers[0]!;
      if (variant === 'avi' || variant === 'f5' || variant === 'haproxy-dataplane') {
        const vendor = type.toUpperCase();
        assert.deepEqual(
          container.env.map((e) => e.name).filter((n) => n.startsWith('NPL_LB_')),
          [`NPL_LB_${vendor}_USERNAME`, `NPL_LB_${vendor}_PASSWORD`],
        );
      }
      assert.ok(container.args.includes('--leader-elect=' + (replicas > 1 ? 'true' : 'false')));
    }
  });

  it('every rendered object is accepted by the sandbox through kubectl apply', async (t) => {
    const { kubeconfigPath, dir } = await useSandbox(t);
    const kc = (args: string[]) => run(kubectl, ['--kubeconfig', kubeconfigPath, ...args]);
    // (kubectl create namespace sends protobuf, which the sandbox does not speak; apply sends JSON.)
    writeFileSync(join(dir, 'ns.yaml'), 'apiVersion: v1\nkind: Namespace\nmetadata: {name: npl-lb}\n');
    await kc(['apply', '-f', join(dir, 'ns.yaml')]);
    for (const [variant, args] of Object.entries(VARIANTS)) {
      const { stdout: rendered } = await run(helm, [
        'template',
        'r1',
        CHART,
        '--namespace',
        'npl-lb',
        ...args,
      ]);
      const file = join(dir, `${variant}.yaml`);
      writeFileSync(file, rendered);
      const { stdout } = await kc(['apply', '-f', file]);
      const docs = parseAllDocuments(rendered)
        .map((d) => d.toJS() as Doc)
        .filter(Boolean);
      const lines = stdout.trim().split('\n');
      assert.equal(lines.length, docs.length, `${variant}: one line per object\n${stdout}`);
      for (const l of lines) assert.match(l, / (created|configured|unchanged)$/, `${variant}: ${l}`);
    }
    const { stdout } = await kc(['-n', 'npl-lb', 'get', 'deploy,ds,cm,sa,pdb', '-o', 'name']);
    for (const o of [
      'deployment.apps/r1-npl-lb-controller',
      'daemonset.apps/r1-npl-lb-agent',
      'configmap/r1-npl-lb-controller',
      'serviceaccount/r1-npl-lb-agent',
      'poddisruptionbudget.policy/r1-npl-lb-controller',
    ]) {
      assert.ok(stdout.includes(o), `${o} in\n${stdout}`);
    }
  });

  it('the agent (root, NET_ADMIN) runs only where members are NodePortLocal mappings', async () => {
    for (const serviceType of ['NodePort', 'ClusterIP']) {
      const kinds = (await template(['--set', 'clusterName=c1', '--set', `serviceType=${serviceType}`])).map(
        (d) => `${d.kind}/${(d.metadata as { name: string }).name}`,
      );
      assert.ok(
        !kinds.some((k) => k.includes('agent')),
        `${serviceType}: ${kinds.filter((k) => k.includes('agent')).join(', ')}`,
      );
    }
    const npl = (await template(['--set', 'clusterName=c1'])).map((d) => d.kind);
    assert.ok(npl.includes('DaemonSet'));
    assert.ok(
      (await template(['--set', 'clusterName=c1', '--set', 'vip.cidrs={10.0.100.0/24,192.168.0.0/16}']))
        .length > 0,
    );
    // IPv6 and dual-stack ranges (the comma inside --set lists is the list's).
    assert.ok(
      (await template(['--set', 'clusterName=c1', '--set', 'vip.cidrs={10.0.100.0/24,fd00:10::/112}']))
        .length > 0,
    );
  });

  it('privileges as docs/security.md states them: the controller restricted, the agent NET_ADMIN only for iptables', async () => {
    type Container = {
      securityContext: Record<string, unknown> & { capabilities?: { add?: string[]; drop?: string[] } };
      volumeMounts?: { mountPath: string }[];
    };
    type Workload = Doc & {
      spec: {
        template: {
          spec: {
            hostNetwork?: boolean;
            securityContext: Record<string, unknown>;
            containers: Container[];
            volumes?: { hostPath?: { path: string } }[];
          };
        };
      };
    };
    const pod = (docs: Doc[], kind: string) =>
      (docs.find((d) => d.kind === kind) as Workload).spec.template.spec;
    const restricted = (c: Container) => {
      assert.equal(c.securityContext.allowPrivilegeEscalation, false);
      assert.equal(c.securityContext.readOnlyRootFilesystem, true);
      assert.deepEqual(c.securityContext.capabilities?.drop, ['ALL']);
    };
    const docs = await template(['--set', 'clusterName=c1']);
    const controller = pod(docs, 'Deployment');
    assert.equal(controller.hostNetwork, undefined);
    assert.deepEqual(
      [controller.securityContext.runAsNonRoot, controller.securityContext.runAsUser],
      [true, 65532],
    );
    assert.deepEqual(controller.securityContext.seccompProfile, { type: 'RuntimeDefault' });
    for (const c of controller.containers) restricted(c);
    const agent = pod(docs, 'DaemonSet');
    assert.equal(agent.hostNetwork, true);
    restricted(agent.containers[0]!);
    assert.deepEqual(agent.containers[0]!.securityContext.capabilities?.add, ['NET_ADMIN']);
    assert.equal(agent.containers[0]!.securityContext.runAsUser, 0);
    assert.deepEqual(
      (agent.volumes ?? []).map((v) => v.hostPath?.path),
      ['/run/xtables.lock'],
      'the one host path: the xtables lock',
    );
    const userspace = pod(
      await template(['--set', 'clusterName=c1', '--set', 'agent.forwarding=userspace']),
      'DaemonSet',
    );
    restricted(userspace.containers[0]!);
    assert.equal(userspace.containers[0]!.securityContext.capabilities?.add, undefined);
    assert.equal(userspace.containers[0]!.securityContext.runAsUser, undefined);
    assert.equal(userspace.volumes, undefined);
    // OpenShift: the UID left to the SCC, as the doc says to set it.
    const openshift = pod(
      await template([
        '--set',
        'clusterName=c1',
        '--set',
        'controller.podSecurityContext.runAsUser=null',
        '--set',
        'controller.podSecurityContext.runAsGroup=null',
      ]),
      'Deployment',
    );
    assert.equal(openshift.securityContext.runAsUser, undefined);
    assert.equal(openshift.securityContext.runAsNonRoot, true);
  });

  it('values.schema.json refuses bad values, naming the field; a missing clusterName is refused', async () => {
    /** helm template's error output for these --set values (it must fail). */
    const refusal = async (...sets: string[]) => {
      const r = await run(helm, ['template', 'r1', CHART, ...sets.flatMap((x) => ['--set', x])]).then(
        () => assert.fail(`helm template accepted ${sets.join(' ')}`),
        (e: { stderr: string }) => e,
      );
      return r.stderr;
    };
    assert.match(await refusal('clusterName=c1', 'serviceType=Bogus'), /serviceType/);
    assert.match(await refusal('clusterName=c1', 'adapter.type=f5'), /url/);
    assert.match(
      await refusal('clusterName=c1', 'adapter.type=haproxy', 'adapter.haproxy.transport=dataplane'),
      /url/,
    );
    assert.match(await refusal('clusterName='), /clusterName/);
    // A CIDR the controller would refuse at start is refused at install.
    for (const cidr of [
      '10.0.100.0/33',
      '10.0.300.0/24',
      '10.0.100.0',
      'fd00::/129',
      'fd00:::1/64',
      'fd00::',
    ])
      assert.match(await refusal('clusterName=c1', `vip.cidrs={${cidr}}`), /cidrs/, cidr);
    assert.match(
      await refusal('adapter.type=haproxy'),
      /adapter\.haproxy\.nodeSelector is required for the runtime transport/,
    );
  });

  it('renders as a subchart of an umbrella chart (global values allowed) and with a ServiceMonitor', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-umbrella-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    mkdirSync(join(dir, 'charts'));
    mkdirSync(join(dir, 'templates'));
    cpSync(CHART, join(dir, 'charts', 'npl-lb'), { recursive: true });
    writeFileSync(
      join(dir, 'Chart.yaml'),
      'apiVersion: v2\nname: platform\nversion: 1.0.0\ndependencies:\n  - name: npl-lb\n    version: 0.1.0\n',
    );
    writeFileSync(
      join(dir, 'values.yaml'),
      'global:\n  imageRegistry: registry.example\nnpl-lb:\n  clusterName: prod-1\n  metrics:\n    serviceMonitor: {enabled: true}\n',
    );
    const { stdout: lint } = await run(helm, ['lint', dir, '--strict']);
    assert.match(lint, /0 chart\(s\) failed/);
    const { stdout } = await run(helm, ['template', 'p1', dir, '--namespace', 'platform']);
    const docs = parseAllDocuments(stdout)
      .map((d) => d.toJS() as Doc)
      .filter(Boolean);
    const cm = docs.find((d) => d.kind === 'ConfigMap')!;
    assert.equal(parseControllerConfig(cm.data!['config.yaml']!).clusterName, 'prod-1');
    assert.deepEqual(
      docs.filter((d) => d.kind === 'ServiceMonitor').map((d) => d.metadata.name),
      ['p1-npl-lb-controller', 'p1-npl-lb-agent'],
    );
  });

  it('ships the alert rules and the Grafana dashboard when asked: the files as they are, with the labels given', async () => {
    assert.deepEqual(
      (await template(['--set', 'clusterName=c1']))
        .filter((d) => ['PrometheusRule', 'ConfigMap'].includes(d.kind))
        .map((d) => d.kind),
      ['ConfigMap'],
      'off by default',
    );
    const docs = await template([
      '--set',
      'clusterName=c1',
      '--set',
      'metrics.prometheusRule.enabled=true',
      '--set',
      'metrics.prometheusRule.labels.release=kube-prometheus-stack',
      '--set',
      'metrics.grafanaDashboard.enabled=true',
      '--set',
      'metrics.grafanaDashboard.namespace=monitoring',
    ]);
    const rule = docs.find((d) => d.kind === 'PrometheusRule') as Doc & {
      spec: { groups: unknown[] };
      metadata: { labels: Record<string, string> };
    };
    assert.equal(rule.metadata.labels.release, 'kube-prometheus-stack');
    const alerts = parse(readFileSync(join(CHART, 'files/alerts.yaml'), 'utf8')) as { groups: unknown[] };
    assert.deepEqual(rule.spec.groups, alerts.groups, 'the rule file, every group and rule');
    const dashboard = docs.find(
      (d) => d.kind === 'ConfigMap' && d.metadata.name === 'r1-npl-lb-dashboard',
    ) as Doc & {
      metadata: { labels: Record<string, string> };
    };
    assert.equal(dashboard.metadata.namespace, 'monitoring');
    assert.equal(dashboard.metadata.labels.grafana_dashboard, '1');
    assert.deepEqual(
      JSON.parse(dashboard.data!['npl-lb.json']!),
      JSON.parse(readFileSync(join(CHART, 'files/dashboard.json'), 'utf8')),
    );
    await assert.rejects(
      template(['--set', 'clusterName=c1', '--set', 'metrics.prometheusRule.enable=true']),
      /prometheusRule.*enable/s,
      'a misspelt key is refused by the values schema',
    );
  });

  it('a private CA (caBundle) ships in the ConfigMap and the adapter reads it as caFile', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-cabundle-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const pem = (await selfSignedCertificate('127.0.0.1')).cert;
    writeFileSync(join(dir, 'ca.pem'), pem);
    const docs = await template([
      '--set',
      'adapter.type=f5',
      '--set',
      'adapter.f5.url=https://bigip.example',
      '--set',
      'credentials.existingSecret=bigip',
      '--set-file',
      `adapter.f5.caBundle=${join(dir, 'ca.pem')}`,
    ]);
    const cm = docs.find((d) => d.kind === 'ConfigMap')!;
    assert.equal(cm.data!['ca.pem']!.trim(), pem.trim());
    const config = parseControllerConfig(cm.data!['config.yaml']!);
    assert.equal(config.adapter.caFile, '/etc/npl-lb/ca.pem', 'mounted with the configuration');
  });

  it('loadBalancerClasses: rendered into the configuration as given; a class that is not domain/name refused at install', async () => {
    const docs = await template([
      '--set',
      'loadBalancerClasses[0].name=example.com/team-a',
      '--set',
      'loadBalancerClasses[0].parameters.namespace=infra',
      '--set',
      'loadBalancerClasses[0].parameters.name=team-a',
    ]);
    const cm = docs.find((d) => d.kind === 'ConfigMap')!;
    assert.deepEqual(parseControllerConfig(cm.data!['config.yaml']!).loadBalancerClasses, [
      { name: 'example.com/team-a', parameters: { namespace: 'infra', name: 'team-a' } },
    ]);
    await assert.rejects(
      template([
        '--set',
        'loadBalancerClasses[0].name=team-a',
        '--set',
        'loadBalancerClasses[0].parameters.namespace=infra',
        '--set',
        'loadBalancerClasses[0].parameters.name=team-a',
      ]),
      /loadBalancerClasses/,
    );
  });

  it('NOTES: forward to the leader when there are several replicas; an empty VIP range without IPAM is warned of', async () => {
    const notes = async (...sets: string[]) => {
      const { stdout } = await run(helm, [
        'install',
        'r1',
        CHART,
        '--dry-run=client',
        '--namespace',
        'npl-lb',
        '--set',
        'clusterName=c1',
        ...sets.flatMap((x) => ['--set', x]),
      ]);
      return stdout.slice(stdout.indexOf('NOTES:'));
    };
    const two = await notes();
    assert.match(two, /get lease r1-npl-lb-controller -o jsonpath='\{\.spec\.holderIdentity\}'/);
    assert.match(two, /port-forward pod\/\$POD 8080/);
    assert.match(
      two,
      /WARNING: vip\.cidrs is empty: .*\n.*every LoadBalancer Service, IngressClass and Gateway stays pending/,
    );
    const one = await notes('controller.replicas=1', 'vip.cidrs={10.0.0.0/24}');
    assert.match(one, /port-forward deploy\/r1-npl-lb-controller 8080/);
    assert.doesNotMatch(one, /WARNING/);
    const ipam = await notes(
      'adapter.type=avi',
      'adapter.avi.url=https://avi.example',
      'adapter.avi.vipNetwork.name=vip',
      'adapter.avi.vipNetwork.cidr=198.51.100.0/24',
      'credentials.username=u',
      'credentials.password=p',
    );
    assert.doesNotMatch(ipam, /WARNING/, "Avi's IPAM allocates: no range needed");
  });
});
