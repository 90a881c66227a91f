/**
 * Posting one AS3 declaration (whole, or per application) and reading the answer: 200/207 with per-tenant results, 422 with
 * the failing paths, 503 busy, 202 followed to its task. The outcome says whether a retry can help.
 */
import { z } from 'zod';
import type { AdapterErrorCode } from '../../src/adapter/errors.ts';
import { type BigIpClient, F5Error, type Reply } from './client.ts';

const resultSchema = z
  .object({
    code: z.number(),
    message: z.string(),
    tenant: z.string().optional(),
    errors: z.array(z.string()).optional(),
  })
  .loose();
const declareReplySchema = z
  .object({
    id: z.string().optional(),
    results: z.array(resultSchema).optional(),
    errors: z.array(z.string()).optional(),
    message: z.string().optional(),
    code: z.number().optional(),
  })
  .loose();

export type DeclareOutcome =
  | { ok: true }
  | { ok: false; code: AdapterErrorCode; message: string; terminal: boolean; invalid?: string[] };

async function followTask(
  client: BigIpClient,
  accepted: unknown,
  pollMs: number,
  timeoutMs: number,
): Promise<Reply> {
  const id = declareReplySchema.safeParse(accepted).data?.id;
  if (!id) throw new F5Error('BadResponse', 'AS3 answered 202 without a task id');
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, pollMs));
    const t = await client.call('GET', `/mgmt/shared/appsvcs/task/${encodeURIComponent(id)}`);
    const res = declareReplySchema.safeParse(t.body).data?.results?.[0];
    // The task's results carry each tenant's code, as a synchronous 200 answer does.
    if (t.status === 200 && res && !(res.code === 0 && /in progress/i.test(res.message))) {
      return { status: 200, body: t.body };
    }
  }
  throw new F5Error('Unavailable', `AS3 task ${id} did not finish in time`);
}

/** Where a declaration goes: the whole-declaration endpoint, or a per-application one (AS3 3.47). */
export interface DeclareRequest {
  method: 'POST' | 'DELETE';
  path: string;
}

export const DECLARE: DeclareRequest = { method: 'POST', path: '/mgmt/shared/appsvcs/declare' };

export async function postDeclaration(
  client: BigIpClient,
  body: unknown,
  /** The tenants the declaration names: the first that did not succeed is the answer. */
  tenants: readonly string[],
  task: { pollMs: number; timeoutMs: number },
  request: DeclareRequest = DECLARE,
): Promise<DeclareOutcome> {
  let r: Reply;
  try {
    r = await client.call(request.method, request.path, body);
    if (r.status === 202) r = await followTask(client, r.body, task.pollMs, task.timeoutMs);
  } catch (err) {
    if (!(err instanceof F5Error)) throw err;
    return {
      ok: false,
      code: err.code === 'Unauthorized' ? 'Unauthorized' : 'Unavailable',
      message: err.message,
      terminal: false,
    };
  }
  const reply = declareReplySchema.safeParse(r.body);
  if (r.status === 503) {
    return { ok: false, code: 'Busy', message: reply.data?.message ?? 'AS3 is busy (503)', terminal: false };
  }
  if (r.status === 422) {
    const errors = reply.data?.errors ?? [];
    return {
      ok: false,
      code: 'Invalid',
      message: `AS3 rejected the declaration: ${errors.join('; ')}`,
      terminal: true,
      invalid: errors,
    };
  }
  if ((r.status === 200 || r.status === 207) && reply.success) {
    const results = reply.data.results ?? [];
    const named = results.filter((x) => x.tenant !== undefined && tenants.includes(x.tenant));
    const ofOurs = named.length > 0 ? named : results.slice(0, 1);
    const mine = ofOurs.find((x) => !(x.code === 200 || x.code === 0)) ?? ofOurs[0];
    if (mine && (mine.code === 200 || mine.code === 0)) return { ok: true };
    if (mine?.code === 422) {
      const errors = mine.errors ?? [mine.message];
      return {
        ok: false,
        code: 'Invalid',
        message: `AS3: ${errors.join('; ')}`,
        terminal: true,
        invalid: errors,
      };
    }
    return {
      ok: false,
      code: 'Failed',
      message: `AS3: ${mine?.message ?? 'no result for our tenants'}`,
      terminal: false,
    };
  }
  return { ok: false, code: 'Unavailable', message: `AS3 answered ${r.status}`, terminal: false };
}
