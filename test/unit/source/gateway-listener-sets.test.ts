/**
 * ListenerSets (GEP-1713, issue 48 item 4): attached only where the Gateway allows them (None by
 * default, Same, All, a namespace Selector), judged as a Gateway's listeners are with their own
 * namespace and grants, merged after the Gateway's own in precedence order (the Gateway, the oldest
 * set, then namespace/name) where a later listener that conflicts is not accepted; routes reach a
 * set's listeners through a parentRef to the set only, and the Gateway's VIP serves both. Across
 * changes: the older set deleted, the newer one takes the port; the Gateway's permission removed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { GatewayStatusWriter, type StatusSink } from '../../../src/controller/gateway-status.ts';
import { gatewaySchema, type Gateway } from '../../../src/kube/gateway-objects.ts';
import { type ListenerSet, listenerSetSchema } from '../../../src/kube/listener-set-objects.ts';
import { MAX_GATEWAY_LISTENERS } from '../../../src/source/gateway/listener-sets.ts';
import type { ResourceRef } from '../../../src/kube/paths.ts';
import type { L7VirtualService } from '../../../src/model/types.ts';
import { servicesToAnnotate } from '../../../src/source/annotated-services.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';
import { testCertificate } from '../../support/certs.ts';
import { schemaLeaves } from './schema-leaves.ts';
import {
  APP,
  baseView,
  grant,
  INFRA,
  listenerConditions,
  parentConditions,
  pass,
  pool,
  route,
  vsOf,
  type World,
} from './gateway-support.ts';

const GW = `${INFRA}/shared`;

function gateway(allowed?: Record<string, unknown>, listeners?: Record<string, unknown>[]): Gateway {
  return gatewaySchema.parse({
    metadata: { namespace: INFRA, name: 'shared', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      gatewayClassName: 'npl-lb',
      listeners: listeners ?? [
        {
          name: 'web',
          port: 80,
          protocol: 'HTTP',
          hostname: 'gw.example.com',
          allowedRoutes: { namespaces: { from: 'All' } },
        },
      ],
      ...(allowed ? { allowedListeners: { namespaces: allowed } } : {}),
    },
  });
}

let stamp = 0;
function listenerSet(
  namespace: string,
  name: string,
  listeners: Record<string, unknown>[],
  extra: { created?: string; parentRef?: Record<string, unknown> } = {},
): ListenerSet {
  stamp++;
  return listenerSetSchema.parse({
    metadata: {
      namespace,
      name,
      generation: 1,
      creationTimestamp: extra.created ?? `2026-01-02T00:00:${String(stamp % 60).padStart(2, '0')}Z`,
    },
    spec: {
      parentRef: extra.parentRef ?? {
        kind: 'Gateway',
        group: 'gateway.networking.k8s.io',
        name: 'shared',
        namespace: INFRA,
      },
      listeners,
    },
  });
}

const http = (name: string, hostname: string, port = 80) => ({
  name,
  port,
  protocol: 'HTTP',
  hostname,
  allowedRoutes: { namespaces: { from: 'All' } },
});

const setConditions = (r: ReturnType<typeof pass>, key: string) =>
  (r.listenerSets?.get(key)?.conditions ?? []).map(
    (c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`,
  );
const setListener = (r: ReturnType<typeof pass>, key: string, listener: string) =>
  (r.listenerSets?.get(key)?.listeners.find((l) => l.name === listener)?.conditions ?? []).map(
    (c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`,
  );
const hosts = (r: ReturnType<typeof pass>) =>
  [...new Set((vsOf(r, GW)?.routes ?? []).map((x) => x.host))].sort();

/** A route to the set (`kind: ListenerSet`) or to the Gateway, sending to infra-backend-v1. */
const routeTo = (name: string, parentRefs: Record<string, unknown>[], namespace = INFRA) =>
  route(namespace, name, {
    parentRefs,
    rules: [{ backendRefs: [{ name: 'infra-backend-v1', namespace: INFRA, port: 8080 }] }],
  });
