/**
 * Test helper: a sandbox on a free loopback port, a kubeconfig file and a client-node KubeConfig
 * for it; everything is closed and removed when the test ends, pass or fail.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { type SandboxOptions, type SandboxServer, startSandbox } from '../../src/sandbox/server.ts';

export interface TestSandbox {
  sandbox: SandboxServer;
  url: string;
  kubeconfigPath: string;
  kc: KubeConfig;
  dir: string;
}

export async function useSandbox(
  t: Pick<TestContext, 'after'>,
  opts: SandboxOptions & { caPem?: string } = {},
): Promise<TestSandbox> {
  const sandbox = await startSandbox(opts);
  const dir = mkdtempSync(join(tmpdir(), 'npl-lb-test-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const text = renderKubeconfig({
    server: sandbox.url,
    ...(opts.caPem ? { caPem: opts.caPem } : {}),
    ...(opts.token ? { token: opts.token } : {}),
  });
  writeFileSync(kubeconfigPath, text);
  const kc = new KubeConfig();
  kc.loadFromString(text);
  t.after(async () => {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { sandbox, url: sandbox.url, kubeconfigPath, kc, dir };
}

/** fetch against the sandbox with JSON in and out. */
export async function api(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const init: RequestInit = { method, headers: { 'Content-Type': 'application/json', ...headers } };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(base + path, init);
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { raw: text };
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** Polls `check` until it returns true or `timeoutMs` passes; bounded, for event-driven assertions. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** The first address in a Service's `status.loadBalancer`, once the controller has written one. */
export async function serviceVip(
  url: string,
  namespace: string,
  name: string,
  timeoutMs = 15_000,
): Promise<string> {
  let vip = '';
  await eventually(
    async () => {
      const b = (await api(url, 'GET', `/api/v1/namespaces/${namespace}/services/${name}`)).body as {
        status?: { loadBalancer?: { ingress?: { ip?: string }[] } };
      };
      vip = b.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
      return vip !== '';
    },
    timeoutMs,
    `the VIP of Service ${namespace}/${name}`,
  );
  return vip;
}
