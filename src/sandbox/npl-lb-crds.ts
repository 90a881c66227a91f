/**
 * npl-lb's own CRDs (the chart's `crds/`, read from there: one copy), put into a running sandbox
 * through its API as `helm install` would: what the demo and tests use to have BackendPolicies
 * served.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';

const CRDS = new URL('../../deploy/helm/npl-lb/crds/', import.meta.url);

/** Creates the CRDs (an existing one is left as it is); returns how many there are. */
export async function installNplLbCrds(
  server: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const files = readdirSync(CRDS).filter((f) => f.endsWith('.yaml'));
  for (const f of files) {
    const crd = parse(readFileSync(new URL(f, CRDS), 'utf8')) as unknown;
    const res = await fetch(`${server}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(crd),
    });
    if (res.status !== 201 && res.status !== 409) {
      throw new Error(`npl-lb CRD ${f}: ${res.status} ${(await res.text()).slice(0, 300)}`);
    }
    await res.body?.cancel();
  }
  return files.length;
}