const toSet = (name: string, extra: Record<string, unknown> = {}) => ({
  kind: 'ListenerSet',
  group: 'gateway.networking.k8s.io',
  name,
  namespace: INFRA,
  ...extra,
});
const toGateway = (extra: Record<string, unknown> = {}) => ({ name: 'shared', namespace: INFRA, ...extra });

const world = (w: World): World => ({ labels: { [APP]: { team: 'app' } }, ...w });

/** What npl-lb does with each field of a ListenerSet (by path prefix), checked here or where named. */
const LISTENER_SET_FIELDS: Record<string, string> = {
  'spec.parentRef': 'served: a Gateway of ours (group and kind checked); any other parent is not ours',
  'spec.listeners[].name': 'served: listener status by name; a route’s sectionName to the set',
  'spec.listeners[].port': 'served: on the Gateway’s VIP; conflicts by precedence (below)',
  'spec.listeners[].protocol': 'served as a Gateway listener’s, or refused as UnsupportedProtocol (below)',
  'spec.listeners[].hostname': 'served: attachment, isolation and conflicts (below)',
  'spec.listeners[].allowedRoutes':
    'served: kinds and namespaces, Same meaning the set’s namespace (below; conformance)',
  'spec.listeners[].tls.certificateRefs[]': 'served: the set’s namespace and its own ReferenceGrants (below)',
  'spec.listeners[].tls.mode': 'served as a Gateway listener’s: Passthrough; Terminate on TLS refused',
  'spec.listeners[].tls.options':
    'refused: UnsupportedValue naming the options (listeners.ts, as a Gateway’s)',
};

