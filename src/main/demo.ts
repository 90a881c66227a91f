/**
 * `npl-lb demo` (what `npm start` runs): the product on its embedded sandbox. Today that is the
 * sandbox API server with a kubeconfig in .npl-lb/ and instructions for kubectl; the agent,
 * controller and load-balancer simulators join it as they land.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { createLogger } from '../runtime/logger.ts';
import { startSandboxFromFlags, waitForSignal } from './sandbox.ts';

const DEMO_FLAGS = {
  port: { type: 'string', description: 'sandbox port, 0 for any free port', default: '0' },
  'work-dir': { type: 'string', description: 'where the demo keeps its kubeconfig', default: '.npl-lb' },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema.extend({
  port: z.coerce.number().int().min(0).max(65535),
  'work-dir': z.string().min(1),
});

export const DEMO_HELP = helpText(
  'demo',
  'Runs npl-lb on its embedded sandbox, on loopback only.',
  DEMO_FLAGS,
);

export async function runDemo(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, DEMO_FLAGS, schema);
  if (flags.help) {
    process.stdout.write(DEMO_HELP);
    return 0;
  }
  const log = createLogger({ name: 'demo', format: flags['log-format'], level: flags['log-level'] });
  const kubeconfig = resolve(flags['work-dir'], 'kubeconfig');
  const running = await startSandboxFromFlags(
    {
      host: '127.0.0.1',
      port: flags.port,
      'kubeconfig-out': kubeconfig,
      tls: false,
      help: false,
      'log-format': flags['log-format'],
      'log-level': flags['log-level'],
    },
    log,
  );
  process.stdout.write(
    [
      '',
      `npl-lb sandbox API server: ${running.sandbox.url}`,
      '',
      'Point kubectl at it from another terminal:',
      `  export KUBECONFIG=${kubeconfig}`,
      '  kubectl get namespaces',
      '  (no kubectl installed? `npm run kubectl -- get namespaces` uses the one npl-lb tests with)',
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  await waitForSignal();
  await running.sandbox.close();
  return 0;
}
