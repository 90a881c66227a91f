/**
 * An in-memory load balancer: the "device" the memory adapter talks to. It outlives adapters (so a
 * restart can be tested), keeps every object with its owner mark, and is strict the way real load
 * balancers are: duplicates, writes to missing objects, dangling references and deleting a pool
 * still in use are refused.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Certificate, Pool, VirtualService } from '../../src/model/types.ts';
import { certificateRefs as certRefs, poolRefs } from '../../src/model/refs.ts';
import { AdapterError } from '../../src/adapter/errors.ts';
import { MemberProber } from '../../src/runtime/member-prober.ts';

export interface StoredPool {
  owner: string;
  pool: Pool;
}

export interface StoredVirtualService {
  owner: string;
  vs: VirtualService;
}

export interface StoredCertificate {
  owner: string;
  cert: Certificate;
}

export class DeviceError extends AdapterError {
  constructor(
    override readonly code: 'AlreadyExists' | 'NotFound' | 'Invalid' | 'InUse' | 'NotOwned' | 'Unavailable',
    message: string,
  ) {
    super(code, message);
    this.name = 'DeviceError';
  }
}

/** What a device checks of a certificate before it takes it: PEM that parses, a key that matches. */
function validateCertificate(c: Certificate): void {
  if (!c.name || c.name.length > 63)
    throw new DeviceError('Invalid', `certificate name ${JSON.stringify(c.name)}: 1 to 63 characters`);
  try {
    const leaf = new X509Certificate(c.certPem);
    if (!leaf.checkPrivateKey(createPrivateKey(c.keyPem)))
      throw new DeviceError('Invalid', `certificate ${c.name}: the key does not match the certificate`);
  } catch (err) {
    if (err instanceof DeviceError) throw err;
    throw new DeviceError('Invalid', `certificate ${c.name}: ${(err as Error).message}`);
  }
}

function validatePool(p: Pool): void {
  if (!p.name || p.name.length > 63)
    throw new DeviceError('Invalid', `pool name ${JSON.stringify(p.name)}: 1 to 63 characters`);
  for (const m of p.members) {
    if (!m.address) throw new DeviceError('Invalid', `pool ${p.name}: member without an address`);
    if (!Number.isInteger(m.port) || m.port < 1 || m.port > 65535) {
      throw new DeviceError('Invalid', `pool ${p.name}: member ${m.address} port ${m.port} out of range`);
    }
  }
}

/** The stored object of that name, if it is there and ours; NotFound or NotOwned otherwise. */
function ownedBy<T extends { owner: string }>(
  map: Map<string, T>,
  name: string,
  owner: string,
  what: string,
): T {
  const cur = map.get(name);
  if (!cur) throw new DeviceError('NotFound', `${what} ${name} not found`);
  if (cur.owner !== owner)
    throw new DeviceError('NotOwned', `${what} ${name} belongs to ${cur.owner || 'nobody we know'}`);
  return cur;
}

export class MemoryLoadBalancer {
  readonly pools = new Map<string, StoredPool>();
  readonly virtualServices = new Map<string, StoredVirtualService>();
  readonly certificates = new Map<string, StoredCertificate>();
  /** The device's health checks (TCP connects to loopback members). */
  readonly prober = new MemberProber({ intervalMs: 500 });
  /** Every write, in order: `create pool x`, ... (tests count writes with it). */
  readonly writes: string[] = [];

  private checkRefs(vs: VirtualService): void {
    if (!vs.name || vs.name.length > 63)
      throw new DeviceError('Invalid', `virtual service name ${JSON.stringify(vs.name)}: 1 to 63 characters`);
    for (const ref of poolRefs(vs)) {
      if (!this.pools.has(ref))
        throw new DeviceError('Invalid', `virtual service ${vs.name}: pool ${ref} does not exist`);
    }
    if (vs.kind === 'l7' && vs.protocol === 'HTTPS' && certRefs(vs).length === 0)
      throw new DeviceError('Invalid', `virtual service ${vs.name}: HTTPS needs at least one certificate`);
    for (const ref of certRefs(vs)) {
      if (!this.certificates.has(ref))
        throw new DeviceError('Invalid', `virtual service ${vs.name}: certificate ${ref} does not exist`);
    }
  }

  createCertificate(owner: string, cert: Certificate): void {
    validateCertificate(cert);
    if (this.certificates.has(cert.name))
      throw new DeviceError('AlreadyExists', `certificate ${cert.name} already exists`);
    this.certificates.set(cert.name, { owner, cert: structuredClone(cert) });
    this.writes.push(`create certificate ${cert.name}`);
  }

  /** Rotation: the certificate object is replaced in place, the virtual services using it keep it. */
  updateCertificate(owner: string, cert: Certificate): void {
    validateCertificate(cert);
    ownedBy(this.certificates, cert.name, owner, 'certificate');
    this.certificates.set(cert.name, { owner, cert: structuredClone(cert) });
    this.writes.push(`update certificate ${cert.name}`);
  }

  deleteCertificate(owner: string, name: string): void {
    ownedBy(this.certificates, name, owner, 'certificate');
    for (const v of this.virtualServices.values()) {
      if (certRefs(v.vs).includes(name))
        throw new DeviceError('InUse', `certificate ${name} is used by virtual service ${v.vs.name}`);
    }
    this.certificates.delete(name);
    this.writes.push(`delete certificate ${name}`);
  }

  createPool(owner: string, pool: Pool): void {
    validatePool(pool);
    if (this.pools.has(pool.name)) throw new DeviceError('AlreadyExists', `pool ${pool.name} already exists`);
    this.pools.set(pool.name, { owner, pool: structuredClone(pool) });
    this.writes.push(`create pool ${pool.name}`);
  }

  updatePool(owner: string, pool: Pool): void {
    validatePool(pool);
    ownedBy(this.pools, pool.name, owner, 'pool');
    this.pools.set(pool.name, { owner, pool: structuredClone(pool) });
    this.writes.push(`update pool ${pool.name}`);
  }

  deletePool(owner: string, name: string): void {
    ownedBy(this.pools, name, owner, 'pool');
    for (const v of this.virtualServices.values()) {
      if (poolRefs(v.vs).includes(name))
        throw new DeviceError('InUse', `pool ${name} is used by virtual service ${v.vs.name}`);
    }
    this.pools.delete(name);
    this.writes.push(`delete pool ${name}`);
  }

  createVirtualService(owner: string, vs: VirtualService): void {
    if (this.virtualServices.has(vs.name))
      throw new DeviceError('AlreadyExists', `virtual service ${vs.name} already exists`);
    this.checkRefs(vs);
    this.virtualServices.set(vs.name, { owner, vs: structuredClone(vs) });
    this.writes.push(`create virtualService ${vs.name}`);
  }

  updateVirtualService(owner: string, vs: VirtualService): void {
    ownedBy(this.virtualServices, vs.name, owner, 'virtual service');
    this.checkRefs(vs);
    this.virtualServices.set(vs.name, { owner, vs: structuredClone(vs) });
    this.writes.push(`update virtualService ${vs.name}`);
  }

  deleteVirtualService(owner: string, name: string): void {
    ownedBy(this.virtualServices, name, owner, 'virtual service');
    this.virtualServices.delete(name);
    this.writes.push(`delete virtualService ${name}`);
  }
}
