/**
 * The status of our Services and Ingresses after a pass: `status.loadBalancer.ingress` as
 * lb-status.ts words it, written where the object does not show it yet, through a StatusWriter
 * (the API server, or a fake in unit tests). A source found showing its status is not checked
 * again until it, its source status or the device's failures change; a pass that changed none of
 * the lists checks nothing.
 */
import PQueue from 'p-queue';
import type { ClusterView, DesiredResult, SourceStatus } from '../source/desired.ts';
import { type LbIngress, serviceIngress, showsAlready } from './lb-status.ts';
import type { StateTracker } from './state.ts';
import type { StatusWriter } from './status-writer.ts';
import { isIPv6Name } from '../model/names.ts';
import { autoVipGroup, resolveVip, vipFamily } from '../model/vips.ts';

export interface SourceStatusDeps {
  writer: StatusWriter;
  state: StateTracker;
  clusterName: string;
  ipMode: 'Proxy' | 'VIP';
  /** The ports an IngressClass's virtual services listen on (HTTP, and HTTPS for TLS hosts). */
  ingressPorts?: { http: number; https: number };
  /** Where the device allocates VIPs: the address of each group so far (src/model/vips.ts). */
  allocatedVips?: () => ReadonlyMap<string, string>;
}

export class SourceStatusWriter {
  /** Sources (kind/namespace/name) whose status was written since start (see showsAlready). */
  private readonly statusWritten = new Set<string>();
  /** Sources found showing their status, with what it was checked against. */
  private readonly statusChecked = new WeakMap<object, { st: SourceStatus; version: string }>();

  /**
   * What the last pass that found every source showing its status looked at: a pass with the same
   * lists, the same source statuses and no new device failure has nothing to check.
   */
  private settled: readonly unknown[] | undefined;

  constructor(private readonly d: SourceStatusDeps) {}

  /** Every virtual service of a source is live: it has its VIP, and each is on the device, not failed. */
  live(source: SourceStatus): boolean {
    const status = this.resolved(source);
    return (
      status.vip !== undefined &&
      status.virtualServices.length > 0 &&
      status.virtualServices.every((n) => !this.down(n))
    );
  }

  /**
   * Desired virtual services the device does not hold yet (a create held by the pass's gates, or
   * not applied yet), as the last write() was told: a source is not given an address its device
   * does not serve. They do not count as failed: their status comes once they land.
   */
  private unprogrammed: ReadonlySet<string> = new Set();

  /** A virtual service that failed on the device or is not on it yet. */
  private down(vs: string): boolean {
    return this.d.state.failed('virtualService', vs) || this.unprogrammed.has(vs);
  }

  /** A source status with the address its VIP stands for (an `auto:` VIP: the device's, or none yet). */
  private resolved(st: SourceStatus): SourceStatus {
    const auto = (v: string | undefined) => autoVipGroup(v) !== undefined;
    if (!auto(st.vip) && !st.moreVips?.some(auto)) return st;
    const at = (v: string | undefined) => resolveVip(v, () => this.allocated);
    const more = st.moreVips?.map(at).filter((v): v is string => v !== undefined);
    return { ...st, vip: at(st.vip), ...(more ? { moreVips: more } : {}) };
  }

  /** The device's addresses as this pass read them (write() reads them once; live() after it). */
  private allocated: ReadonlyMap<string, string> | undefined;
  /** The last allocated addresses seen and their text (allocatedText). */
  private lastAllocated: { map: ReadonlyMap<string, string>; text: string } | undefined;

  /** An Ingress's status: the VIP once every virtual service of it is programmed. */
  private ingressWant(status: SourceStatus): LbIngress[] {
    const r = this.resolved(status);
    if (r.vip === undefined) return [];
    // Each address while every virtual service of its family is live (a dual-stack class keeps
    // its IPv4 address when its IPv6 twin fails, and the other way round).
    return [r.vip, ...(r.moreVips ?? [])].flatMap((ip): LbIngress[] => {
      const mine = r.virtualServices.filter((n) => isIPv6Name(n) === (vipFamily(ip) === 'IPv6'));
      if (mine.length === 0 || mine.some((n) => this.down(n))) return [];
      // The ports it is served on: HTTP, and HTTPS where the class has TLS hosts (a second one).
      const p = this.d.ingressPorts;
      const ports = p ? [p.http, ...(mine.length > 1 ? [p.https] : [])] : [];
      return [{ ip, ...(ports.length ? { ports: ports.map((port) => ({ port, protocol: 'TCP' })) } : {}) }];
    });
  }

