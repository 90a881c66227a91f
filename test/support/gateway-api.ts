/**
 * The Gateway API for tests on the sandbox: its CRDs from the bundled standard install (v1.6.1),
 * created through the API as `kubectl apply` would, and small builders for what tests create.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { api } from './sandbox.ts';

const INSTALL = new URL('specs/gateway-api/standard-install-v1.6.1.yaml', import.meta.url);

/** Creates the CRDs of the standard install (not its admission policy) and waits until served. */
export async function installGatewayApi(url: string, headers: Record<string, string> = {}): Promise<void> {
  const crds = parseAllDocuments(readFileSync(INSTALL, 'utf8'))
    .map((d) => d.toJSON() as { kind?: string } | null)
    .filter((d) => d?.kind === 'CustomResourceDefinition');
  for (const crd of crds) {
    const r = await api(url, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd, headers);
    assert.ok(
      r.status === 201 || r.status === 409,
      `CRD: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`,
    );
  }
  const served = await api(
    url,
    'GET',
    '/apis/gateway.networking.k8s.io/v1/gatewayclasses',
    undefined,
    headers,
  );
  assert.equal(served.status, 200);
}

export const GW_API = '/apis/gateway.networking.k8s.io/v1';
