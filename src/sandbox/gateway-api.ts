/**
 * The Gateway API CRDs (standard channel v1.6.1, bundled beside this file with its license), put
 * into a running sandbox through its API as `kubectl apply` would: what the demo and tests use to
 * have Gateways, routes and ReferenceGrants served. The admission policy of the install is not
 * applied (the sandbox stores such policies without enforcing them).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const INSTALL = new URL('./gateway-api/standard-install-v1.6.1.yaml', import.meta.url);

/** Creates the CRDs (an existing one is left as it is); returns how many the install holds. */
export async function installGatewayApiCrds(
  server: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const crds = parseAllDocuments(readFileSync(INSTALL, 'utf8'))
    .map((d) => d.toJSON() as { kind?: string } | null)
    .filter((d) => d?.kind === 'CustomResourceDefinition');
  for (const crd of crds) {
    const res = await fetch(`${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(crd),
    });
    if (res.status !== 201 && res.status !== 409) {
      throw new Error(`Gateway API CRD: ${res.status} ${(await res.text()).slice(0, 300)}`);
    }
    await res.body?.cancel();
  }
  return crds.length;
}
