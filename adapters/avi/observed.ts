/**
 * What observe() read from the controller, back in the model: our pools, virtual services (an
 * HTTPS parent with its SNI children as one) and certificates, and everyone else's by name and
 * owner. Pure.
 */
import type { Observed } from '../../src/adapter/changes.ts';
import { parseCertificate } from './certificates.ts';
import {
  type AviType,
  balanceDrifted,
  createdBy,
  type Lookup,
  ownedBy,
  ownerOf,
  parsePool,
} from './objects.ts';
import type { AviSession } from './session.ts';
import { isSniChild, parseVirtualService } from './vs-objects.ts';

type Raw = Record<string, unknown>;

/**
 * Everything observe() lists, at once: pools, virtual services and VsVips (everyone's: foreign ones
 * are named), certificates, and our pool groups, policy sets, DataScript sets, PKI and application profiles
 * (`created_by`); monitors and profiles to know system ones by name.
 */
export async function readAll(
  session: AviSession,
  owner: string,
): Promise<{ read: Map<AviType, Raw[]>; named: Raw[] }> {
  const mine = `&created_by=${encodeURIComponent(createdBy(owner))}`;
  const [pools, vss, vsvips, pgs, sets, certs, scripts, hms, nps, persistence, pkis, apps] =
    await Promise.all([
      session.list('pool'),
      session.list('virtualservice'),
      session.list('vsvip'),
      session.list('poolgroup', mine),
      session.list('httppolicyset', mine),
      session.list('sslkeyandcertificate'),
      session.list('vsdatascriptset', mine),
      session.list('healthmonitor'),
      session.list('networkprofile'),
      session.list('applicationpersistenceprofile'),
      session.list('pkiprofile', mine),
      session.list('applicationprofile', mine),
    ]);
  const read = new Map<AviType, Raw[]>([
    ['pool', pools],
    ['virtualservice', vss],
    ['vsvip', vsvips],
    ['poolgroup', pgs],
    ['httppolicyset', sets],
    ['sslkeyandcertificate', certs],
    ['vsdatascriptset', scripts],
    ['healthmonitor', hms.filter((h) => ownedBy('healthmonitor', h, owner))],
    ['pkiprofile', pkis],
    ['applicationprofile', apps],
    // Ours (a route's session cookie, route-session.ts) read whole; every one known by name.
    [
      'applicationpersistenceprofile',
      persistence.filter((p) => ownedBy('applicationpersistenceprofile', p, owner)),
    ],
  ]);
  return { read, named: [...hms, ...nps, ...persistence] };
}

/** Objects converted between two turns of the event loop (observedModel). */
const SLICE = 100;
const nextTurn = () => new Promise<void>((r) => setImmediate(r));

/**
 * `read`: the objects listed, by type; `named`: system objects known by name (monitors, profiles).
 * Converted a slice at a time, the event loop turning in between: a whole read of thousands of
 * objects (the sweep's, behind the passes) never holds a change's pass for its whole length.
 */
export async function observedModel(
  read: ReadonlyMap<AviType, Raw[]>,
  named: Raw[],
  owner: string,
): Promise<Observed> {
  let done = 0;
  const slice = async () => {
    if (++done % SLICE === 0) await nextTurn();
  };
  const lookup: Lookup = { byUuid: new Map(), names: new Map() };
  for (const list of read.values()) for (const o of list) lookup.byUuid.set(String(o.uuid), o);
  for (const o of named) lookup.names.set(String(o.uuid), String(o.name));
  const observed: Observed = { owned: { pools: [], virtualServices: [], certificates: [] }, foreign: [] };
  const foreign = (kind: 'pool' | 'virtualService' | 'certificate', o: Raw) =>
    observed.foreign.push({ kind, name: String(o.name), owner: ownerOf(o.created_by) ?? 'unknown' });
  for (const p of read.get('pool') ?? []) {
    await slice();
    if (ownedBy('pool', p, owner)) {
      observed.owned.pools.push(parsePool(p, lookup));
      if (balanceDrifted(p, lookup)) (observed.drifted ??= []).push({ kind: 'pool', name: String(p.name) });
    } else foreign('pool', p);
  }
  const vss = read.get('virtualservice') ?? [];
  /** Our SNI children by the uuid of their parent. */
  const children = new Map<string, Raw[]>();
  for (const v of vss) {
    if (!isSniChild(v) || !ownedBy('virtualservice', v, owner)) continue;
    const parent =
      String(v.vh_parent_vs_ref ?? '')
        .replace(/[?#].*$/, '')
        .split('/')
        .pop() ?? '';
    children.set(parent, [...(children.get(parent) ?? []), v]);
  }
  for (const v of vss) {
    await slice();
    if (!ownedBy('virtualservice', v, owner)) foreign('virtualService', v);
    else if (!isSniChild(v))
      observed.owned.virtualServices.push(parseVirtualService(v, lookup, children.get(String(v.uuid)) ?? []));
  }
  for (const c of read.get('sslkeyandcertificate') ?? []) {
    const model = ownedBy('sslkeyandcertificate', c, owner) ? parseCertificate(c) : undefined;
    if (model) observed.owned.certificates!.push(model);
    else foreign('certificate', c);
  }
  return observed;
}
