/**
 * `npl-lb pools`: what each node serves, from a controller's GET /api/v1/state, as a table or JSON.
 */
import { request } from 'undici';
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { byNode, renderTable, standbyBanner, stateDocumentSchema } from '../views/by-node.ts';

export const POOLS_FLAGS = {
  server: {
    type: 'string',
    description: "the controller's HTTP address (its --http-address, e.g. after kubectl port-forward)",
    default: 'http://127.0.0.1:8080',
  },
  node: { type: 'string', description: 'only the members this node serves' },
  namespace: { type: 'string', description: 'only pools of Services in this namespace' },
  output: { type: 'string', description: 'table or json', default: 'table' },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema.extend({
  server: z.url({ protocol: /^https?$/ }),
  node: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  output: z.enum(['table', 'json']),
});

export const POOLS_HELP = helpText(
  'pools',
  'Pools and members by node, as the controller last applied them (GET /api/v1/state).',
  POOLS_FLAGS,
);

export async function runPools(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  const flags = parseFlags(argv, POOLS_FLAGS, schema);
  if (flags.help) {
    out(POOLS_HELP);
    return 0;
  }
  const url = new URL('/api/v1/state', flags.server);
  let body: unknown;
  try {
    const res = await request(url, { headersTimeout: 10_000, bodyTimeout: 10_000 });
    if (res.statusCode !== 200) {
      await res.body.dump();
      throw new NplError(ErrorCodes.STATE_UNAVAILABLE, `${url} answered ${res.statusCode}`);
    }
    body = await res.body.json();
  } catch (err) {
    if (err instanceof NplError) throw err;
    throw new NplError(
      ErrorCodes.STATE_UNAVAILABLE,
      `cannot read ${url}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const doc = stateDocumentSchema.safeParse(body);
  if (!doc.success) {
    const issue = doc.error.issues[0]!;
    throw new NplError(
      ErrorCodes.STATE_UNAVAILABLE,
      `${url} is not an npl-lb state document (${issue.path.join('.')}: ${issue.message})`,
    );
  }
  const view = byNode(doc.data, { node: flags.node, namespace: flags.namespace });
  const banner = standbyBanner(doc.data.leadership);
  if (flags.output === 'json') out(`${JSON.stringify(view, null, 2)}\n`);
  else out(`${banner ? `${banner}\n` : ''}${renderTable(view)}`);
  return 0;
}