describe('ListenerSets attach where the Gateway allows them', () => {
  it('every leaf of the v1.6.1 ListenerSet schema says what npl-lb does with it', () => {
    const leaves = schemaLeaves('ListenerSet');
    assert.ok(leaves.length > 15, `${leaves.length} leaves`);
    const said = (leaf: string) =>
      Object.keys(LISTENER_SET_FIELDS).some(
        (p) => leaf === p || leaf.startsWith(`${p}.`) || leaf.startsWith(`${p}[`),
      );
    assert.deepEqual(
      leaves.filter((l) => !said(l)),
      [],
      'fields nobody said what npl-lb does with',
    );
    assert.deepEqual(
      Object.keys(LISTENER_SET_FIELDS).filter((p) => !leaves.some((l) => l === p || l.startsWith(p))),
      [],
      'entries naming fields the schema lacks',
    );
  });

  it('none by default: NotAllowed, not counted, nothing served, a route to it not accepted', () => {
    const ls = listenerSet(INFRA, 'team', [http('one', 'team.example.com')]);
    const r = pass(
      world({ gateways: [gateway()], listenerSets: [ls], routes: [routeTo('r', [toSet('team')])] }),
    );
    assert.deepEqual(setConditions(r, `${INFRA}/team`), [
      'Accepted=False/NotAllowed',
      'Programmed=False/NotAllowed',
    ]);
    assert.equal(r.gateways.get(GW)?.attachedListenerSets, 0);
    assert.deepEqual(parentConditions(r, `${INFRA}/r`)[0]?.[0], 'Accepted=False/NoMatchingParent');
    assert.deepEqual(hosts(r), []);
    // The Gateway's own listener is untouched.
    assert.ok(listenerConditions(r, GW, 'web').includes('Accepted=True/Accepted'));
  });

  it('Same, All and Selector: by the set’s namespace; a parentRef of another kind or Gateway is not ours', () => {
    const sets = [
      listenerSet(INFRA, 'same', [http('l', 'same.example.com')]),
      listenerSet(APP, 'labelled', [http('l', 'app.example.com')]),
      listenerSet('other-ns', 'far', [http('l', 'far.example.com')]),
      listenerSet(INFRA, 'elsewhere', [http('l', 'x.example.com')], {
        parentRef: { kind: 'Gateway', name: 'not-ours' },
      }),
      listenerSet(INFRA, 'odd', [http('l', 'y.example.com')], {
        parentRef: { kind: 'Service', name: 'shared' },
      }),
    ];
    const judged = (allowed: Record<string, unknown>) => {
      const r = pass(world({ gateways: [gateway(allowed)], listenerSets: sets }));
      return {
        accepted: [...(r.listenerSets?.keys() ?? [])]
          .filter((k) => setConditions(r, k)[0] === 'Accepted=True/Accepted')
          .sort(),
        judged: [...(r.listenerSets?.keys() ?? [])].sort(),
        count: r.gateways.get(GW)?.attachedListenerSets,
      };
    };
    const same = judged({ from: 'Same' });
    assert.deepEqual(same.accepted, [`${INFRA}/same`]);
    assert.deepEqual(
      same.judged,
      [`${APP}/labelled`, `${INFRA}/same`, 'other-ns/far'],
      'not-ours and another kind are left alone',
    );
    assert.equal(same.count, 1);
    assert.deepEqual(judged({ from: 'All' }).accepted, [`${APP}/labelled`, `${INFRA}/same`, 'other-ns/far']);
    assert.deepEqual(judged({ from: 'Selector', selector: { matchLabels: { team: 'app' } } }).accepted, [
      `${APP}/labelled`,
    ]);
    assert.deepEqual(judged({ from: 'None' }).accepted, []);
    // A selector with an expression, and one naming nothing, select as the spec says.
    assert.deepEqual(
      judged({ from: 'Selector', selector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } })
        .accepted,
      [`${APP}/labelled`],
    );
    assert.deepEqual(judged({ from: 'Selector' }).accepted, []);
  });

  it('routes: a Gateway parentRef reaches its own listeners, a ListenerSet parentRef the set’s; both on one VIP', () => {
    const ls = listenerSet(INFRA, 'team', [http('one', 'one.example.com'), http('two', 'two.example.com')]);
    const r = pass(
      world({
        gateways: [gateway({ from: 'Same' })],
        listenerSets: [ls],
        routes: [
          routeTo('all', [toGateway(), toSet('team')]),
          routeTo('gw-only', [toGateway()]),
          routeTo('set-section', [toSet('team', { sectionName: 'two' })]),
          routeTo('gw-bad-section', [toGateway({ sectionName: 'one' })]),
          routeTo('set-bad-section', [toSet('team', { sectionName: 'web' })]),
        ],
      }),
    );
    assert.deepEqual(setConditions(r, `${INFRA}/team`), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
    ]);
    const attached = (l: string) =>
      r.listenerSets?.get(`${INFRA}/team`)?.listeners.find((x) => x.name === l)?.attachedRoutes;
    assert.equal(attached('one'), 1);
    assert.equal(attached('two'), 2);
    assert.equal(r.gateways.get(GW)?.listeners[0]?.attachedRoutes, 2);
    assert.deepEqual(parentConditions(r, `${INFRA}/all`), [
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
      ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs'],
    ]);
    // A listener name of the set is not the Gateway's, nor the other way round (GEP-1713).
    assert.equal(parentConditions(r, `${INFRA}/gw-bad-section`)[0]?.[0], 'Accepted=False/NoMatchingParent');
    assert.equal(parentConditions(r, `${INFRA}/set-bad-section`)[0]?.[0], 'Accepted=False/NoMatchingParent');
    assert.deepEqual(hosts(r), ['gw.example.com', 'one.example.com', 'two.example.com']);
    const byHost = (h: string) =>
      (vsOf(r, GW)?.routes ?? [])
        .filter((x) => x.host === h)
        .map((x) => x.source)
        .sort();
    assert.deepEqual(byHost('gw.example.com'), [`HTTPRoute ${INFRA}/all`, `HTTPRoute ${INFRA}/gw-only`]);
    assert.deepEqual(byHost('one.example.com'), [`HTTPRoute ${INFRA}/all`]);
    assert.deepEqual(byHost('two.example.com'), [`HTTPRoute ${INFRA}/all`, `HTTPRoute ${INFRA}/set-section`]);
    assert.equal(
      vsOf(r, GW)?.routes.find((x) => x.host === 'one.example.com')?.pool,
      pool(INFRA, 'infra-backend-v1'),
    );
  });

  it('allowedRoutes Same means the set’s namespace; a wildcard Gateway listener leaves the set’s host alone', () => {
    const gw = gateway({ from: 'All' }, [
      {
        name: 'any',
        port: 80,
        protocol: 'HTTP',
        hostname: '*.example.com',
        allowedRoutes: { namespaces: { from: 'All' } },
      },
    ]);
    const ls = listenerSet(APP, 'team', [
      { name: 'mine', port: 80, protocol: 'HTTP', hostname: 'app.example.com' },
    ]);
    const r = pass(
      world({
        gateways: [gw],
        listenerSets: [ls],
        routes: [
          routeTo('from-app', [toSet('team', { namespace: APP })], APP),
          routeTo('from-infra', [toSet('team', { namespace: APP })]),
          route(INFRA, 'wide', {
            parentRefs: [toGateway()],
            hostnames: ['app.example.com', 'www.example.com'],
            rules: [{ backendRefs: [{ name: 'infra-backend-v2', port: 8080 }] }],
          }),
        ],
      }),
    );
    assert.equal(parentConditions(r, `${APP}/from-app`)[0]?.[0], 'Accepted=True/Accepted');
    assert.equal(parentConditions(r, `${INFRA}/from-infra`)[0]?.[0], 'Accepted=False/NotAllowedByListeners');
    const wide = (vsOf(r, GW)?.routes ?? [])
      .filter((x) => x.source === `HTTPRoute ${INFRA}/wide`)
      .map((x) => x.host);
    assert.deepEqual(
      [...new Set(wide)],
      ['www.example.com'],
      'app.example.com belongs to the set’s listener',
    );
  });
});