  /** The device's allocated addresses as text, written out again only when the map is another. */
  private allocatedText(allocated: ReadonlyMap<string, string> | undefined): string {
    if (!allocated) return '';
    if (this.lastAllocated?.map !== allocated)
      this.lastAllocated = { map: allocated, text: JSON.stringify([...allocated]) };
    return this.lastAllocated.text;
  }

  /**
   * Writes what differs. `unprogrammed`: the desired virtual services not on the device yet (none
   * when absent); such a Service port reads NotProgrammed, such an Ingress address is left out,
   * until a later write finds it there.
   */
  async write(
    view: ClusterView,
    desired: DesiredResult,
    unprogrammed: ReadonlySet<string> = new Set(),
  ): Promise<void> {
    const allocated = (this.allocated = this.d.allocatedVips?.());
    this.unprogrammed = unprogrammed;
    // Which virtual services are still to land: a change of it checks every source again.
    const waiting = [...unprogrammed].sort().join(' ');
    const inputs = [
      view.services,
      view.ingresses,
      desired.services,
      desired.ingresses,
      this.d.state.failureVersion,
      this.allocatedText(allocated),
      waiting,
    ];
    if (this.settled?.every((x, i) => x === inputs[i])) return;
    this.settled = undefined;
    let issued = false;
    const patch = async (kind: 'Service' | 'Ingress', ns: string, name: string, want: LbIngress[]) => {
      await this.d.writer.write(kind, ns, name, want);
      this.statusWritten.add(`${kind}/${ns}/${name}`);
    };
    // Status writes are independent of each other: a bounded number in flight at once.
    const writes = new PQueue({ concurrency: 16 });
    let failure: unknown;
    const run = (task: () => Promise<void>) => {
      issued = true;
      writes.add(task).catch((err: unknown) => {
        failure ??= err;
      });
    };
    // A Service or Ingress object (the cache's, replaced on any change of it) found showing what
    // its source status asks is not checked again until one of the three changes.
    // The device's failures and (where it allocates VIPs) its addresses: a change of either checks again.
    const version = `${this.d.state.failureVersion}|${String(inputs[5])}|${waiting}`;
    const checked = (o: object, st: SourceStatus): boolean => {
      const c = this.statusChecked.get(o);
      return c !== undefined && c.st === st && c.version === version;
    };
    for (const svc of view.services) {
      const st = desired.services.get(`${svc.metadata.namespace}/${svc.metadata.name}`);
      if (!st || checked(svc, st)) continue;
      const want = serviceIngress(
        svc,
        this.resolved(st),
        this.d.clusterName,
        this.d.ipMode,
        (vs) => this.d.state.failure('virtualService', vs),
        (vs) => unprogrammed.has(vs),
      );
      const written = this.statusWritten.has(`Service/${svc.metadata.namespace}/${svc.metadata.name}`);
      if (!showsAlready(svc.status.loadBalancer.ingress, want, written))
        run(() => patch('Service', svc.metadata.namespace, svc.metadata.name, want));
      else this.statusChecked.set(svc, { st, version });
    }
    for (const ing of view.ingresses) {
      const st = desired.ingresses.get(`${ing.metadata.namespace}/${ing.metadata.name}`);
      if (!st || checked(ing, st)) continue;
      const want = this.ingressWant(st);
      const written = this.statusWritten.has(`Ingress/${ing.metadata.namespace}/${ing.metadata.name}`);
      if (!showsAlready(ing.status.loadBalancer.ingress, want, written))
        run(() => patch('Ingress', ing.metadata.namespace, ing.metadata.name, want));
      else this.statusChecked.set(ing, { st, version });
    }
    await writes.onIdle();
    if (failure) throw failure;
    this.settled = issued ? undefined : inputs;
  }
}
