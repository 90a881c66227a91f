/**
 * Our objects on the Avi Controller as last read or written, and the writes to them: one object at
 * a time, each only when its checksum changed, through one limiter of calls shared by overlapping
 * applies; a write that lost a race (409, 412, a 404 on update) reads the object again and retries
 * once; a delete of an object still referred to is `InUse` (retryable). Never an object without our
 * owner mark. The relations the adapter follows (a virtual service's VsVip, SNI children, pool
 * groups) are read from here.
 */
import PQueue from 'p-queue';
import type { ApplyError } from '../../src/adapter/contract.ts';
import { AdapterError, type AdapterErrorCode } from '../../src/adapter/errors.ts';
import { poolGroupName } from './http-policy.ts';
import { type AviObject, type AviType, ownedBy, storedSum } from './objects.ts';
import { type AviSession, errorText } from './session.ts';
import { isSniChild, sniChildName } from './vs-objects.ts';
import { allocatedVip } from './vsvip.ts';

type Raw = Record<string, unknown>;

/** A change that failed, with its stable code and whether retrying can help. */
export class Failure extends AdapterError {
  readonly error: ApplyError;
  constructor(code: AdapterErrorCode, message: string, terminal: boolean) {
    super(code, message, { terminal });
    this.error = { code, message, terminal };
  }
}

export const fail = (code: AdapterErrorCode, message: string, terminal: boolean): never => {
  throw new Failure(code, message, terminal);
};

export class AviDeviceObjects {
  readonly stats = { writes: 0, skippedUnchanged: 0 };
  /** Every write to the controller, shared by concurrent applies. */
  private readonly calls: PQueue;

  constructor(
    private readonly session: AviSession,
    private readonly owner: string,
    /** The device's objects by type and name, as read (observe) and written since. */
    readonly cache: Map<AviType, Map<string, Raw>>,
    concurrency: number,
  ) {
    this.calls = new PQueue({ concurrency });
  }

  /** Writes to each type's objects in the cache so far: what is derived from them is kept until it moves. */
  private readonly versions = new Map<AviType, number>();

  version(type: AviType): number {
    return this.versions.get(type) ?? 0;
  }

  /** The type's cached objects changed (a write, a read again, observe's whole read). */
  touch(type: AviType): void {
    this.versions.set(type, this.version(type) + 1);
  }

  /**
   * The address Avi's IPAM gave each VIP group, from our VsVips as last read or written: the same
   * map until a VsVip is written, read again or observed (every pass asks; a walk of every VsVip
   * per pass grew with the cluster).
   */
  allocatedVips(): ReadonlyMap<string, string> {
    const version = this.version('vsvip');
    if (this.allocated?.version === version) return this.allocated.vips;
    const vips = new Map<string, string>();
    for (const o of this.cache.get('vsvip')!.values()) {
      const found = ownedBy('vsvip', o, this.owner) ? allocatedVip(o) : undefined;
      if (found) vips.set(found[0], found[1]);
    }
    this.allocated = { version, vips };
    return vips;
  }
  private allocated: { version: number; vips: ReadonlyMap<string, string> } | undefined;

  current(type: AviType, name: string): Raw | undefined {
    return this.cache.get(type)!.get(name);
  }

