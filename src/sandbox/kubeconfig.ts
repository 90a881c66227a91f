/**
 * The kubeconfig the sandbox writes: one cluster, one user, one context named `npl-lb-sandbox`.
 * Plain HTTP needs `insecure-skip-tls-verify: true` for client-node to accept it.
 */
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  /** PEM of the server certificate, trusted as the cluster CA. */
  caPem?: string;
  token?: string;
  name?: string;
}

export function renderKubeconfig(input: KubeconfigInput): string {
  const name = input.name ?? 'npl-lb-sandbox';
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caPem) cluster['certificate-authority-data'] = Buffer.from(input.caPem).toString('base64');
  else cluster['insecure-skip-tls-verify'] = true;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name, user: input.token ? { token: input.token } : {} }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}
