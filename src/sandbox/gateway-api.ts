/**
 * The Gateway API CRDs (standard channel v1.6.1, bundled beside this file with its license), put
 * into a running sandbox through its API as `kubectl apply` would: what the demo and tests use to
 * have Gateways, routes and ReferenceGrants served. The admission policy of the install is not
 * applied (the sandbox stores such policies without enforcing them).
 *
 * The experimental channel is offered for HTTPRoute alone (`channel: 'experimental'`): its CRD of
 * the same release, bundled beside (`config/crd/experimental` of the v1.6.1 tag), takes the
 * standard one's place, so that the fields only it has (a rule's `retry`) are stored, not pruned
 * (`npl-lb demo --gateway-api-channel experimental`, and the conformance runs that test them).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const INSTALL = new URL('./gateway-api/standard-install-v1.6.1.yaml', import.meta.url);
const EXPERIMENTAL_HTTPROUTES = new URL('./gateway-api/experimental-httproutes-v1.6.1.yaml', import.meta.url);

/** The release channels of the Gateway API's CRDs. */
export type GatewayApiChannel = 'standard' | 'experimental';

interface Crd {
  kind?: string;
  metadata?: { name?: string };
}

const crdsOf = (url: URL): Crd[] =>
  parseAllDocuments(readFileSync(url, 'utf8'))
    .map((d) => d.toJSON() as Crd | null)
    .filter((d): d is Crd => d?.kind === 'CustomResourceDefinition');

/** The CRDs of a channel: the standard install, its HTTPRoute the experimental one's where asked. */
export function gatewayApiCrds(channel: GatewayApiChannel = 'standard'): Crd[] {
  const standard = crdsOf(INSTALL);
  if (channel === 'standard') return standard;
  const [httpRoutes] = crdsOf(EXPERIMENTAL_HTTPROUTES);
  return standard.map((c) => (c.metadata?.name === httpRoutes!.metadata?.name ? httpRoutes! : c));
}

/** Creates the CRDs (an existing one is left as it is); returns how many the install holds. */
export async function installGatewayApiCrds(
  server: string,
  headers: Record<string, string> = {},
  channel: GatewayApiChannel = 'standard',
): Promise<number> {
  const crds = gatewayApiCrds(channel);
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
