/**
 * `npm run kubectl -- <args>` and `npm run helm -- <args>`: the kubectl v1.35 and Helm 4 npl-lb
 * tests with, pointed at the demo's sandbox unless KUBECONFIG says otherwise.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ensureKubeTools } from '../test/support/kube-tools.ts';

const [tool, ...args] = process.argv.slice(2);
const tools = ensureKubeTools();
if (tool !== 'kubectl' && tool !== 'helm') throw new Error('usage: kube-tool.ts kubectl|helm [args]');
const demoConfig = resolve('.npl-lb', 'kubeconfig');
const env = { ...process.env };
if (!env.KUBECONFIG && existsSync(demoConfig)) env.KUBECONFIG = demoConfig;
const r = spawnSync(tools[tool], args, { stdio: 'inherit', env });
process.exitCode = r.status ?? 1;
