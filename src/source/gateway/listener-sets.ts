/**
 * ListenerSets (GEP-1713): listeners application teams attach to one of our Gateways that allows
 * it (`spec.allowedListeners`: None by default, Same, All, a namespace Selector). Each allowed
 * set's listeners are judged as a Gateway's are (listeners.ts, with the set's namespace and its own
 * ReferenceGrants), then merged after the Gateway's own in precedence order (the Gateway, then sets
 * by creation time, then by namespace/name): a listener that conflicts with one earlier in that
 * order (another protocol on its port, or the same port, protocol and hostname) is not accepted
 * (`Conflicted: True`), the earlier one keeps serving. What the Gateway's VIP serves is the merged
 * list; routes attach to a set's listeners through a parentRef to the set (attach.ts). Pure.
 */
import { GATEWAY_GROUP, type Gateway, type Listener } from '../../kube/gateway-objects.ts';
import type { ListenerSet } from '../../kube/listener-set-objects.ts';
import { labelsMatch, type NamespaceLabels } from './attach.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import {
  hostKey,
  type ListenerContext,
  type ListenerState,
  resolveListeners,
  transport,
} from './listeners.ts';

export interface ListenerSetState {
  set: ListenerSet;
  /** namespace/name */
  key: string;
  /** Allowed by its Gateway and accepted: counted in the Gateway's `attachedListenerSets`. */
  attached: boolean;
  /** Accepted and Programmed, as GEP-1713 reasons them. */
  conditions: ConditionSpec[];
  /** Its listeners judged (none when its Gateway does not allow it). */
  listeners: ListenerState[];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** The Gateway (namespace/name) a ListenerSet's parentRef names, or undefined for another kind. */
export function parentOf(s: ListenerSet): string | undefined {
  const ref = s.spec.parentRef;
  if (ref.group !== GATEWAY_GROUP || ref.kind !== 'Gateway') return undefined;
  return `${ref.namespace ?? s.metadata.namespace}/${ref.name}`;
}

/** Precedence among sets: the oldest first, then by namespace/name. */
function byPrecedence(a: ListenerSet, b: ListenerSet): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  return key(a.metadata) < key(b.metadata) ? -1 : 1;
}

/** Whether the Gateway's `spec.allowedListeners` lets a set of this namespace attach. */
function allows(gw: Gateway, namespace: string, nsLabels: NamespaceLabels): boolean {
  const from = gw.spec.allowedListeners?.namespaces;
  switch (from?.from ?? 'None') {
    case 'All':
      return true;
    case 'Same':
      return namespace === gw.metadata.namespace;
    case 'Selector': {
      const labels = nsLabels(namespace);
      return labels !== undefined && labelsMatch(from?.selector, labels);
    }
    default:
      return false;
  }
}

/** What the listeners earlier in precedence hold: each port's protocol, each host key. */
interface Taken {
  protocols: Map<string, string>;
  hosts: Set<string>;
}

function take(taken: Taken, states: readonly ListenerState[]): void {
  for (const s of states) {
    if (!s.attachable) continue;
    const l = s.listener;
    taken.protocols.set(`${l.port}/${transport(l.protocol)}`, l.protocol);
    taken.hosts.add(hostKey(l));
  }
}

/** The conflict an earlier listener of the merged list makes for this one, if any. */
function conflictWith(l: Listener, taken: Taken): 'ProtocolConflict' | 'HostnameConflict' | undefined {
  const protocol = taken.protocols.get(`${l.port}/${transport(l.protocol)}`);
  if (protocol !== undefined && protocol !== l.protocol) return 'ProtocolConflict';
  return taken.hosts.has(hostKey(l)) ? 'HostnameConflict' : undefined;
}

/**
 * A set's listener that an earlier one holds the place of: not accepted, not programmed,
 * conflicted, with the conflict's reason (a listener refused for another reason keeps it). The
 * message names no other object (another team's set).
 */
function yieldTo(state: ListenerState, reason: 'ProtocolConflict' | 'HostnameConflict'): void {
  if (!state.conditions.find((c) => c.type === 'Accepted')?.status) return;
  const l = state.listener;
  const message =
    reason === 'ProtocolConflict'
      ? `a listener of the Gateway or of an older ListenerSet uses another protocol on port ${l.port}`
      : `a listener of the Gateway or of an older ListenerSet has the same port, protocol and hostname`;
  const resolved = state.conditions.find((c) => c.type === 'ResolvedRefs');
  state.conditions = [
    cond('Accepted', false, reason, message),
    cond('Programmed', false, reason, message),
    ...(resolved ? [resolved] : []),
    cond('Conflicted', true, reason, message),
  ];
  state.attachable = false;
  state.programmable = false;
}

