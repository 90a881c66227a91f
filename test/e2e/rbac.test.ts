/**
 * The chart's RBAC is sufficient and minimal: the agent and the controller run as processes
 * against the sandbox, each with its ServiceAccount's identity; the sandbox records every API
 * request; each request must be allowed by the rules the chart binds to that ServiceAccount, and
 * each rule (group, resource, verb) must be used by some request.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { generate } from 'selfsigned';
import { parseAllDocuments } from 'yaml';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { installNplLbCrds } from '../../src/sandbox/npl-lb-crds.ts';
import type { AuditEntry } from '../../src/sandbox/server.ts';
import { CLI } from '../support/cli-process.ts';
import { Cluster } from '../support/cluster.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join(ROOT, 'deploy/helm/npl-lb');
const NS = 'npl-lb';
const AGENT = `system:serviceaccount:${NS}:r1-npl-lb-agent`;
const CONTROLLER = `system:serviceaccount:${NS}:r1-npl-lb-controller`;

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  /** Namespace of a Role's rule; undefined for a ClusterRole's. */
  namespace?: string;
}
type Doc = {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  data?: Record<string, string>;
  /** A Deployment's, for the controller's arguments as the chart renders them. */
  spec?: { template: { spec: { containers: { args: string[] }[] } } };
};

/** The rules bound to a ServiceAccount user by the rendered chart. */
function rulesOf(docs: Doc[], user: string): Rule[] {
  const [, , ns, name] = user.split(':');
  const out: Rule[] = [];
  for (const b of docs.filter((d) => d.kind === 'ClusterRoleBinding' || d.kind === 'RoleBinding')) {
    if (!b.subjects?.some((s) => s.kind === 'ServiceAccount' && s.name === name && s.namespace === ns))
      continue;
    const role = docs.find((d) => d.kind === b.roleRef!.kind && d.metadata.name === b.roleRef!.name)!;
    for (const r of role.rules ?? [])
      out.push(b.kind === 'RoleBinding' ? { ...r, namespace: b.metadata.namespace! } : r);
  }
  return out;
}

const allows = (r: Rule, e: AuditEntry) =>
  r.apiGroups.includes(e.apiGroup) &&
  r.resources.includes(e.resource) &&
  r.verbs.includes(e.verb) &&
  (r.namespace === undefined || r.namespace === e.namespace);

function start(
  t: TestContext,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; out: () => string } {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, out: () => out };
}

