/**
 * Upstream's NamespacesMustBeReady (conformance/utils/kubernetes/helpers.go, v1.6.1): every Gateway
 * of the namespaces Accepted and Programmed (conditions of its generation; one annotated as
 * excluded from readiness checks aside), and every Pod Ready (or Succeeded, or terminating), at
 * least one Pod in each. A test whose manifests start Pods of their own waits for them so.
 */
import type { Suite } from './suite.ts';
import { conditionsMatch, GW, poll, staleConditions } from './status.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const EXCLUDED = 'gateway-api/skip-this-for-readiness';

export async function namespacesReady(s: Suite, namespaces: string[]): Promise<void> {
  await poll(
    `namespaces ${namespaces.join(', ')} ready`,
    async () => {
      for (const ns of namespaces) {
        const gws = ((await s.rig.api.get(`/apis/${GW}/v1/namespaces/${ns}/gateways`)) as Obj | undefined)
          ?.items;
        for (const g of (gws ?? []) as Obj[]) {
          if (g.metadata?.annotations?.[EXCLUDED] === 'true') continue;
          const why =
            staleConditions(g, g.status?.conditions) ??
            conditionsMatch(g.status?.conditions, [
              { type: 'Accepted', status: 'True' },
              { type: 'Programmed', status: 'True' },
            ]);
          if (why) return `Gateway ${ns}/${g.metadata?.name}: ${why}`;
        }
        const pods = (((await s.rig.api.get(`/api/v1/namespaces/${ns}/pods`)) as Obj | undefined)?.items ??
          []) as Obj[];
        if (pods.length === 0) return `no Pod in ${ns}`;
        for (const p of pods) {
          const ready = ((p.status?.conditions ?? []) as Obj[]).some(
            (c) => c.type === 'Ready' && c.status === 'True',
          );
          if (!ready && p.status?.phase !== 'Succeeded' && !p.metadata?.deletionTimestamp)
            return `Pod ${ns}/${p.metadata?.name} not Ready`;
        }
      }
      return undefined;
    },
    s.timeouts,
  );
}
