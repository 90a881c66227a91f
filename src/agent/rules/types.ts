/**
 * The forwarding backends behind one interface: iptables DNAT rules, the userspace forwarder, or
 * nothing (annotate only). `sync` programs the whole set in one batch; add and remove are the
 * incremental changes in between.
 */
import type { Mapping } from '../port-table.ts';

export type ForwardingMode = 'iptables' | 'userspace' | 'none';

export interface ForwardingBackend {
  readonly name: string;
  /** Whether reservations bind the wildcard address (iptables: the port is the host's) or the node IP. */
  readonly bindsWildcard: boolean;
  /** Prerequisites, before any rule is written (e.g. refusing to run beside Antrea's NPL). */
  start(): Promise<void>;
  /** Makes the programmed rules exactly these mappings, in one batch; repairs whatever drifted. */
  sync(mappings: Mapping[]): Promise<void>;
  add(m: Mapping): Promise<void>;
  remove(m: Mapping): Promise<void>;
  /** Stops without removing rules, so traffic keeps flowing while the agent restarts. */
  stop(): Promise<void>;
  /** Removes everything the backend ever programmed (`npl-lb agent --cleanup`). */
  cleanup(): Promise<void>;
}

/** Mappings that need a rule (hostPort mappings are published but not forwarded by us). */
export const forwarded = (ms: Mapping[]): Mapping[] => ms.filter((m) => !m.hostPort);