describe('ListenerSet conflicts follow precedence: the Gateway, the oldest set, then namespace/name', () => {
  const conflicted = (reason: string) => [
    `Accepted=False/${reason}`,
    `Programmed=False/${reason}`,
    'ResolvedRefs=True/ResolvedRefs',
    `Conflicted=True/${reason}`,
  ];

  it('hostname and protocol conflicts: the earlier keeps its place, a set with no valid listener is not accepted', () => {
    const gw = gateway({ from: 'Same' }, [
      http('web', 'gw.example.com'),
      {
        name: 'tls',
        port: 443,
        protocol: 'HTTPS',
        hostname: 'secure.example.com',
        tls: { certificateRefs: [{ name: 'nope' }] },
      },
    ]);
    const sets = [
      listenerSet(INFRA, 'b-second', [http('dup', 'dup.example.com'), http('own', 'b.example.com')], {
        created: '2026-01-03T00:00:00Z',
      }),
      listenerSet(INFRA, 'a-first', [http('dup', 'dup.example.com')], { created: '2026-01-02T00:00:00Z' }),
      listenerSet(INFRA, 'c-gw', [http('clash', 'gw.example.com')], { created: '2026-01-02T00:00:00Z' }),
      listenerSet(
        INFRA,
        'd-proto',
        [{ name: 'plain', port: 443, protocol: 'HTTP', hostname: 'p.example.com' }],
        {
          created: '2026-01-02T00:00:00Z',
        },
      ),
    ];
    const r = pass(world({ gateways: [gw], listenerSets: sets }));
    assert.deepEqual(setListener(r, `${INFRA}/a-first`, 'dup'), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=False/NoConflicts',
    ]);
    assert.deepEqual(setListener(r, `${INFRA}/b-second`, 'dup'), conflicted('HostnameConflict'));
    assert.deepEqual(setConditions(r, `${INFRA}/b-second`), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
    ]);
    assert.deepEqual(setListener(r, `${INFRA}/c-gw`, 'clash'), conflicted('HostnameConflict'));
    assert.deepEqual(setConditions(r, `${INFRA}/c-gw`), [
      'Accepted=False/ListenersNotValid',
      'Programmed=False/ListenersNotValid',
    ]);
    // The Gateway's HTTPS listener has no certificate (not programmed) but still holds its port.
    assert.deepEqual(setListener(r, `${INFRA}/d-proto`, 'plain'), conflicted('ProtocolConflict'));
    assert.equal(r.gateways.get(GW)?.attachedListenerSets, 2);
    // The Gateway's own listener is never conflicted by a set's.
    assert.ok(listenerConditions(r, GW, 'web').includes('Conflicted=False/NoConflicts'));
    // No message names another team's object.
    const msg = r.listenerSets?.get(`${INFRA}/b-second`)?.listeners[0]?.conditions[0]?.message ?? '';
    assert.ok(!msg.includes('a-first'), msg);
  });

  it('a set’s listener that yields to the Gateway does not make its siblings conflict (TCP beside HTTP on one port)', () => {
    const ls = listenerSet(INFRA, 'mixed', [
      http('one', 'one.example.com'),
      { name: 'raw', port: 80, protocol: 'TCP' },
      http('two', 'two.example.com'),
    ]);
    const r = pass(
      world({ gateways: [gateway({ from: 'Same' })], listenerSets: [ls], support: { TCP: true } }),
    );
    assert.deepEqual(setListener(r, `${INFRA}/mixed`, 'raw'), [
      'Accepted=False/ProtocolConflict',
      'Programmed=False/ProtocolConflict',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=True/ProtocolConflict',
    ]);
    for (const l of ['one', 'two'])
      assert.ok(setListener(r, `${INFRA}/mixed`, l).includes('Conflicted=False/NoConflicts'), l);
  });

  it('across a change: the older set deleted, the newer takes the host; permission withdrawn, all go', () => {
    const older = listenerSet(INFRA, 'z-older', [http('l', 'dup.example.com')], {
      created: '2026-01-02T00:00:00Z',
    });
    const newer = listenerSet(INFRA, 'a-newer', [http('l', 'dup.example.com')], {
      created: '2026-01-03T00:00:00Z',
    });
    const routes = [routeTo('old', [toSet('z-older')]), routeTo('new', [toSet('a-newer')])];
    const source = (r: ReturnType<typeof pass>) =>
      (vsOf(r, GW)?.routes ?? []).filter((x) => x.host === 'dup.example.com').map((x) => x.source);
    const before = pass(
      world({ gateways: [gateway({ from: 'Same' })], listenerSets: [newer, older], routes }),
    );
    assert.deepEqual(source(before), [`HTTPRoute ${INFRA}/old`], 'the older set serves the host');
    assert.equal(parentConditions(before, `${INFRA}/new`)[0]?.[0], 'Accepted=False/NotAllowedByListeners');
    const after = pass(world({ gateways: [gateway({ from: 'Same' })], listenerSets: [newer], routes }));
    assert.deepEqual(source(after), [`HTTPRoute ${INFRA}/new`], 'the newer one takes it');
    assert.deepEqual(setListener(after, `${INFRA}/a-newer`, 'l')[0], 'Accepted=True/Accepted');
    const withdrawn = pass(world({ gateways: [gateway()], listenerSets: [newer], routes }));
    assert.deepEqual(source(withdrawn), []);
    assert.equal(setConditions(withdrawn, `${INFRA}/a-newer`)[0], 'Accepted=False/NotAllowed');
  });

  it('past the Gateway’s listener cap a set is refused whole (TooManyListeners); one set gone, the next fits', () => {
    // 16 sets of 64 fill the cap beside the Gateway's one listener: the 16th does not fit.
    const full = Array.from({ length: 16 }, (_, i) =>
      listenerSet(
        INFRA,
        `team-${String(i).padStart(2, '0')}`,
        Array.from({ length: 64 }, (_, j) => http(`l${j}`, `h${j}.team-${i}.example.com`)),
        { created: '2026-01-02T00:00:00Z' },
      ),
    );
    const r = pass(world({ gateways: [gateway({ from: 'Same' })], listenerSets: full }));
    assert.equal(MAX_GATEWAY_LISTENERS, 1024);
    assert.equal(r.gateways.get(GW)?.attachedListenerSets, 15);
    assert.deepEqual(setConditions(r, `${INFRA}/team-15`), [
      'Accepted=False/ListenersNotValid',
      'Programmed=False/ListenersNotValid',
    ]);
    assert.equal(setListener(r, `${INFRA}/team-15`, 'l0')[0], 'Accepted=False/TooManyListeners');
    assert.ok(!hosts(r).includes('h0.team-15.example.com'), 'nothing of it served');
    // One set deleted: the last one fits.
    const after = pass(world({ gateways: [gateway({ from: 'Same' })], listenerSets: full.slice(1) }));
    assert.equal(setConditions(after, `${INFRA}/team-15`)[0], 'Accepted=True/Accepted');
  });

  it('a Gateway not accepted: its sets are ParentNotAccepted', () => {
    const r = pass(
      world({
        gateways: [gateway({ from: 'Same' })],
        listenerSets: [listenerSet(INFRA, 'team', [http('l', 'team.example.com')])],
        parametersOf: () => ({ invalid: 'parametersRef: not found' }),
      }),
    );
    assert.deepEqual(setConditions(r, `${INFRA}/team`), [
      'Accepted=False/ParentNotAccepted',
      'Programmed=False/ParentNotAccepted',
    ]);
  });

  it('a Gateway with no address: its sets wait (Programmed=False/Pending)', () => {
    const r = pass(
      world({
        gateways: [gateway({ from: 'Same' })],
        listenerSets: [listenerSet(INFRA, 'team', [http('l', 'team.example.com')])],
        vips: { [GW]: undefined },
      }),
    );
    assert.deepEqual(setConditions(r, `${INFRA}/team`), [
      'Accepted=True/Accepted',
      'Programmed=False/Pending',
    ]);
  });
});

