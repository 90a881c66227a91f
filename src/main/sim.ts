/**
 * `npl-lb sim <kind>`: load-balancer simulators for local use and tests (BIG-IP with AS3 today).
 */
import { z } from 'zod';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { DataplaneSimulator } from '../../sim/haproxy-dataplane/simulator.ts';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { createLogger } from '../runtime/logger.ts';
import { selfSignedCertificate } from '../runtime/tls.ts';
import { waitForSignal } from './sandbox.ts';
import { SIM_KINDS } from './sim-kinds.ts';

export const BIGIP_FLAGS = {
  host: { type: 'string', description: 'address to listen on', default: '127.0.0.1' },
  port: { type: 'string', description: 'port to listen on, 0 for any free port', default: '0' },
  tls: { type: 'boolean', description: 'serve HTTPS with a generated self-signed certificate' },
  username: { type: 'string', description: 'the user that may log in', default: 'admin' },
  password: { type: 'string', description: 'its password', default: 'admin' },
  'token-lifetime': { type: 'string', description: 'seconds a login token lives', default: '1200' },
  'latency-ms': { type: 'string', description: 'time each declaration takes to deploy', default: '0' },
  'async-threshold-ms': {
    type: 'string',
    description: 'declarations slower than this answer 202 with a task to poll',
    default: '45000',
  },
  'as3-version': { type: 'string', description: 'the AS3 version reported', default: '3.56.0' },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const bigipSchema = commonSchema.extend({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  tls: z.boolean().default(false),
  username: z.string().min(1),
  password: z.string().min(1),
  'token-lifetime': z.coerce.number().int().positive(),
  'latency-ms': z.coerce.number().int().min(0),
  'async-threshold-ms': z.coerce.number().int().min(0),
  'as3-version': z.string().regex(/^\d+\.\d+\.\d+$/, 'must be like 3.56.0'),
});

export const AVI_FLAGS = {
  host: { type: 'string', description: 'address to listen on', default: '127.0.0.1' },
  port: { type: 'string', description: 'port to listen on, 0 for any free port', default: '0' },
  tls: { type: 'boolean', description: 'serve HTTPS with a generated self-signed certificate' },
  username: { type: 'string', description: 'the user that may log in', default: 'admin' },
  password: { type: 'string', description: 'its password', default: 'admin' },
  'controller-version': { type: 'string', description: 'the version reported at login', default: '22.1.3' },
  'latency-ms': {
    type: 'string',
    description: 'time every API call takes, its own work included',
    default: '0',
  },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const aviSchema = commonSchema.extend({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  tls: z.boolean().default(false),
  username: z.string().min(1),
  password: z.string().min(1),
  'controller-version': z.string().regex(/^\d+\.\d+\.\d+$/, 'must be like 22.1.3'),
  'latency-ms': z.coerce.number().int().min(0),
});

export const DATAPLANE_FLAGS = {
  host: { type: 'string', description: 'address to listen on', default: '127.0.0.1' },
  port: { type: 'string', description: 'port to listen on, 0 for any free port', default: '0' },
  'haproxy-bin': { type: 'string', description: 'the haproxy binary to run', default: 'haproxy' },
  'work-dir': { type: 'string', description: 'directory for haproxy.cfg, its sockets and state (created)' },
  username: { type: 'string', description: 'the basic-auth user', default: 'admin' },
  password: { type: 'string', description: 'its password', default: 'admin' },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const dataplaneSchema = commonSchema.extend({
  host: z.string().min(1),
  port: z.coerce.number().int().min(0).max(65535),
  'haproxy-bin': z.string().min(1),
  'work-dir': z.string({ message: '--work-dir is required' }).min(1, '--work-dir is required'),
  username: z.string().min(1),
  password: z.string().min(1),
});

export const SIM_HELP = `Usage: npl-lb sim <kind> [flags]

Load-balancer simulators, strict where the real devices are. Kinds: ${SIM_KINDS.join(', ')}.

${helpText('sim avi', 'Avi Controller API: sessions and CSRF, tenants, objects held to the Avi field model, references, paging.', AVI_FLAGS)}
${helpText('sim dataplane', 'HAProxy Data Plane API (v2 under /v2, v3 under /v3) in front of a real HAProxy in master-worker mode: versions, transactions, runtime changes or reloads.', DATAPLANE_FLAGS)}
${helpText('sim bigip', 'BIG-IP iControl REST with AS3: token login, declarations validated against the AS3 schema, tasks, a read-only pool view.', BIGIP_FLAGS)}`;

export async function runSim(argv: string[]): Promise<number> {
  const [kind, ...rest] = argv;
  if (kind === undefined || kind === '--help' || kind === '-h') {
    process.stdout.write(SIM_HELP);
    return kind === undefined ? 2 : 0;
  }
  if (kind === 'avi') return runAvi(rest);
  if (kind === 'dataplane') return runDataplane(rest);
  if (kind !== 'bigip') {
    throw new NplError(
      ErrorCodes.FLAG_INVALID,
      `unknown simulator "${kind}" (known: ${SIM_KINDS.join(', ')})`,
    );
  }
  const flags = parseFlags(rest, BIGIP_FLAGS, bigipSchema);
  if (flags.help) {
    process.stdout.write(SIM_HELP);
    return 0;
  }
  const log = createLogger({ name: 'sim-bigip', format: flags['log-format'], level: flags['log-level'] });
  const tls = flags.tls ? await selfSignedCertificate(flags.host) : undefined;
  const sim = new BigIpSimulator({
    users: { [flags.username]: flags.password },
    tokenLifetimeSec: flags['token-lifetime'],
    latencyMs: flags['latency-ms'],
    asyncThresholdMs: flags['async-threshold-ms'],
    as3Version: flags['as3-version'],
    ...(tls ? { tls } : {}),
  });
  const url = await sim.start(flags.port, flags.host);
  process.stdout.write(`BIG-IP simulator listening on ${url}\n`);
  log.info({ url, as3: flags['as3-version'] }, 'BIG-IP simulator started');
  await waitForSignal();
  await sim.close();
  log.info('BIG-IP simulator stopped');
  return 0;
}

async function runAvi(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, AVI_FLAGS, aviSchema);
  if (flags.help) {
    process.stdout.write(SIM_HELP);
    return 0;
  }
  const log = createLogger({ name: 'sim-avi', format: flags['log-format'], level: flags['log-level'] });
  const tls = flags.tls ? await selfSignedCertificate(flags.host) : undefined;
  const sim = new AviSimulator({
    username: flags.username,
    password: flags.password,
    version: flags['controller-version'],
    ...(tls ? { tls } : {}),
  });
  sim.faults.latencyMs = flags['latency-ms'];
  const url = await sim.start(flags.port, flags.host);
  process.stdout.write(`Avi Controller simulator listening on ${url}\n`);
  log.info({ url }, 'Avi Controller simulator started');
  await waitForSignal();
  await sim.close();
  log.info('Avi Controller simulator stopped');
  return 0;
}

async function runDataplane(argv: string[]): Promise<number> {
  const flags = parseFlags(argv, DATAPLANE_FLAGS, dataplaneSchema);
  if (flags.help) {
    process.stdout.write(SIM_HELP);
    return 0;
  }
  const log = createLogger({ name: 'sim-dataplane', format: flags['log-format'], level: flags['log-level'] });
  const sim = new DataplaneSimulator({
    haproxyBin: flags['haproxy-bin'],
    workDir: flags['work-dir'],
    username: flags.username,
    password: flags.password,
    logger: log,
  });
  try {
    const url = await sim.start(flags.port, flags.host);
    process.stdout.write(
      `Data Plane API simulator listening on ${url} (/v2 and /v3), HAProxy PID ${sim.proc.pid}\n`,
    );
    log.info({ url, workDir: flags['work-dir'] }, 'Data Plane API simulator started');
    await waitForSignal();
  } finally {
    await sim.close();
  }
  log.info('Data Plane API simulator stopped');
  return 0;
}
