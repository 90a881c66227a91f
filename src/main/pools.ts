/**
 * `npl-lb pools`: what each node serves, from a controller's GET /api/v1/state, as a table or JSON.
 */
import { hostPort } from '../model/names.ts';
import { request } from 'undici';
import { z } from 'zod';
import { COMMON_FLAGS, commonSchema, type FlagSpecs, helpText, parseFlags } from '../config/flags.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { byNode, columns, renderTable, standbyBanner, stateDocumentSchema } from '../views/by-node.ts';
import { impact, renderImpact } from '../views/impact.ts';
import { virtualServices } from '../views/virtual-services.ts';

export const POOLS_FLAGS = {
  server: {
    type: 'string',
    description: "the controller's HTTP address (its --http-address, e.g. after kubectl port-forward)",
    default: 'http://127.0.0.1:8080',
  },
  node: {
    type: 'string',
    description: 'only the members this node serves (an unknown node lists the known ones)',
  },
  namespace: { type: 'string', description: 'only pools of Services in this namespace' },
  impact: {
    type: 'boolean',
    description: 'what losing the node (--node, else each node) would do to each virtual service',
  },
  failed: { type: 'boolean', description: 'only what failed to apply: virtual services and their members' },
  output: { type: 'string', short: 'o', description: 'table, wide or json', default: 'table' },
  ...COMMON_FLAGS,
} as const satisfies FlagSpecs;

const schema = commonSchema.extend({
  server: z.url({ protocol: /^https?$/ }),
  node: z.string().min(1).optional(),
  namespace: z.string().min(1).optional(),
  impact: z.boolean().default(false),
  failed: z.boolean().default(false),
  output: z.enum(['table', 'wide', 'json']),
});

export const POOLS_HELP = helpText(
  'pools',
  'Pools and members by node as the controller last applied them, with the health the load balancer reports, what failed, and the impact of losing a node (GET /api/v1/state).',
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
  const state = doc.data;
  if (flags.node !== undefined) {
    const nodes = [...new Set(state.pools.flatMap((p) => p.members.map((m) => m.node)))].sort();
    if (!nodes.includes(flags.node)) {
      throw new NplError(
        ErrorCodes.UNKNOWN_NODE,
        `no node ${JSON.stringify(flags.node)} serves any pool; nodes: ${nodes.map((n) => n || '(none)').join(', ') || '(none)'}`,
      );
    }
  }
  const banner = standbyBanner(state.leadership);
  const text = (body: string) => out(`${banner ? `${banner}\n` : ''}${body}`);
  if (flags.impact) {
    const list = impact(state, flags.node);
    if (flags.output === 'json') out(`${JSON.stringify(list, null, 2)}\n`);
    else text(list.map(renderImpact).join('\n'));
    return 0;
  }
  let view = byNode(state, { node: flags.node, namespace: flags.namespace });
  if (flags.failed) {
    const vss = virtualServices(state).filter((v) => v.applyFailed);
    view = view
      .map((n) => ({ ...n, members: n.members.filter((m) => m.lastApply === 'failed') }))
      .filter((n) => n.members.length > 0);
    if (flags.output === 'json') {
      out(`${JSON.stringify({ virtualServices: vss, nodes: view }, null, 2)}\n`);
      return 0;
    }
    const vsTable =
      vss.length === 0
        ? 'no virtual service failed to apply\n'
        : columns(
            ['VIRTUAL SERVICE', 'VIP', 'PROBLEM'],
            vss.map((v) => [v.name, hostPort(v.vip, v.port), v.problem ?? '']),
          );
    text(
      `${vsTable}\n${view.length === 0 ? 'no member failed to apply\n' : renderTable(view, flags.output === 'wide')}`,
    );
    return 0;
  }
  if (flags.output === 'json') out(`${JSON.stringify(view, null, 2)}\n`);
  else text(renderTable(view, flags.output === 'wide'));
  return 0;
}