describe('chart RBAC', () => {
  let helm = '';
  before(() => {
    helm = ensureKubeTools().helm;
  });

  it('every request of the agent and the controller is allowed by their rules, and every rule is used', async (t) => {
    const { stdout } = await run(helm, [
      'template',
      'r1',
      CHART,
      '--namespace',
      NS,
      '--set',
      'clusterName=c1',
      '--set',
      'vip.cidrs={192.0.2.0/24}',
      '--set',
      'defaultLoadBalancer=true',
      '--api-versions',
      'gateway.networking.k8s.io/v1/GatewayClass',
    ]);
    const docs = parseAllDocuments(stdout)
      .map((d) => d.toJS() as Doc)
      .filter(Boolean);
    const audit: AuditEntry[] = [];
    const { url, dir } = await useSandbox(t, {
      users: { 'agent-token': AGENT, 'controller-token': CONTROLLER, 'admin-token': 'admin' },
      audit: (e) => audit.push(e),
    });
    const admin = new KubeConfig();
    admin.loadFromString(renderKubeconfig({ server: url, token: 'admin-token' }));
    const c = new Cluster(admin);
    const as = (file: string, token: string) => {
      const p = join(dir, file);
      writeFileSync(p, renderKubeconfig({ server: url, token }));
      return p;
    };
    const H = { Authorization: 'Bearer admin-token' };
    await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: NS } }, H);
    const ingressClass = docs.find((d) => d.kind === 'IngressClass')!;
    await api(url, 'POST', '/apis/networking.k8s.io/v1/ingressclasses', ingressClass, H);
    await installGatewayApi(url, H);
    // The chart's own CRDs (Helm installs crds/ before the templates).
    await installNplLbCrds(url, H);
    assert.ok(
      !docs.some((d) => d.kind === 'GatewayClass'),
      'the controller makes the GatewayClass (its RBAC allows it), not a template gated on the CRDs',
    );
    await c.node('n1', { internal: ['127.0.12.1'] });
    // The chart's MutatingWebhookConfiguration: the controller writes its caBundle.
    const webhookConfig = docs.find((d) => d.kind === 'MutatingWebhookConfiguration')!;
    const made = await api(
      url,
      'POST',
      '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
      webhookConfig,
      H,
    );
    assert.equal(made.status, 201, JSON.stringify(made.body).slice(0, 300));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, docs.find((d) => d.kind === 'ConfigMap')!.data!['config.yaml']!);

    // One port only, so the second Pod makes the agent write a Warning Event.
    const agent = start(t, [
      'agent',
      '--kubeconfig',
      as('agent', 'agent-token'),
      '--node-name',
      'n1',
      '--forwarding',
      'none',
      '--port-range',
      '43000-43000',
      '--http-address',
      '127.0.0.1:0',
      // As the chart runs it: a stopping agent reads its DaemonSet (uninstall cleanup).
      '--cleanup-on-uninstall',
      `${NS}/r1-npl-lb-agent`,
    ]);
    const ctl = start(
      t,
      [
        'controller',
        '--kubeconfig',
        as('controller', 'controller-token'),
        '--config',
        config,
        '--http-address',
        '127.0.0.1:0',
        '--leader-elect',
        'true',
        '--lease-name',
        'r1-npl-lb-controller',
        // As the chart runs it, the readiness gate webhook too (checked every second here).
        ...docs
          .find((d) => d.kind === 'Deployment' && d.metadata.name === 'r1-npl-lb-controller')!
          .spec!.template.spec.containers[0]!.args.filter(
            (a: string) => a.startsWith('--webhook-') && !a.startsWith('--webhook-address'),
          ),
        '--webhook-address',
        '127.0.0.1:0',
        '--webhook-check-seconds',
        '1',
      ],
      { POD_NAMESPACE: NS, POD_NAME: 'r1-npl-lb-controller-0' },
    );

    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    });
    for (const [i, name] of ['web-1', 'web-2'].entries()) {
      await c.pod(name, { node: 'n1', ips: [`10.244.0.${i + 1}`], ports: [{ containerPort: 8080 }] });
      await c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    }
    await api(
      url,
      'POST',
      '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
      {
        metadata: { name: 'ing' },
        spec: {
          ingressClassName: 'npl-lb',
          rules: [
            {
              host: 'a.example',
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: 'web', port: { number: 80 } } },
                  },
                ],
              },
            },
          ],
        },
      },
      H,
    );

    // A BackendPolicy on the Service: read, and its status written.
    const bp = await api(
      url,
      'POST',
      '/apis/npl-lb.io/v1alpha1/namespaces/default/backendpolicies',
      {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'BackendPolicy',
        metadata: { name: 'web' },
        spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], algorithm: 'LeastConnections' },
      },
      H,
    );
    assert.equal(bp.status, 201, JSON.stringify(bp.body));

    // A Gateway and a route on it: their status and the class's are written.
    await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/gateways`,
      {
        metadata: { name: 'gw' },
        spec: {
          gatewayClassName: 'npl-lb',
          listeners: [
            { name: 'http', port: 8080, protocol: 'HTTP' },
            { name: 'tcp', port: 9000, protocol: 'TCP' },
            { name: 'udp', port: 9053, protocol: 'UDP' },
            { name: 'tls', port: 9443, protocol: 'TLS', tls: { mode: 'Passthrough' } },
          ],
          allowedListeners: { namespaces: { from: 'Same' } },
        },
      },
      H,
    );
    // A ListenerSet a team attaches to it: read, and its status written.
    const ls = await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/listenersets`,
      {
        metadata: { name: 'team' },
        spec: {
          parentRef: { name: 'gw' },
          listeners: [{ name: 'team', port: 8081, protocol: 'HTTP', hostname: 'team.example' }],
        },
      },
      H,
    );
    assert.equal(ls.status, 201, JSON.stringify(ls.body).slice(0, 300));
    for (const [resource, section] of [
      ['tcproutes', 'tcp'],
      ['udproutes', 'udp'],
      ['tlsroutes', 'tls'],
    ] as const) {
      const r = await api(
        url,
        'POST',
        `${GW_API}/namespaces/default/${resource}`,
        {
          metadata: { name: `r-${section}` },
          spec: {
            parentRefs: [{ name: 'gw', sectionName: section }],
            ...(section === 'tls' ? { hostnames: ['a.example'] } : {}),
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          },
        },
        H,
      );
      assert.equal(r.status, 201, JSON.stringify(r.body).slice(0, 300));
    }
    await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/httproutes`,
      {
        metadata: { name: 'route' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
      H,
    );
    // A BackendTLSPolicy over a Service a route sends to: read, and its status written.
    await api(
      url,
      'POST',
      '/api/v1/namespaces/default/services',
      {
        metadata: { name: 'secure' },
        spec: { selector: { app: 'secure' }, ports: [{ name: 'https', port: 443 }] },
      },
      H,
    );
    await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/httproutes`,
      {
        metadata: { name: 'secure' },
        spec: {
          parentRefs: [{ name: 'gw' }],
          hostnames: ['secure.example'],
          rules: [{ backendRefs: [{ name: 'secure', port: 443 }] }],
        },
      },
      H,
    );
    const tlsPolicy = await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/backendtlspolicies`,
      {
        metadata: { name: 'secure' },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: 'secure' }],
          validation: { hostname: 'secure.example', wellKnownCACertificates: 'System' },
        },
      },
      H,
    );
    assert.equal(tlsPolicy.status, 201, JSON.stringify(tlsPolicy.body).slice(0, 300));
    await api(
      url,
      'POST',
      `${GW_API}/namespaces/default/grpcroutes`,
      {
        metadata: { name: 'grpc' },
        spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
      },
      H,
    );

    // A gated Pod no Service selects: its readiness gate is patched True (pods/status).
    const gated = await api(
      url,
      'POST',
      '/api/v1/namespaces/default/pods',
      {
        metadata: { name: 'gated', labels: { app: 'nothing' } },
        spec: {
          nodeName: 'n1',
          readinessGates: [{ conditionType: 'npl-lb.io/load-balancer-ready' }],
          containers: [{ name: 'c', image: 'x' }],
        },
      },
      H,
    );
    assert.equal(gated.status, 201, JSON.stringify(gated.body).slice(0, 300));
    // The webhook's certificate made (create), then found due (as another replica would leave it):
    // rotated (update).
    await eventually(
      async () =>
        (await api(url, 'GET', `/api/v1/namespaces/${NS}/secrets/r1-npl-lb-webhook-tls`, undefined, H))
          .status === 200,
      30_000,
      'the webhook certificate Secret',
    );
    const due = await generate([{ name: 'commonName', value: 'due' }], {
      keyType: 'ec',
      notBeforeDate: new Date(Date.now() - 300 * 24 * 3600 * 1000),
      notAfterDate: new Date(Date.now() + 24 * 3600 * 1000),
    });
    const replaced = await api(
      url,
      'PATCH',
      `/api/v1/namespaces/${NS}/secrets/r1-npl-lb-webhook-tls`,
      {
        data: {
          'tls.crt': Buffer.from(due.cert).toString('base64'),
          'tls.key': Buffer.from(due.private).toString('base64'),
        },
      },
      { ...H, 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(replaced.status, 200);

    const rules: Record<string, Rule[]> = {
      [AGENT]: rulesOf(docs, AGENT),
      [CONTROLLER]: rulesOf(docs, CONTROLLER),
    };
    const unused = () =>
      Object.entries(rules).flatMap(([user, list]) =>
        list.flatMap((r) =>
          r.apiGroups.flatMap((g) =>
            r.resources.flatMap((res) =>
              r.verbs
                .filter(
                  (v) =>
                    !audit.some(
                      (e) => e.user === user && e.apiGroup === g && e.resource === res && e.verb === v,
                    ),
                )
                .map((v) => `${user.split(':').pop()}: ${g || 'core'}/${res} ${v}`),
            ),
          ),
        ),
      );
    // The agent reads its DaemonSet only when it stops: stop it once the rest is used.
    await eventually(
      () => unused().every((u) => u.includes('apps/daemonsets')),
      30_000,
      'every rule but the stopping agent’s used',
    ).catch(() => undefined);
    agent.child.kill('SIGTERM');
    await new Promise((r) => (agent.child.exitCode === null ? agent.child.once('exit', r) : r(null)));
    await eventually(() => unused().length === 0, 30_000, 'every rule used').catch(() => {
      assert.fail(
        `rules never used: ${unused().join('; ')}\nagent: ${agent.out().slice(-1500)}\ncontroller: ${ctl.out().slice(-1500)}`,
      );
    });
    const denied = audit
      .filter((e) => e.user === AGENT || e.user === CONTROLLER)
      .filter((e) => !rules[e.user]!.some((r) => allows(r, e)))
      .map(
        (e) =>
          `${e.user.split(':').pop()}: ${e.verb} ${e.apiGroup || 'core'}/${e.resource} ${e.namespace}/${e.name}`,
      );
    assert.deepEqual([...new Set(denied)], [], 'requests outside the rules');
    assert.ok(
      audit.filter((e) => e.user === AGENT).length > 0 &&
        audit.filter((e) => e.user === CONTROLLER).length > 0,
    );
  });
});
