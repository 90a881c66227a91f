/**
 * The BackendPolicy kind (npl-lb.io/v1alpha1): how the pools of a Service are balanced and kept
 * sticky, attached as the Gateway API attaches policies (GEP-713): `targetRefs` to Services of the
 * policy's own namespace (a `sectionName` names one port), status per target with the controller's
 * conditions. The CRD (deploy/helm/npl-lb/crds/) checks shapes and values at the API; this schema
 * parses them again at the validation boundary, so an object the CRD did not check (an older CRD,
 * a sandbox without it) is still refused here and never reaches a device.
 */
import { z } from 'zod';
import { condition } from './gateway-objects.ts';
import { objectMetaSchema } from './objects.ts';

export const POLICY_GROUP = 'npl-lb.io';

const sectionName = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a port name (a DNS label)');

export const policyTargetSchema = z
  .object({
    group: z.literal(''),
    kind: z.literal('Service'),
    name: z.string().min(1).max(253),
    sectionName: sectionName.optional(),
  })
  .strict();

/**
 * The members' check, instead of the one the Pods' readiness probe gives (or the TCP connect check
 * without one): an HTTP GET of `path` (2xx or 3xx meaning up), or a TCP connect. The defaults are
 * the kubelet's for a probe (every 10 s, 1 s to answer, up after 1 success, down after 3 failures).
 */
export const healthCheckSchema = z
  .object({
    type: z.enum(['HTTP', 'TCP']),
    path: z.string().min(1).max(1024).optional(),
    intervalSeconds: z.number().int().min(1).max(300).default(10),
    timeoutSeconds: z.number().int().min(1).max(300).default(1),
    healthyThreshold: z.number().int().min(1).max(10).default(1),
    unhealthyThreshold: z.number().int().min(1).max(10).default(3),
    /** Headers the HTTP check sends (a Host among them), checked as a probe's are. */
    headers: z
      .array(z.object({ name: z.string().min(1).max(64), value: z.string().max(256) }).strict())
      .max(8)
      .optional(),
    /** The HTTP check's method (default GET, as a probe's). */
    method: z.enum(['GET', 'HEAD']).optional(),
    /** The statuses meaning up (default 200-399): single codes (`from`) or ranges. */
    expectedStatuses: z
      .array(
        z
          .object({
            from: z.number().int().min(100).max(599),
            to: z.number().int().min(100).max(599).optional(),
          })
          .strict()
          .refine((r) => r.to === undefined || r.from <= r.to, { message: 'from must not exceed to' }),
      )
      .min(1)
      .max(8)
      .optional(),
  })
  .strict()
  .refine((c) => c.type === 'HTTP' || (c.method === undefined && c.expectedStatuses === undefined), {
    message: 'method and expectedStatuses are for an HTTP check',
    path: ['type'],
  })
  .refine((c) => (c.type === 'HTTP') === (c.path !== undefined), {
    message: 'an HTTP check needs a path, a TCP check has none',
    path: ['path'],
  })
  .refine((c) => c.timeoutSeconds <= c.intervalSeconds, {
    message: 'timeoutSeconds must not exceed intervalSeconds',
    path: ['timeoutSeconds'],
  });

/** How a pool spreads connections (a BackendPolicy's, a class's pool defaults). */
export const algorithmSchema = z.enum([
  'RoundRobin',
  'LeastConnections',
  'SourceHash',
  'HeaderHash',
  'CookieHash',
]);
/** The header or cookie a keyed hash reads: a plain name, safe in every vendor's syntax. */
export const hashKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'a header or cookie name: letters, digits, "-" and "_", at most 64');
/** A hashKey goes with a keyed hash, and only with one. */
export const keyedHashRule: [
  (s: { algorithm?: string | undefined; hashKey?: string | undefined }) => boolean,
  { message: string; path: PropertyKey[] },
] = [
  (s) => (s.algorithm === 'HeaderHash' || s.algorithm === 'CookieHash') === (s.hashKey !== undefined),
  {
    message: 'hashKey names the header (HeaderHash) or cookie (CookieHash) to hash, and only then',
    path: ['hashKey'],
  },
];

export const backendPolicySpecSchema = z
  .object({
    targetRefs: z.array(policyTargetSchema).min(1).max(16),
    algorithm: algorithmSchema.optional(),
    /** The header (HeaderHash) or cookie (CookieHash) whose value is hashed. */
    hashKey: hashKeySchema.optional(),
    sessionPersistence: z
      .object({ type: z.enum(['Cookie', 'SourceIP']) })
      .strict()
      .optional(),
    healthCheck: healthCheckSchema.optional(),
    maxConnectionsPerMember: z.number().int().min(1).max(1_000_000).optional(),
    slowStartSeconds: z.number().int().min(1).max(3600).optional(),
    /**
     * How long the load balancer waits on a member: to connect (`connectSeconds`), and for it to
     * answer (`serverSeconds`: inactivity on the server side, or the whole exchange, as the device counts it).
     */
    timeouts: z
      .object({
        connectSeconds: z.number().int().min(1).max(3600).optional(),
        serverSeconds: z.number().int().min(1).max(86_400).optional(),
      })
      .strict()
      .refine((t) => t.connectSeconds !== undefined || t.serverSeconds !== undefined, {
        message: 'timeouts names connectSeconds, serverSeconds or both',
      })
      .optional(),
    /**
     * When connecting to a member fails, how many more times the load balancer tries, each time
     * on another member where it can (0: never). Only failed connections: a request a member has
     * seen is never sent twice.
     */
    retries: z
      .object({ attempts: z.number().int().min(0).max(5) })
      .strict()
      .optional(),
  })
  .strict()
  .refine(...keyedHashRule);

const ancestorStatus = z
  .object({
    ancestorRef: z.record(z.string(), z.unknown()),
    controllerName: z.string(),
    conditions: z.array(condition).default([]),
  })
  .loose();

/**
 * A BackendPolicy as the cache keeps it: the spec as it came (checked per field by
 * `backendPolicySpecSchema` when it is resolved, so a bad one still gets a status saying why).
 */
export const backendPolicySchema = z
  .object({
    metadata: objectMetaSchema.extend({ generation: z.number().int().default(0) }),
    spec: z.record(z.string(), z.unknown()).default({}),
    status: z
      .object({ ancestors: z.array(ancestorStatus).default([]) })
      .loose()
      .default({ ancestors: [] }),
  })
  .loose();

export type BackendPolicy = z.infer<typeof backendPolicySchema>;
export type BackendPolicySpec = z.infer<typeof backendPolicySpecSchema>;
export type PolicyTarget = z.infer<typeof policyTargetSchema>;