/**
 * How many listeners one Gateway serves, its own and its sets' (each set holds at most 64, the CRD
 * says; sets have no count): a set that would take it past this is refused with the spec's
 * `TooManyListeners`, so one VIP's configuration stays bounded whatever teams attach.
 */
export const MAX_GATEWAY_LISTENERS = 1024;

function tooMany(state: ListenerState): void {
  const why = `the Gateway already serves its limit of listeners (${MAX_GATEWAY_LISTENERS}, its own and its ListenerSets')`;
  state.conditions = [
    cond('Accepted', false, 'TooManyListeners', why),
    cond('Programmed', false, 'TooManyListeners', why),
    ...state.conditions.filter((c) => c.type !== 'Accepted' && c.type !== 'Programmed'),
  ];
  state.attachable = false;
  state.programmable = false;
}

/**
 * A set's Accepted and Programmed from its listeners: accepted while at least one is valid (can be
 * programmed: accepted, not conflicted, an HTTPS one with a certificate it may use).
 */
function setConditions(listeners: readonly ListenerState[]): ConditionSpec[] {
  const valid = listeners.filter((l) => l.programmable).length;
  if (valid === 0) {
    const why = `none of its ${listeners.length} listeners is valid`;
    return [
      cond('Accepted', false, 'ListenersNotValid', why),
      cond('Programmed', false, 'ListenersNotValid', why),
    ];
  }
  const bad = listeners.length - valid;
  return [
    cond(
      'Accepted',
      true,
      'Accepted',
      bad > 0 ? `${bad} of ${listeners.length} listeners are not valid` : '',
    ),
    cond('Programmed', true, 'Programmed'),
  ];
}

/**
 * The ListenerSets naming one of our Gateways: each judged, and the Gateway's listeners merged
 * with the accepted sets' (`merged`, what its VIP serves). `parentInvalid`: why the Gateway itself
 * is not accepted (no set is, then).
 */
export function attachListenerSets(
  gw: Gateway,
  own: readonly ListenerState[],
  sets: readonly ListenerSet[],
  at: { ctx: ListenerContext; nsLabels: NamespaceLabels; parentInvalid?: string | undefined },
): { merged: ListenerState[]; sets: ListenerSetState[] } {
  const taken: Taken = { protocols: new Map(), hosts: new Set() };
  take(taken, own);
  const merged = [...own];
  const out: ListenerSetState[] = [];
  for (const s of [...sets].sort(byPrecedence)) {
    const base = { set: s, key: key(s.metadata), attached: false, listeners: [] as ListenerState[] };
    if (at.parentInvalid !== undefined) {
      const why = `its Gateway is not accepted: ${at.parentInvalid}`;
      out.push({
        ...base,
        conditions: [
          cond('Accepted', false, 'ParentNotAccepted', why),
          cond('Programmed', false, 'ParentNotAccepted', why),
        ],
      });
      continue;
    }
    if (!allows(gw, s.metadata.namespace, at.nsLabels)) {
      const why = `Gateway ${key(gw.metadata)} does not allow ListenerSets from namespace ${s.metadata.namespace} (spec.allowedListeners)`;
      out.push({
        ...base,
        conditions: [
          cond('Accepted', false, 'NotAllowed', why),
          cond('Programmed', false, 'NotAllowed', why),
        ],
      });
      continue;
    }
    // Those an earlier listener holds the place of first: they do not conflict within the set.
    const lost = new Map(
      s.spec.listeners.flatMap((l) => {
        const reason = conflictWith(l, taken);
        return reason ? [[l.name, reason] as const] : [];
      }),
    );
    const listeners = resolveListeners(gw, at.ctx, {
      kind: 'ListenerSet',
      namespace: s.metadata.namespace,
      listeners: s.spec.listeners,
      yields: new Set(lost.keys()),
    });
    for (const l of listeners) {
      const reason = lost.get(l.listener.name);
      if (reason) yieldTo(l, reason);
    }
    // Past the cap, a set's listeners are refused whole (never some of them): the later set waits.
    if (merged.length + listeners.length > MAX_GATEWAY_LISTENERS) for (const l of listeners) tooMany(l);
    take(taken, listeners);
    const conditions = setConditions(listeners);
    const attached = conditions[0]!.status;
    if (attached) merged.push(...listeners);
    out.push({ ...base, attached, conditions, listeners });
  }
  return { merged, sets: out };
}
