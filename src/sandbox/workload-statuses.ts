/**
 * The statuses of one namespace's workloads, as their controllers write them (the figures are
 * workload-status.ts's): each ReplicaSet's, each Deployment's (a rollout under way is looked at
 * again once its progress deadline could have passed), each DaemonSet's and each
 * PodDisruptionBudget's. A status is written only when it differs from the one the object has.
 */
import { isDeepStrictEqual } from 'node:util';
import { HASH } from './deployment-revisions.ts';
import type { ResourceType } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import { matchLabels } from './selectors.ts';
import { controllerOf, fits, gone, labels, meta, selectorOf, templateHash } from './workload-pods.ts';
import {
  arr,
  daemonSetStatus,
  deploymentStatus,
  obj,
  pdbStatus,
  replicaSetStatus,
} from './workload-status.ts';

/** The kinds the workload controllers read and write. */
export interface WorkloadTypes {
  deploy: ResourceType;
  rs: ResourceType;
  ds: ResourceType;
  pod: ResourceType;
  node: ResourceType;
  pdb: ResourceType;
}

export interface WorkloadStatusDeps {
  types: WorkloadTypes;
  /** The objects of a kind in a namespace (undefined: cluster-scoped), as stored now. */
  list: (t: ResourceType, ns: string | undefined) => JsonObject[];
  /** Why a ReplicaSet's last step failed (by its uid), if it did. */
  failure: (uid: string) => string | undefined;
  /** Looks at the namespace again at this time (ms). */
  wakeAt: (atMs: number) => void;
  /** Writes an object's status subresource. */
  update: (t: ResourceType, o: JsonObject, status: JsonObject) => void;
}

export function writeStatuses(d: WorkloadStatusDeps, ns: string, now: string): void {
  const T = d.types;
  const status = (t: ResourceType, o: JsonObject, st: JsonObject) => {
    if (!isDeepStrictEqual(o.status ?? {}, st)) d.update(t, o, st);
  };
  const pods = d.list(T.pod, ns);
  const ownedPods = (o: JsonObject) => pods.filter((p) => controllerOf(p)?.uid === meta(o).uid);
  const sets = d.list(T.rs, ns);
  for (const rs of sets)
    status(T.rs, rs, replicaSetStatus(rs, ownedPods(rs), d.failure(String(meta(rs).uid)), now));
  const fresh = (rs: JsonObject) => d.list(T.rs, ns).find((x) => meta(x).uid === meta(rs).uid) ?? rs;
  for (const dep of d.list(T.deploy, ns)) {
    const mine = sets.filter((rs) => controllerOf(rs)?.uid === meta(dep).uid);
    const hash = templateHash(obj(obj(dep.spec).template));
    const found = mine.find((rs) => labels(rs)[HASH] === hash);
    const current = found ? fresh(found) : undefined;
    const st = deploymentStatus(
      dep,
      current,
      mine.map((rs) => ({ rs, pods: ownedPods(rs) })),
      now,
    );
    status(T.deploy, dep, st);
    // A rollout under way is looked at again once its progress deadline could have passed.
    const p = arr(st.conditions).find((c) => c.type === 'Progressing');
    if (p?.reason === 'ReplicaSetUpdated')
      d.wakeAt(
        Date.parse(String(p.lastUpdateTime)) +
          Number(obj(dep.spec).progressDeadlineSeconds ?? 600) * 1000 +
          1000,
      );
  }
  const nodes = d.list(T.node, undefined);
  for (const ds of d.list(T.ds, ns)) {
    const template = obj(obj(ds.spec).template);
    const desired = nodes.filter((n) => !gone(n) && fits(n, template)).length;
    status(T.ds, ds, daemonSetStatus(ds, desired, ownedPods(ds), templateHash(template)));
  }
  for (const pdb of d.list(T.pdb, ns)) {
    const sel = selectorOf(obj(obj(pdb.spec).selector));
    const selected = pods.filter((p) => matchLabels(sel, labels(p)));
    status(T.pdb, pdb, pdbStatus(pdb, selected, now));
  }
}
