/**
 * zod schemas for the parts of Kubernetes objects npl-lb reads. Objects from informers are parsed
 * here once; everything past this boundary is typed.
 */
import { z } from 'zod';

const stringMap = z.record(z.string(), z.string());

export const objectMetaSchema = z
  .object({
    name: z.string(),
    namespace: z.string().default(''),
    uid: z.string().default(''),
    resourceVersion: z.string().default(''),
    labels: stringMap.default({}),
    annotations: stringMap.default({}),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
  })
  .loose();

const protocol = z.enum(['TCP', 'UDP', 'SCTP']).default('TCP');

export const containerPortSchema = z
  .object({
    name: z.string().optional(),
    containerPort: z.number().int(),
    protocol,
    hostPort: z.number().int().optional(),
  })
  .loose();

export const podSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        nodeName: z.string().optional(),
        containers: z
          .array(z.object({ name: z.string(), ports: z.array(containerPortSchema).default([]) }).loose())
          .default([]),
      })
      .loose()
      .default({ containers: [] }),
    status: z
      .object({
        phase: z.string().optional(),
        podIP: z.string().optional(),
        podIPs: z.array(z.object({ ip: z.string() }).loose()).optional(),
      })
      .loose()
      .default({}),
  })
  .loose();

export type Pod = z.infer<typeof podSchema>;

export const servicePortSchema = z
  .object({
    name: z.string().optional(),
    port: z.number().int(),
    protocol,
    targetPort: z.union([z.number().int(), z.string()]).optional(),
    nodePort: z.number().int().optional(),
  })
  .loose();

export const serviceSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        type: z.string().default('ClusterIP'),
        selector: stringMap.optional(),
        ports: z.array(servicePortSchema).default([]),
      })
      .loose()
      .default({ type: 'ClusterIP', ports: [] }),
  })
  .loose();

export type Service = z.infer<typeof serviceSchema>;

export const nodeSchema = z
  .object({
    metadata: objectMetaSchema,
    status: z
      .object({
        addresses: z.array(z.object({ type: z.string(), address: z.string() }).loose()).default([]),
      })
      .loose()
      .default({ addresses: [] }),
  })
  .loose();

export type Node = z.infer<typeof nodeSchema>;

export function parseOr<T>(schema: z.ZodType<T>, raw: unknown): T | undefined {
  const r = schema.safeParse(raw);
  return r.success ? r.data : undefined;
}
