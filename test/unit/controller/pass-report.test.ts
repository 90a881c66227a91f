/**
 * A pass's report on its own (pass-report.ts), without a reconciler: a virtual service still to be
 * created (held by the gates, or failed) gives out no address; once created, the Service's status
 * says its VIP and ports; a refusal becomes an Event on the Service naming the device's reason;
 * a failed create is announced as being ensured first.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import type { LbIngress } from '../../../src/controller/lb-status.ts';
import { PassReporter } from '../../../src/controller/pass-report.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import { nodeSchema, serviceSchema } from '../../../src/kube/objects.ts';
import { byName, plan } from '../../../src/plan/diff.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';

const config = parseControllerConfig(
  'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
);

const view: ClusterView = {
  services: [
    serviceSchema.parse({
      metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '1' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      },
    }),
  ],
  ingresses: [],
  ingressClasses: [],
  nodes: [
    nodeSchema.parse({
      metadata: { name: 'n1', resourceVersion: '1' },
      status: { addresses: [{ type: 'InternalIP', address: '192.0.2.1' }] },
    }),
  ],
  pods: [],
};

function rig() {
  const statuses: { name: string; ingress: LbIngress[] }[] = [];
  const events: { reason: string; message: string; on: string }[] = [];
  const reporter = new PassReporter({
    kubeConfig: new KubeConfig(),
    config,
    adapter: { name: 'memory' },
    events: {
      record: async (t, _type, reason, message) =>
        void events.push({ reason, message, on: `${t.kind} ${t.namespace}/${t.name}` }),
    },
    state: new StateTracker('c1', 'memory'),
    statusWriter: {
      write: async (_k, ns, name, ingress) => void statuses.push({ name: `${ns}/${name}`, ingress }),
    },
  });
  return { reporter, statuses, events };
}

const desired = buildDesired(view, config);
const empty = byName({ owned: { pools: [], virtualServices: [], certificates: [] }, foreign: [] });
const changes = plan(desired.state, empty).changes;
const vs = changes.find((c) => c.kind === 'virtualService')!;
const key = `virtualService/${vs.name}`;
const ok = (c: (typeof changes)[number]): ApplyResult => ({ change: c, ok: true });

describe('a pass as the cluster sees it (PassReporter)', () => {
  it('an address is given out only once its virtual service is on the device', async () => {
    const r = rig();
    // Held by the gates: nothing applied, the virtual service pending.
    await r.reporter.report(view, desired, {
      applied: [],
      conflicts: [],
      pending: new Set(changes.map((c) => `${c.kind}/${c.name}`)),
      unready: [],
      observed: empty,
    });
    assert.ok(
      r.statuses.every((s) => s.ingress.length === 0),
      JSON.stringify(r.statuses),
    );
    // Created: the Service says its VIP and port.
    await r.reporter.report(view, desired, {
      applied: changes.map(ok),
      conflicts: [],
      pending: new Set(),
      unready: [],
      observed: empty,
    });
    const last = r.statuses.at(-1)!;
    assert.equal(last.name, 'default/web');
    assert.match(last.ingress[0]?.ip ?? '', /^192\.0\.2\./);
    assert.deepEqual(last.ingress[0]!.ports, [{ port: 80, protocol: 'TCP' }]);
  });

  it("a refusal is an Event on the Service with the device's reason; a failed create is announced first", async () => {
    const r = rig();
    const refused: ApplyResult = {
      change: vs,
      ok: false,
      error: { code: 'Invalid', message: 'refused by the device', terminal: true },
    };
    await r.reporter.ensuring(view, [vs]);
    await r.reporter.report(view, desired, {
      applied: [...changes.filter((c) => c !== vs).map(ok), refused],
      conflicts: [],
      pending: new Set([key]),
      unready: [],
      observed: empty,
    });
    const reasons = r.events.filter((e) => e.on === 'Service default/web').map((e) => e.reason);
    assert.equal(reasons[0], 'EnsuringLoadBalancer', reasons.join());
    const failed = r.events.find((e) => /refused by the device/.test(e.message));
    assert.ok(failed, JSON.stringify(r.events));
    assert.equal(failed.on, 'Service default/web');
    assert.ok(
      r.statuses.every((s) => s.ingress.length === 0),
      'no address for a refused service',
    );
  });
});
