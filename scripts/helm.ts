/**
 * `npm run helm -- <args>`: the Helm 4 npl-lb tests with, pointed at the demo's sandbox unless
 * KUBECONFIG says otherwise.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureKubeTools } from '../test/support/kube-tools.ts';

const { helm } = ensureKubeTools();
const demoConfig = resolve('.npl-lb', 'kubeconfig');
const env = { ...process.env };
if (!env.KUBECONFIG && existsSync(demoConfig)) env.KUBECONFIG = demoConfig;
const r = spawnSync(helm, process.argv.slice(2), { stdio: 'inherit', env });
process.exitCode = r.status ?? 1;
