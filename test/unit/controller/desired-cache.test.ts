/**
 * The desired-state cache against its oracle: after any sequence of cluster changes (Pods coming,
 * going, moving, turning ready or not, changing mappings; Services and the Ingress coming and going;
 * a Node's address changing; sweeps), told what changed as the controller tells it, the cache's
 * result equals a full build by the pure assembler, in every member mode. And it reuses what did
 * not change: the virtual services on a Pod-only change, the pool of an untouched Service.
 *
 * Mutations this catches (each tried by hand): reusing a pool whatever `changed` says; a pool
 * signature without the Pods' resourceVersions; the Pod-only fast path taken when the Services
 * list changed; the L4 virtual service reuse ignoring its VIP, or its client filter (a bug it found:
 * the reuse compared five fields by hand, and a Service's loadBalancerSourceRanges lifted alone
 * kept last pass's filtered virtual service); a Service's status change taken as unchanged whatever
 * addresses it shows (the allocation keeps a published VIP: a bug it found), or with an annotation
 * changed beside it; the sweep's build (no Service named) planning only what changed, or keeping
 * the frontends past a certificate's expiry (or building them again before one).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type ControllerConfig, parseControllerConfig } from '../../../src/config/controller-config.ts';
import { DesiredCache } from '../../../src/controller/desired-cache.ts';
import type { Node, Pod, Service } from '../../../src/kube/objects.ts';
import { ingressSchema, tlsSecretSchema } from '../../../src/kube/objects.ts';
import type { L7VirtualService } from '../../../src/model/types.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import type { ClusterView } from '../../../src/source/view.ts';
import {
  clusterView,
  kubeIngress,
  kubeIngressClass,
  kubeNode,
  kubePod,
  kubeService,
  nplAnnotation,
} from '../../support/kube-objects.ts';
import { testCertificate, tlsSecret } from '../../support/certs.ts';

const APPS = ['web', 'api'] as const;
const NODE_IPS = { n1: ['192.0.2.101', '192.0.2.111'], n2: ['192.0.2.102', '192.0.2.112'] } as const;
type NodeName = keyof typeof NODE_IPS;

type Command =
  | {
      kind: 'pod';
      i: number;
      app: (typeof APPS)[number];
      node: NodeName;
      ready: boolean;
      nodePort: number;
      mapped: boolean;
    }
  | { kind: 'podDelete'; i: number }
  | {
      kind: 'service';
      app: (typeof APPS)[number];
      port: number;
      vip: string | null;
      ranges?: readonly string[] | undefined;
    }
  | { kind: 'serviceDelete'; app: (typeof APPS)[number] }
  | { kind: 'serviceStatus'; app: (typeof APPS)[number]; ip: string | null; annotate: boolean }
  | { kind: 'ingress'; on: boolean }
  | { kind: 'nodeAddress'; node: NodeName; alt: boolean }
  | { kind: 'sweep' };

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('pod' as const),
      i: fc.integer({ min: 0, max: 5 }),
      app: fc.constantFrom(...APPS),
      node: fc.constantFrom<NodeName>('n1', 'n2'),
      ready: fc.boolean(),
      nodePort: fc.integer({ min: 61000, max: 61003 }),
      mapped: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('podDelete' as const), i: fc.integer({ min: 0, max: 5 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('service' as const),
      app: fc.constantFrom(...APPS),
      port: fc.constantFrom(80, 8080),
      vip: fc.constantFrom(null, '192.0.2.5', '192.0.2.6'),
      // A client filter that comes, changes and goes with nothing else about the Service changing.
      ranges: fc.constantFrom(undefined, ['10.0.0.0/8'], ['192.0.2.128/25', '10.0.0.0/8']),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('serviceDelete' as const), app: fc.constantFrom(...APPS) }),
  },
  {
    // The controller writes a status: the VIPs the last build gave (`given`), none, or another
    // writer's addresses (the allocation keeps a published VIP); or another writer adds an
    // annotation the sources read. A new object and resourceVersion each time.
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('serviceStatus' as const),
      app: fc.constantFrom(...APPS),
      ip: fc.constantFrom(null, 'given', 'given', '192.0.2.5', '198.51.100.7'),
      annotate: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ingress' as const), on: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('nodeAddress' as const),
      node: fc.constantFrom<NodeName>('n1', 'n2'),
      alt: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sweep' as const) }) },
);

/** The cluster as the controller's cache holds it: a list stays the same object until its kind changes. */
class World {
  private rv = 1;
  pods = new Map<number, Pod>();
  services = new Map<string, Service>();
  nodeAlt: Record<NodeName, boolean> = { n1: false, n2: false };
  ingressOn = false;
  lists: Pick<ClusterView, 'pods' | 'services' | 'nodes' | 'ingresses' | 'ingressClasses'>;
  /** The VIPs the last full build gave each Service (what the controller would publish). */
  given: (key: string) => string[] = () => [];

