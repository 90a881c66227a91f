/**
 * Where a subcommand's kubeconfig comes from, in the order every Kubernetes tool uses:
 * --kubeconfig, else in-cluster (service account), else $KUBECONFIG, else ~/.kube/config.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ErrorCodes, NplError } from '../runtime/errors.ts';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeconfigSource {
  flag?: string | undefined;
  env?: NodeJS.ProcessEnv;
  home?: string;
  inClusterTokenPath?: string;
}

export type KubeconfigOrigin = 'flag' | 'in-cluster' | 'env' | 'home';

export function loadKubeConfig(src: KubeconfigSource = {}): { kc: KubeConfig; origin: KubeconfigOrigin } {
  const env = src.env ?? process.env;
  const kc = new KubeConfig();
  const fromFile = (path: string, origin: KubeconfigOrigin) => {
    if (!existsSync(path))
      throw new NplError(ErrorCodes.KUBECONFIG_MISSING, `kubeconfig ${path} does not exist`);
    kc.loadFromFile(path);
    return { kc, origin };
  };
  if (src.flag) return fromFile(src.flag, 'flag');
  if (env.KUBERNETES_SERVICE_HOST && existsSync(src.inClusterTokenPath ?? SERVICE_ACCOUNT_TOKEN)) {
    kc.loadFromCluster();
    return { kc, origin: 'in-cluster' };
  }
  const fromEnv = env.KUBECONFIG?.split(':').find((p) => p && existsSync(p));
  if (fromEnv) return fromFile(fromEnv, 'env');
  const home = join(src.home ?? homedir(), '.kube', 'config');
  if (existsSync(home)) return fromFile(home, 'home');
  throw new NplError(
    ErrorCodes.KUBECONFIG_MISSING,
    'no kubeconfig: pass --kubeconfig, run in a Pod, set $KUBECONFIG, or create ~/.kube/config',
  );
}