describe('ListenerSet listeners: hostile input and references, judged as a Gateway’s', () => {
  it('a bad hostname or protocol refuses that listener alone; its certificates need its own grant', async () => {
    const cert = await testCertificate({ dns: ['tls.example.com'] });
    const https = (name: string, ref: Record<string, unknown>) => ({
      name,
      port: 443,
      protocol: 'HTTPS',
      hostname: 'tls.example.com',
      tls: { certificateRefs: [ref] },
    });
    const sets = [
      listenerSet(INFRA, 'bad', [
        http('evil', 'a.example.com\n  server x 10.0.0.1:80'),
        { name: 'sctp', port: 81, protocol: 'SCTP' },
        http('fine', 'fine.example.com'),
      ]),
      listenerSet(INFRA, 'tls-own', [https('own', { name: 'cert' })]),
      listenerSet(INFRA, 'tls-far', [https('far', { name: 'cert', namespace: APP })], {
        created: '2026-01-09T00:00:00Z',
      }),
    ];
    const secrets = [
      { namespace: INFRA, name: 'cert', cert },
      { namespace: APP, name: 'cert', cert },
    ];
    const gw = gateway({ from: 'Same' });
    const judge = (grants: World['grants']) =>
      pass(world({ gateways: [gw], listenerSets: sets, secrets, grants, support: { HTTPS: true } }));
    const r = judge([grant(APP, 'Gateway', INFRA, 'Secret')]);
    assert.equal(setListener(r, `${INFRA}/bad`, 'evil')[0], 'Accepted=False/UnsupportedValue');
    assert.equal(setListener(r, `${INFRA}/bad`, 'sctp')[0], 'Accepted=False/UnsupportedProtocol');
    assert.equal(setListener(r, `${INFRA}/bad`, 'fine')[0], 'Accepted=True/Accepted');
    assert.ok(!hosts(r).some((h) => h.includes('\n')));
    assert.ok(setListener(r, `${INFRA}/tls-own`, 'own').includes('ResolvedRefs=True/ResolvedRefs'));
    // A grant to the Gateway kind is not the set's (GEP-1713: no inheritance either way).
    assert.ok(setListener(r, `${INFRA}/tls-far`, 'far').includes('ResolvedRefs=False/RefNotPermitted'));
    assert.equal(setConditions(r, `${INFRA}/tls-far`)[0], 'Accepted=False/ListenersNotValid');
    const granted = judge([grant(APP, 'ListenerSet', INFRA, 'Secret')]);
    assert.ok(setListener(granted, `${INFRA}/tls-far`, 'far').includes('ResolvedRefs=True/ResolvedRefs'));
  });
});