  /** The name of the VsVip a virtual service of ours refers to, as last read or written. */
  vsVipOf(vs: string): string | undefined {
    const ref = this.current('virtualservice', vs)?.vsvip_ref;
    if (!ref) return undefined;
    const uuid = String(ref)
      .replace(/[?#].*$/, '')
      .split('/')
      .pop();
    for (const [name, o] of this.cache.get('vsvip')!) if (o.uuid === uuid) return name;
    return undefined;
  }

  /** Removes a VsVip of ours that no virtual service refers to any more (shared ones stay while used). */
  async removeVsVipIfUnused(name: string): Promise<void> {
    const uuid = this.current('vsvip', name)?.uuid;
    if (uuid === undefined) return;
    for (const o of this.cache.get('virtualservice')!.values())
      if (
        String(o.vsvip_ref ?? '')
          .replace(/[?#].*$/, '')
          .endsWith(`/${String(uuid)}`)
      )
        return;
    await this.remove('vsvip', name);
  }

  /** Our SNI children of one virtual service (by their name, as sniChildName gives it). */
  sniChildrenOf(vs: string): string[] {
    const prefix = sniChildName(vs, '');
    return [...this.cache.get('virtualservice')!.entries()]
      .filter(([n, o]) => n.startsWith(prefix) && isSniChild(o) && ownedBy('virtualservice', o, this.owner))
      .map(([n]) => n);
  }

  /** Our poolgroups of one L7 virtual service. */
  groupsOf(vs: string): string[] {
    const prefix = poolGroupName(vs, '');
    return [...this.cache.get('poolgroup')!.keys()].filter((n) => n.startsWith(prefix));
  }

  /**
   * Creates or updates one object; a write only when its checksum changed, unless `force` (the
   * plan found the object's fields on the device unlike ours though the checksum we left there
   * still matches: changed by hand).
   */
  async upsert(type: AviType, o: AviObject, force = false, retried = false): Promise<void> {
    const cur = this.current(type, o.name);
    if (cur && !ownedBy(type, cur, this.owner))
      fail('NotOwned', `${type} ${o.name} is not ours; left alone`, true);
    if (cur && !force && storedSum(type, cur) === storedSum(type, o)) {
      this.stats.skippedUnchanged++;
      return;
    }
    this.stats.writes++;
    const r = await this.calls.add(() =>
      cur
        ? this.session.call('PUT', `/api/${type}/${String(cur.uuid)}`, {
            ...o,
            _last_modified: cur._last_modified,
          })
        : this.session.call('POST', `/api/${type}`, o),
    );
    if (r.status === 200 || r.status === 201) {
      this.cache.get(type)!.set(o.name, r.body as Raw);
      this.touch(type);
      return;
    }
    if (!retried && (r.status === 409 || r.status === 412 || (r.status === 404 && cur))) {
      // Someone else wrote first (409: it exists; 412: it changed; 404: it went): read it again, retry once.
      await this.reread(type, o.name);
      return this.upsert(type, o, force, true);
    }
    this.failed(`${cur ? 'PUT' : 'POST'} ${type} ${o.name}`, r.status, r.body);
  }

  private async reread(type: AviType, name: string): Promise<void> {
    const r = await this.session.call('GET', `/api/${type}?name=${encodeURIComponent(name)}`);
    if (r.status !== 200) this.failed(`GET ${type} ${name}`, r.status, r.body);
    const found = (r.body as { results?: Raw[] }).results?.[0];
    if (found) this.cache.get(type)!.set(name, found);
    else this.cache.get(type)!.delete(name);
    this.touch(type);
  }

  async remove(type: AviType, name: string): Promise<void> {
    const cur = this.current(type, name);
    if (!cur) return;
    if (!ownedBy(type, cur, this.owner)) fail('NotOwned', `${type} ${name} is not ours; left alone`, true);
    this.stats.writes++;
    const r = await this.calls.add(() => this.session.call('DELETE', `/api/${type}/${String(cur.uuid)}`));
    if (r.status === 200 || r.status === 204 || r.status === 404) {
      this.cache.get(type)!.delete(name);
      this.touch(type);
      return;
    }
    // Still referred to by another object: controllers answer 400 or 403 (409 in some versions),
    // naming the referrers. It goes once they do (a later pass).
    if ([400, 403, 409].includes(r.status) && /referred by|in use/i.test(errorText(r.body)))
      fail('InUse', `DELETE ${type} ${name}: ${errorText(r.body)}`, false);
    this.failed(`DELETE ${type} ${name}`, r.status, r.body);
  }

  private failed(what: string, status: number, body: unknown): never {
    const message = `${what}: ${status} ${errorText(body)}`;
    if (status === 400) return fail('Invalid', message, true);
    if (status === 409) return fail('Conflict', message, false);
    return fail(status === 401 || status === 403 ? 'Unauthorized' : 'Unavailable', message, false);
  }
}
