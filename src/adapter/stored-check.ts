/**
 * A pool's HTTP check (the model's HttpCheck) as adapters keep it on a device that has no field for
 * it (a configuration comment, a description word, metadata): JSON, read back through
 * this schema; and its BackendPolicy words. What does not read back as a check is none, and the next pass writes it again.
 */
import { z } from 'zod';
import type { BackendTls, HttpCheck, LbAlgorithm, PersistenceType } from '../model/types.ts';
import { readTlsWord, tlsWord } from './ca-bundles.ts';

const httpCheckSchema = z.object({
  type: z.literal('http'),
  path: z.string(),
  intervalSeconds: z.number().int(),
  timeoutSeconds: z.number().int(),
  rise: z.number().int(),
  fall: z.number().int(),
  tls: z.literal(true).optional(),
  headers: z.array(z.object({ name: z.string(), value: z.string() })).optional(),
  method: z.literal('HEAD').optional(),
  expect: z.array(z.object({ from: z.number().int(), to: z.number().int() })).optional(),
});

export const storeCheck = (c: HttpCheck): string => JSON.stringify(c);

/** The check kept as `text`, as a spread (`{}` when absent or unreadable). */
export function readStoredCheck(text: string | undefined): { check?: HttpCheck } {
  if (!text) return {};
  try {
    const r = httpCheckSchema.safeParse(JSON.parse(text));
    return r.success ? { check: r.data } : {};
  } catch {
    return {};
  }
}

const ALGORITHMS: readonly LbAlgorithm[] = [
  'RoundRobin',
  'LeastConnections',
  'SourceHash',
  'HeaderHash',
  'CookieHash',
];
const PERSISTENCE: readonly PersistenceType[] = ['Cookie', 'SourceIP'];

/**
 * A pool's algorithm and persistence as adapters keep them beside the check (`algorithm=`,
 * `persistence=` words, and the members' protocol, `backend=h2c`), as a spread; an unknown word reads as none, and the next pass writes it.
 */
export function storedPolicy(meta: Record<string, string | undefined>): {
  algorithm?: LbAlgorithm;
  hashKey?: string;
  persistence?: PersistenceType;
  maxConnections?: number;
  slowStartSeconds?: number;
  connectTimeoutSeconds?: number;
  serverTimeoutSeconds?: number;
  retries?: number;
  backendProtocol?: 'h2c';
  backendTls?: BackendTls;
} {
  const backendTls = readTlsWord(meta.tls);
  const algorithm = ALGORITHMS.find((a) => a === meta.algorithm);
  const hashKey = meta.hash && /^[A-Za-z0-9_-]{1,64}$/.test(meta.hash) ? meta.hash : undefined;
  const persistence = PERSISTENCE.find((a) => a === meta.persistence);
  const count = (v: string | undefined) => (v && /^[1-9]\d{0,6}$/.test(v) ? Number(v) : undefined);
  const maxConnections = count(meta.maxconn);
  const slowStartSeconds = count(meta.slowstart);
  const connectTimeoutSeconds = count(meta.connect);
  const serverTimeoutSeconds = count(meta.server);
  const retries = meta.retries && /^[0-5]$/.test(meta.retries) ? Number(meta.retries) : undefined;
  return {
    ...(algorithm ? { algorithm } : {}),
    ...(hashKey ? { hashKey } : {}),
    ...(persistence ? { persistence } : {}),
    ...(maxConnections ? { maxConnections } : {}),
    ...(slowStartSeconds ? { slowStartSeconds } : {}),
    ...(connectTimeoutSeconds ? { connectTimeoutSeconds } : {}),
    ...(serverTimeoutSeconds ? { serverTimeoutSeconds } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...(meta.backend === 'h2c' ? { backendProtocol: 'h2c' as const } : {}),
    ...(backendTls ? { backendTls } : {}),
  };
}

/** The words `storedPolicy` reads, for a comment or a description. */
export const policyWords = (p: {
  algorithm?: LbAlgorithm;
  hashKey?: string;
  persistence?: PersistenceType;
  maxConnections?: number;
  slowStartSeconds?: number;
  connectTimeoutSeconds?: number;
  serverTimeoutSeconds?: number;
  retries?: number;
  backendProtocol?: 'h2c';
  backendTls?: BackendTls;
}): string[] => [
  ...(p.algorithm ? [`algorithm=${p.algorithm}`] : []),
  ...(p.hashKey ? [`hash=${p.hashKey}`] : []),
  ...(p.persistence ? [`persistence=${p.persistence}`] : []),
  ...(p.maxConnections ? [`maxconn=${p.maxConnections}`] : []),
  ...(p.slowStartSeconds ? [`slowstart=${p.slowStartSeconds}`] : []),
  ...(p.connectTimeoutSeconds ? [`connect=${p.connectTimeoutSeconds}`] : []),
  ...(p.serverTimeoutSeconds ? [`server=${p.serverTimeoutSeconds}`] : []),
  ...(p.retries !== undefined ? [`retries=${p.retries}`] : []),
  ...(p.backendProtocol ? [`backend=${p.backendProtocol}`] : []),
  ...(p.backendTls ? [`tls=${tlsWord(p.backendTls)}`] : []),
];