class Recorder implements StatusSink {
  readonly writes: { kind: string; key: string; body: { status: Record<string, unknown> } }[] = [];
  async patch(ref: ResourceRef, namespace: string, name: string, body: object): Promise<void> {
    this.writes.push({
      kind: ref.kind,
      key: `${namespace}/${name}`,
      body: body as { status: Record<string, unknown> },
    });
  }
}

describe('ListenerSet status, written', () => {
  it('conditions and listeners on the set, the count on the Gateway; a refused virtual service is Pending; 0 written back', async () => {
    const sink = new Recorder();
    const w = new GatewayStatusWriter(
      sink,
      'c1',
      'npl-lb.io/gateway-controller',
      () => '2026-11-30T00:00:00Z',
    );
    const ls = listenerSet(INFRA, 'team', [http('l', 'team.example.com', 8080)]);
    const gw = gateway({ from: 'Same' });
    const result = pass(world({ gateways: [gw], listenerSets: [ls] }));
    const view = { gateways: [gw], listenerSets: [ls] };
    await w.write(view, result, () => false);
    const set = sink.writes.find((x) => x.kind === 'ListenerSet')!.body.status as {
      conditions: { type: string; status: string; observedGeneration: number }[];
      listeners: { name: string; attachedRoutes: number; conditions: { type: string; status: string }[] }[];
    };
    assert.deepEqual(
      set.conditions.map((c) => `${c.type}=${c.status}`),
      ['Accepted=True', 'Programmed=True'],
    );
    assert.equal(set.conditions[0]!.observedGeneration, 1);
    assert.equal(set.listeners[0]!.name, 'l');
    assert.equal(sink.writes.find((x) => x.kind === 'Gateway')!.body.status.attachedListenerSets, 1);

    // The device refused the port's virtual service (8080, the set's alone): the set is Pending.
    const refused = new Recorder();
    await new GatewayStatusWriter(refused, 'c1', 'npl-lb.io/gateway-controller').write(view, result, (vs) =>
      vs.endsWith('-HTTP-8080'),
    );
    const pending = refused.writes.find((x) => x.kind === 'ListenerSet')!.body.status as typeof set;
    assert.equal(pending.listeners[0]!.conditions.find((c) => c.type === 'Programmed')?.status, 'False');
    assert.equal(pending.conditions.find((c) => c.type === 'Programmed')?.status, 'False');

    // Shown, then the permission withdrawn: the count goes back to 0, written (a merge patch keeps an omitted field).
    const shownGw = { ...gw, status: { ...gw.status, attachedListenerSets: 1 } } as Gateway;
    const closed = { ...shownGw, spec: { ...shownGw.spec, allowedListeners: undefined } } as Gateway;
    const again = new Recorder();
    await new GatewayStatusWriter(again, 'c1', 'npl-lb.io/gateway-controller').write(
      { gateways: [closed], listenerSets: [ls] },
      pass(world({ gateways: [closed], listenerSets: [ls] })),
      () => false,
    );
    assert.equal(again.writes.find((x) => x.kind === 'Gateway')!.body.status.attachedListenerSets, 0);
  });
});

