/**
 * The conformance tests as the harness runs them: each transcribed from the upstream suite
 * (kubernetes-sigs/gateway-api v1.6.1, conformance/tests/<name>.go and its manifests), run one
 * after another on one rig: its manifests created, its assertions run, its objects deleted again
 * (waited for) so the next test starts from the base manifests only.
 */
import type { Rig } from './rig.ts';
import { applyAll, GATEWAY_CLASS } from './rig.ts';
import { readManifests, pathOf, type KubeObject } from './objects.ts';
import { ConformanceFailure, DEFAULT_TIMEOUTS, poll, StatusChecks, type Timeouts } from './status.ts';
import { type Expected, expectEventually, type TlsOptions } from './http.ts';
import { CONTROLLER_NAME } from './rig.ts';

/** The upstream feature names (pkg/features) the harness knows. */
export type Feature = string;

export interface Suite {
  rig: Rig;
  status: StatusChecks;
  timeouts: Timeouts;
  controllerName: string;
  gatewayClassName: string;
  /** Whether requests are sent: false on an adapter without a data path, where only status is checked. */
  sendsTraffic: boolean;
  /** Logs a line under the running test. */
  log(line: string): void;
  /** Creates a manifest file's objects (deleted when the test ends). */
  apply(file: string): Promise<KubeObject[]>;
}

export interface ConformanceTest {
  shortName: string;
  description: string;
  features: Feature[];
  /** Manifest files under conformance/manifests/tests/, copied from upstream. */
  manifests: string[];
  /** Whether it sends traffic (only status tests apply on an adapter without a data path). */
  traffic: boolean;
  run(s: Suite): Promise<void>;
}

export type Outcome =
  | { name: string; result: 'passed'; ms: number; log: string[] }
  | { name: string; result: 'failed'; ms: number; log: string[]; reason: string }
  | { name: string; result: 'skipped'; reason: string };

const manifest = (file: string) => new URL(`../manifests/tests/${file}`, import.meta.url);

/** Deletes the objects, last first, and waits until each is gone. */
async function deleteAll(rig: Rig, objects: KubeObject[], t: Timeouts): Promise<void> {
  for (const o of [...objects].reverse()) await rig.api.delete(pathOf(o));
  for (const o of objects) {
    await poll(
      `${o.kind} ${o.metadata.name} deleted`,
      async () => ((await rig.api.get(pathOf(o))) ? 'still there' : undefined),
      t,
    );
  }
}

export async function runTest(
  rig: Rig,
  test: ConformanceTest,
  opts: { timeouts?: Timeouts; onLog?: (line: string) => void } = {},
): Promise<Outcome> {
  const unclaimed = test.features.filter((f) => !rig.features.includes(f));
  if (unclaimed.length) {
    return {
      name: test.shortName,
      result: 'skipped',
      reason: `the GatewayClass does not claim ${unclaimed.join(', ')} on ${rig.adapterName}`,
    };
  }
  const timeouts = opts.timeouts ?? DEFAULT_TIMEOUTS;
  const log: string[] = [];
  const created: KubeObject[] = [];
  const s: Suite = {
    rig,
    status: new StatusChecks(rig.api, CONTROLLER_NAME, timeouts),
    timeouts,
    controllerName: CONTROLLER_NAME,
    gatewayClassName: GATEWAY_CLASS,
    sendsTraffic: rig.traffic,
    log: (line) => {
      log.push(line);
      opts.onLog?.(`${test.shortName}: ${line}`);
    },
    apply: async (file) => {
      const objects = readManifests(manifest(file), rig.manifestNames);
      for (const o of objects) {
        await applyAll(rig.api, [o]);
        created.push(o);
      }
      return objects;
    },
  };
  const started = Date.now();
  let failure: string | undefined;
  try {
    for (const m of test.manifests) await s.apply(m);
    await test.run(s);
  } catch (err) {
    failure = (err as Error).message;
    // What the device said of its members then: the first thing to know of a 503.
    const trouble = await rig.deviceTrouble();
    if (trouble) failure += ` [${trouble}]`;
  }
  try {
    await deleteAll(rig, created, timeouts);
  } catch (err) {
    failure ??= `cleanup: ${(err as Error).message}`;
  }
  const ms = Date.now() - started;
  if (failure !== undefined) return { name: test.shortName, result: 'failed', ms, log, reason: failure };
  // Its status half held, but what it says of traffic was not checked: not a pass.
  if (test.traffic && !rig.traffic) {
    return {
      name: test.shortName,
      result: 'skipped',
      reason: `${rig.adapterName} carries no traffic here: its status assertions passed, its requests were not sent`,
    };
  }
  return { name: test.shortName, result: 'passed', ms, log };
}

export const INFRA = 'gateway-conformance-infra';
export const WEB = 'gateway-conformance-web-backend';
export const APP = 'gateway-conformance-app-backend';
export const HTTP_CORE: Feature[] = ['Gateway', 'HTTPRoute'];

/**
 * GatewayAndHTTPRoutesMustBeAccepted then HTTPRouteMustHaveResolvedRefsConditionsTrue for each
 * route, as most HTTPRoute tests begin; returns the Gateway's address.
 */
export async function routesReady(
  s: Suite,
  gw: { namespace: string; name: string; listeners?: string[] },
  routes: { namespace: string; name: string }[],
): Promise<string> {
  const addr = await s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', routes);
  for (const r of routes)
    await s.status.routeCondition('HTTPRoute', r, gw, {
      type: 'ResolvedRefs',
      status: 'True',
      reason: 'ResolvedRefs',
    });
  return addr;
}

/** A listener's expected status: HTTPRoute supported, Accepted and ResolvedRefs true, so many routes. */
export const readyListener = (name: string, attachedRoutes: number) => ({
  name,
  supportedKinds: [{ kind: 'HTTPRoute' }],
  attachedRoutes,
  conditions: [
    { type: 'Accepted', status: 'True' },
    { type: 'ResolvedRefs', status: 'True' },
  ],
});

/** Each expectation, all at once (as upstream runs its cases in parallel). */
export async function expectAll(
  s: Suite,
  gwAddr: string,
  cases: Expected[],
  tls?: TlsOptions,
): Promise<void> {
  if (!s.sendsTraffic) return;
  const results = await Promise.allSettled(cases.map((c) => expectEventually(gwAddr, c, s.timeouts, 3, tls)));
  const failed = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : []));
  if (failed.length) throw new ConformanceFailure(failed.join('; '));
}