  constructor() {
    this.lists = {
      pods: [],
      services: [],
      nodes: this.nodes(),
      ingresses: [],
      ingressClasses: [kubeIngressClass('npl')],
    };
  }

  private version = () => String(++this.rv);

  private nodes(): Node[] {
    return (['n1', 'n2'] as const).map((n) =>
      kubeNode(n, NODE_IPS[n][this.nodeAlt[n] ? 1 : 0], { resourceVersion: this.version() }),
    );
  }

  private selecting(app: string | undefined): string[] {
    return app && this.services.has(app) ? [`default/${app}`] : [];
  }

  /** Applies a change; returns what the controller would name as changed (undefined: anything). */
  apply(c: Command): Set<string> | undefined {
    switch (c.kind) {
      case 'pod': {
        const before = this.pods.get(c.i)?.metadata.labels.app;
        const ip = NODE_IPS[c.node][this.nodeAlt[c.node] ? 1 : 0];
        this.pods.set(
          c.i,
          kubePod(`p${c.i}`, {
            labels: { app: c.app },
            node: c.node,
            ready: c.ready,
            ip: `10.244.0.${c.i + 1}`,
            resourceVersion: this.version(),
            ...(c.mapped ? { npl: nplAnnotation([[8080, ip, c.nodePort + c.i * 10]]) } : {}),
          }),
        );
        this.lists = { ...this.lists, pods: [...this.pods.values()] };
        return new Set([...this.selecting(before), ...this.selecting(c.app)]);
      }
      case 'podDelete': {
        const before = this.pods.get(c.i)?.metadata.labels.app;
        this.pods.delete(c.i);
        this.lists = { ...this.lists, pods: [...this.pods.values()] };
        return new Set(this.selecting(before));
      }
      case 'service':
      case 'serviceDelete': {
        if (c.kind === 'service')
          this.services.set(
            c.app,
            kubeService(
              c.app,
              {
                type: 'LoadBalancer',
                loadBalancerClass: 'npl-lb.io/lb',
                selector: { app: c.app },
                ports: [{ name: 'http', port: c.port, targetPort: 'http', nodePort: 30000 + c.port }],
                ...(c.vip ? { loadBalancerIP: c.vip } : {}),
                ...(c.ranges ? { loadBalancerSourceRanges: [...c.ranges] } : {}),
              },
              { resourceVersion: this.version() },
            ),
          );
        else this.services.delete(c.app);
        this.lists = { ...this.lists, services: [...this.services.values()] };
        return new Set([`default/${c.app}`]);
      }
      case 'serviceStatus': {
        const svc = this.services.get(c.app);
        if (!svc) return new Set();
        this.services.set(c.app, {
          ...svc,
          metadata: {
            ...svc.metadata,
            resourceVersion: this.version(),
            // An annotation the sources read: the same Service to them only without it.
            annotations: c.annotate
              ? { ...svc.metadata.annotations, 'npl-lb.io/vip': '192.0.2.9' }
              : svc.metadata.annotations,
          },
          status: {
            loadBalancer: {
              ingress: (c.ip === 'given' ? this.given(`default/${c.app}`) : c.ip ? [c.ip] : []).map((ip) => ({
                ip,
              })),
            },
          },
        });
        this.lists = { ...this.lists, services: [...this.services.values()] };
        return new Set([`default/${c.app}`]);
      }
      case 'ingress':
        this.ingressOn = c.on;
        this.lists = {
          ...this.lists,
          ingresses: c.on
            ? [
                kubeIngress('shop', {
                  className: 'npl',
                  host: 'shop.example.com',
                  service: 'web',
                  port: 'http',
                }),
              ]
            : [],
        };
        return undefined;
      case 'nodeAddress':
        this.nodeAlt = { ...this.nodeAlt, [c.node]: c.alt };
        this.lists = { ...this.lists, nodes: this.nodes() };
        return undefined;
      case 'sweep':
        return undefined;
    }
  }