describe('a route through a ListenerSet, end to end in the pass', () => {
  it('its backend is annotated for NodePortLocal and served on the Gateway’s VIP; a set of a Gateway not ours is not', () => {
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
    const view = (sets: ListenerSet[]): ClusterView =>
      baseView({
        gateways: [gateway({ from: 'Same' })],
        listenerSets: sets,
        httpRoutes: [
          route(INFRA, 'via-set', {
            parentRefs: [toSet('team')],
            rules: [{ backendRefs: [{ name: 'infra-backend-v2', port: 8080 }] }],
          }),
        ],
        referenceGrants: [],
      });
    const ours = view([listenerSet(INFRA, 'team', [http('l', 'team.example.com')])]);
    assert.deepEqual([...servicesToAnnotate(ours, cfg)].sort(), [`${INFRA}/infra-backend-v2`]);
    const vs = buildDesired(ours, cfg).gateways?.virtualServices.find(
      (v): v is L7VirtualService => v.kind === 'l7' && v.name.includes('shared'),
    );
    assert.ok(vs?.routes.some((x) => x.host === 'team.example.com'));
    const elsewhere = view([
      listenerSet(INFRA, 'team', [http('l', 'team.example.com')], {
        parentRef: { kind: 'Gateway', name: 'someone-elses' },
      }),
    ]);
    assert.deepEqual([...servicesToAnnotate(elsewhere, cfg)], []);
  });
});
