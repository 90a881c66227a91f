/**
 * What every Avi object npl-lb writes carries, and how it is read back: the owner mark
 * (`created_by: npl-lb-<cluster>`; a VsVip, a health monitor and a persistence profile, which have no such field, carry
 * the clustername marker), the markers (clustername, namespace, service), references by name, and
 * the checksum that says whether an object needs writing (its `cloud_config_cksum`, or a marker
 * where the type has none). Pure.
 */
import { createHash } from 'node:crypto';
import { certificateSum } from './certificates.ts';

export type AviObject = Record<string, unknown> & { name: string };
export type AviType =
  | 'pool'
  | 'poolgroup'
  | 'vsvip'
  | 'httppolicyset'
  | 'virtualservice'
  | 'sslkeyandcertificate'
  | 'vsdatascriptset'
  | 'healthmonitor'
  | 'pkiprofile'
  | 'applicationprofile'
  | 'applicationpersistenceprofile';

export const createdBy = (owner: string): string => `npl-lb-${owner}`;
export const ownerOf = (createdByValue: unknown): string | undefined =>
  typeof createdByValue === 'string' ? createdByValue.replace(/^npl-lb-/, '') : undefined;

export const byName = (type: string, name: string): string => `/api/${type}?name=${encodeURIComponent(name)}`;
export const markers = (owner: string, source: string, extra: Record<string, string> = {}) => {
  const [namespace = '', name = ''] = source.split('/');
  return [
    { key: 'clustername', values: [owner] },
    ...(namespace ? [{ key: 'namespace', values: [namespace] }] : []),
    ...(name ? [{ key: 'service', values: [name] }] : []),
    ...Object.entries(extra).map(([key, v]) => ({ key, values: [v] })),
  ];
};
export const markerValue = (o: Record<string, unknown>, key: string): string | undefined =>
  (o.markers as { key: string; values?: string[] }[] | undefined)?.find((m) => m.key === key)?.values?.[0];

/** The checksum of an object as we render it (without the checksum fields themselves). */
export function checksum(o: Record<string, unknown>): string {
  const { cloud_config_cksum: _a, vsvip_cloud_config_cksum: _b, ...rest } = o;
  return createHash('sha256').update(JSON.stringify(rest)).digest('hex').slice(0, 16);
}

/** Types without a checksum field carry ours in a marker. */
export const SUM_MARKER = 'npl-lb-cksum';

/** The object with its checksum: in its checksum field, or (types without one) in a marker. */
const SUM_IN_MARKER = new Set<AviType>([
  'vsdatascriptset',
  'healthmonitor',
  'pkiprofile',
  'applicationpersistenceprofile',
]);

export const withSum = (type: AviType, o: AviObject): AviObject =>
  SUM_IN_MARKER.has(type)
    ? { ...o, markers: [...((o.markers as unknown[]) ?? []), { key: SUM_MARKER, values: [checksum(o)] }] }
    : { ...o, [type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum']: checksum(o) };

/** The checksum an object carries, as withSum put it there ('' when none). */
export function storedSum(type: AviType, o: Record<string, unknown>): string {
  if (type === 'sslkeyandcertificate') return certificateSum(o);
  if (SUM_IN_MARKER.has(type)) return markerValue(o, SUM_MARKER) ?? '';
  return String(o[type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum'] ?? '');
}

export const uuidOf = (refValue: unknown): string =>
  String(refValue ?? '')
    .replace(/[?#].*$/, '')
    .split('/')
    .pop() ?? '';

/** Types without a `created_by` field: ours carry the clustername marker. */
const OWNER_IN_MARKER = new Set<AviType>(['vsvip', 'healthmonitor', 'applicationpersistenceprofile']);

/** Whether an object carries our owner mark (created_by, or where the type has none its clustername marker). */
export function ownedBy(type: AviType, o: Record<string, unknown>, owner: string): boolean {
  return OWNER_IN_MARKER.has(type)
    ? markerValue(o, 'clustername') === owner
    : o.created_by === createdBy(owner);
}