  view(): ClusterView {
    const byKey = new Map(this.lists.services.map((s) => [`default/${s.metadata.name}`, s]));
    return clusterView({ ...this.lists, serviceByKey: (key) => byKey.get(key) });
  }
}

const configs: ControllerConfig[] = (['NodePortLocal', 'ClusterIP', 'NodePort'] as const).map((mode) =>
  parseControllerConfig(`clusterName: c1\nserviceType: ${mode}\nvip: {cidrs: [192.0.2.0/28]}\n`),
);

describe('the desired-state cache', () => {
  it('equals a full build after any sequence of changes, in every member mode', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...configs),
        fc.array(command, { minLength: 1, maxLength: 40 }),
        (cfg, commands) => {
          const world = new World();
          const cache = new DesiredCache();
          cache.build(world.view(), cfg, SERVE_ALL);
          const givenBy = (r: ReturnType<typeof buildDesired>) => (key: string) => {
            const st = r.services.get(key);
            return [st?.vip, ...(st?.moreVips ?? [])].filter((v): v is string => v !== undefined);
          };
          world.given = givenBy(buildDesired(world.view(), cfg));
          for (const c of commands) {
            const changed = world.apply(c);
            const view = world.view();
            const full = buildDesired(view, cfg);
            // The sweep's pass: the frontends built again, no Service named (sweep-recheck.ts).
            const sweep = c.kind === 'sweep';
            const built = cache.build(view, cfg, SERVE_ALL, sweep ? new Set() : changed, {
              frontends: sweep,
            });
            assert.deepEqual(built, full, JSON.stringify(c));
            world.given = givenBy(full);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reuses what did not change: virtual services on a Pod-only change, the pool of an untouched Service', () => {
    const cfg = configs[0]!;
    const world = new World();
    world.apply({ kind: 'service', app: 'web', port: 80, vip: null });
    world.apply({ kind: 'service', app: 'api', port: 80, vip: null });
    world.apply({ kind: 'pod', i: 0, app: 'web', node: 'n1', ready: true, nodePort: 61000, mapped: true });
    world.apply({ kind: 'pod', i: 1, app: 'api', node: 'n2', ready: true, nodePort: 61000, mapped: true });
    const cache = new DesiredCache();
    const first = cache.build(world.view(), cfg, SERVE_ALL);
    const changed = world.apply({
      kind: 'pod',
      i: 0,
      app: 'web',
      node: 'n1',
      ready: false,
      nodePort: 61001,
      mapped: true,
    });
    assert.deepEqual([...changed!], ['default/web']);
    const next = cache.build(world.view(), cfg, SERVE_ALL, changed);
    assert.equal(next.state.virtualServices, first.state.virtualServices, 'the same list, object and all');
    const pool = (r: typeof first, svc: string) => r.state.pools.find((p) => p.service === svc);
    assert.equal(pool(next, 'default/api'), pool(first, 'default/api'), 'the untouched pool object');
    assert.notEqual(pool(next, 'default/web'), pool(first, 'default/web'));
    assert.equal(pool(next, 'default/web')!.members[0]!.enabled, false);
    // A Service changes: its L4 virtual service is new, the other's is last pass's object.
    const widened = world.apply({ kind: 'service', app: 'web', port: 8080, vip: null });
    const again = cache.build(world.view(), cfg, SERVE_ALL, widened);
    const l4 = (r: typeof first, source: string) =>
      r.state.virtualServices.find((v) => v.kind === 'l4' && v.source === source);
    assert.equal(l4(again, 'default/api'), l4(first, 'default/api'));
    assert.notEqual(l4(again, 'default/web'), l4(first, 'default/web'));
    // The sweep's pass: the frontends built again and everything planned (no delta), the pools
    // kept but those of the Services it names (its slice, sweep-recheck.ts), looked at again.
    const swept = cache.build(world.view(), cfg, SERVE_ALL, new Set(['default/web']), { frontends: true });
    assert.equal(cache.changedPools, undefined, 'everything is planned');
    assert.equal(pool(swept, 'default/api'), pool(again, 'default/api'), 'a pool outside the slice, kept');
    assert.deepEqual(swept, buildDesired(world.view(), cfg));
  });

  it("builds a sweep's frontends again once a certificate they hold has expired, and only then", async () => {
    const cfg = configs[0]!;
    const world = new World();
    world.apply({ kind: 'service', app: 'web', port: 80, vip: null });
    world.apply({ kind: 'pod', i: 0, app: 'web', node: 'n1', ready: true, nodePort: 61000, mapped: true });
    const expiry = Date.now() + 3 * 3600_000;
    const cert = await testCertificate({ dns: ['shop.example.com'], notAfter: new Date(expiry) });
    const raw = tlsSecret('default', 'shop-tls', cert) as { metadata: Record<string, unknown> };
    raw.metadata.resourceVersion = '1';
    raw.metadata.uid = 'uid-shop-tls';
    const base = kubeIngress('shop', {
      className: 'npl',
      host: 'shop.example.com',
      service: 'web',
      port: 'http',
    });
    const ingress = ingressSchema.parse({
      ...base,
      spec: { ...base.spec, tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] },
    });
    const lists = {
      ...world.view(),
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: [ingress],
      secrets: [tlsSecretSchema.parse(raw)],
    };
    const at = (now: number): ClusterView => ({ ...lists, now });
    const https = (r: ReturnType<typeof buildDesired>) =>
      r.state.virtualServices.find((v): v is L7VirtualService => v.kind === 'l7' && v.name.includes('https'));
    const cache = new DesiredCache();
    const first = cache.build(at(expiry - 2 * 3600_000), cfg, SERVE_ALL);
    assert.ok(https(first)?.certificates?.length, 'the HTTPS virtual service holds the certificate');
    // An hour before the expiry: the same frontends, object and all, and everything planned.
    const before = cache.build(at(expiry - 3600_000), cfg, SERVE_ALL, new Set(), { frontends: true });
    assert.equal(before.state.virtualServices, first.state.virtualServices);
    assert.equal(cache.changedPools, undefined, 'the sweep plans everything');
    assert.deepEqual(before, buildDesired(at(expiry - 3600_000), cfg));
    // A second past it: built again, the certificate gone from them, as a full build has it.
    const after = cache.build(at(expiry + 1000), cfg, SERVE_ALL, new Set(), { frontends: true });
    assert.notEqual(after.state.virtualServices, first.state.virtualServices);
    assert.deepEqual(after, buildDesired(at(expiry + 1000), cfg));
    assert.ok(!https(after)?.certificates?.length, 'the expired certificate is served no longer');
  });
});
