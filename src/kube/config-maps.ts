/**
 * ConfigMaps, as the controller's cache keeps them: only the `ca.crt` key (the CA bundles a
 * BackendTLSPolicy names, GEP-1897, and a Gateway's client certificate validation); every other key is dropped at the boundary, so a large
 * ConfigMap of someone else's costs its metadata alone.
 */
import { z } from 'zod';
import { objectMetaSchema } from './objects.ts';

/** The key a CA bundle is read from (the Gateway API's Core support). */
export const CA_KEY = 'ca.crt';

export const caConfigMapSchema = z
  .object({
    metadata: objectMetaSchema,
    data: z.record(z.string(), z.string()).nullish(),
  })
  .transform((cm) => ({
    metadata: cm.metadata,
    ...(typeof cm.data?.[CA_KEY] === 'string' ? { caCrt: cm.data[CA_KEY] } : {}),
  }));

export type CaConfigMap = z.infer<typeof caConfigMapSchema>;

/** ConfigMaps by namespace and name, indexed on the first lookup (a pass that asks for none pays nothing). */
export function caConfigMapLookup(
  list: readonly CaConfigMap[] | undefined,
): (namespace: string, name: string) => CaConfigMap | undefined {
  let index: Map<string, CaConfigMap> | undefined;
  return (ns, name) => {
    index ??= new Map((list ?? []).map((c) => [`${c.metadata.namespace}/${c.metadata.name}`, c]));
    return index.get(`${ns}/${name}`);
  };
}
