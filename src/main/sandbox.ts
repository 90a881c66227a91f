/**
 * `npl-lb sandbox`: runs the in-memory Kubernetes API server until SIGINT or SIGTERM.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { renderKubeconfig } from '../sandbox/kubeconfig.ts';
import { DEFAULT_NODE_PORT_RANGE, parsePortRange } from '../sandbox/allocator.ts';
import { type SandboxServer, startSandbox } from '../sandbox/server.ts';
import { selfSignedCertificate } from '../runtime/tls.ts';

export const SANDBOX_FLAGS = {
  host: { type: 'string', description: 'address to listen on', default: '127.0.0.1' },
  port: { type: 'string', description: 'port to listen on, 0 for any free port', default: '0' },
  'kubeconfig-out': { type: 'string', description: 'where to write a kubeconfig for kubectl and npl-lb' },
  tls: { type: 'boolean', description: 'serve HTTPS with a generated self-signed certificate' },
  token: {
    type: 'string',
    description: 'require this bearer token (generated when --tls is set without one)',
  },
  'service-node-port-range': {
    type: 'string',
    description: 'node ports for Services, START-END (as kube-apiserver)',
    default: '30000-32767',
  },
  'endpoint-slices': {
    type: 'boolean',
    description: "keep Services' EndpointSlices from their Pods, as kube-controller-manager does",
  },
  workloads: {
    type: 'boolean',
    description:
      "run Deployments, ReplicaSets and DaemonSets as kube-controller-manager, the scheduler and a kubelet would (their Pods Running on the Nodes; those of the catalogue's images, npl-lb/demo-web and echo-basic, as processes on addresses of a loopback Pod CIDR of their Node, the others simulated)",
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema.extend({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  'kubeconfig-out': z.string().min(1).optional(),
  tls: z.boolean().default(false),
  'endpoint-slices': z.boolean().default(false),
  workloads: z.boolean().default(false),
  token: z.string().min(1).optional(),
  'service-node-port-range': z.string().transform((v, ctx) => {
    const r = parsePortRange(v);
    if (!r) ctx.addIssue({ code: 'custom', message: 'must be START-END within 1-65535, e.g. 30000-32767' });
    return r ?? DEFAULT_NODE_PORT_RANGE;
  }),
});

export type SandboxFlags = z.infer<typeof schema>;

export const SANDBOX_HELP = helpText(
  'sandbox',
  'An in-memory Kubernetes API server for local use and tests. Prints its URL and writes a kubeconfig.',
  SANDBOX_FLAGS,
);

export function parseSandboxFlags(argv: string[], env: NodeJS.ProcessEnv = process.env): SandboxFlags {
  return parseFlags(argv, SANDBOX_FLAGS, schema, env);
}

export interface RunningSandbox {
  sandbox: SandboxServer;
  kubeconfigPath: string | undefined;
  token: string | undefined;
}

export async function startSandboxFromFlags(flags: SandboxFlags, log: Logger): Promise<RunningSandbox> {
  const token = flags.token ?? (flags.tls ? crypto.randomUUID() : undefined);
  const tls = flags.tls ? await selfSignedCertificate(flags.host) : undefined;
  const sandbox = await startSandbox({
    host: flags.host,
    port: flags.port,
    ...(tls ? { tls } : {}),
    ...(token ? { token } : {}),
    nodePortRange: flags['service-node-port-range'],
    endpointSlices: flags['endpoint-slices'],
    workloads: flags.workloads,
    logger: log,
  });
  const out = flags['kubeconfig-out'];
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      renderKubeconfig({
        server: sandbox.url,
        ...(tls ? { caPem: tls.cert } : {}),
        ...(token ? { token } : {}),
      }),
      {
        mode: 0o600,
      },
    );
  }
  return { sandbox, kubeconfigPath: out, token };
}

export async function runSandbox(argv: string[]): Promise<number> {
  const flags = parseSandboxFlags(argv);
  if (flags.help) {
    process.stdout.write(SANDBOX_HELP);
    return 0;
  }
  const log = createLogger({ name: 'sandbox', format: flags['log-format'], level: flags['log-level'] });
  const running = await startSandboxFromFlags(flags, log);
  process.stdout.write(`sandbox listening on ${running.sandbox.url}\n`);
  if (running.kubeconfigPath) process.stdout.write(`kubeconfig written to ${running.kubeconfigPath}\n`);
  log.info({ url: running.sandbox.url, kubeconfig: running.kubeconfigPath }, 'sandbox started');
  await waitForSignal();
  await running.sandbox.close();
  log.info('sandbox stopped');
  return 0;
}

export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const done = (sig: NodeJS.Signals): void => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve(sig);
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}
