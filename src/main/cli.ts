#!/usr/bin/env node
/**
 * The `npl-lb` executable: one binary, one subcommand per role.
 */
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { SIM_KINDS } from './sim-kinds.ts';

type Command = (argv: string[]) => Promise<number>;

// Each subcommand is loaded only when it runs: the sandbox should not carry the agent's dependencies.
const COMMANDS: Record<string, { run: Command; summary: string }> = {
  agent: {
    run: async (argv) => (await import('./agent.ts')).runAgent(argv),
    summary: 'node-side NodePortLocal agent (Antrea-compatible annotations)',
  },
  controller: {
    run: async (argv) => (await import('./controller.ts')).runController(argv),
    summary: 'load-balancer controller (pools from NodePortLocal annotations)',
  },
  sandbox: {
    run: async (argv) => (await import('./sandbox.ts')).runSandbox(argv),
    summary: 'in-memory Kubernetes API server for local use and tests',
  },
  sim: {
    run: async (argv) => (await import('./sim.ts')).runSim(argv),
    summary: `load-balancer simulators (${SIM_KINDS.join(', ')})`,
  },
  pools: {
    run: async (argv) => (await import('./pools.ts')).runPools(argv),
    summary: 'pools and members by node, from a controller (table or JSON)',
  },
  migrate: {
    run: async (argv) => (await import('./migrate.ts')).runMigrate(argv),
    summary: "npl-lb values from another controller's installation (npl-lb migrate --help)",
  },
  demo: {
    run: async (argv) => (await import('./demo.ts')).runDemo(argv),
    summary: 'everything wired together on loopback (what `npm start` runs)',
  },
};

export const USAGE = `Usage: npl-lb <command> [flags]

Commands:
${Object.entries(COMMANDS)
  .map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`)
  .join('\n')}

Run 'npl-lb <command> --help' for the flags of a command, 'npl-lb --version' for the version.
`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === 'version') {
    process.stdout.write(`npl-lb ${(await import('../runtime/version.ts')).version()}\n`);
    return 0;
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return name === undefined ? 2 : 0;
  }
  const cmd = COMMANDS[name];
  if (!cmd) throw new NplError(ErrorCodes.FLAG_INVALID, `unknown command "${name}"; run 'npl-lb --help'`);
  return cmd.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof NplError) {
      process.stderr.write(`npl-lb: ${err.message} [${err.code}]\n`);
      // 2: the user's input is wrong (flags, config); 3: it is past a limit (size, nesting,
      // aliases); 1: the run failed.
      const usage: string[] = [ErrorCodes.FLAG_INVALID, ErrorCodes.CONFIG_INVALID];
      process.exitCode = usage.includes(err.code) ? 2 : err.code === ErrorCodes.INPUT_LIMIT ? 3 : 1;
    } else {
      process.stderr.write(`npl-lb: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
  },
);
