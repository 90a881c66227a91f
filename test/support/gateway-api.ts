/**
 * The Gateway API for tests on the sandbox: its CRDs from the bundled standard install (v1.6.1,
 * src/sandbox/gateway-api), created through the API as `kubectl apply` would.
 */
import assert from 'node:assert/strict';
import { installGatewayApiCrds } from '../../src/sandbox/gateway-api.ts';
import { api } from './sandbox.ts';

/** Creates the CRDs of the standard install (not its admission policy) and checks they are served. */
export async function installGatewayApi(url: string, headers: Record<string, string> = {}): Promise<void> {
  assert.ok((await installGatewayApiCrds(url, headers)) >= 8);
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
